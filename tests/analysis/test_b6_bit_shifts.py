"""``>>`` and ``<<`` (held-out batch 6's squeezeformer ``input_lengths >> 2``): MindSpore's Tensor refuses both for
every dtype, so each becomes ``ms_right_shift``/``ms_left_shift`` (rules/bit_shifts.py): the op on tensors, Python's
shift on ints. ``&``, ``|`` and ``^`` of tensors run as torch's as written. Converted with ``msmap convert
--device CPU`` in both families and run next to torch on generated integers."""
from __future__ import annotations

import pytest

from kb.analysis.convert import convert_source
from tests.analysis.b6_converted import assert_runs_as_torch, cases_fixture
from tests.analysis.executed import FAMILIES

SHIFTS = '''import torch


def run(n, m, k: int = 3):
    lengths = (n >> 2) + (n << 1) + (m >> (k - 2))
    small = n.int()
    small >>= 1
    masks = (n & m) + (n | 3) + (n ^ m)
    bytes_ = n.to(torch.uint8) << 2
    return lengths, small, masks, bytes_, (1 << m) + (k << 2), torch.ones(2) * (16 >> k)
'''

INTS = {"shape": [3, 4], "dtype": "int64", "range": [0, 60]}
SMALL = {"shape": [3, 4], "dtype": "int64", "range": [0, 5]}


executed = cases_fixture({"shifts": {"source": SHIFTS, "inputs": {"n": INTS, "m": SMALL}}})


@pytest.mark.parametrize("family", FAMILIES)
def test_shifts_convert_and_match_torch(executed, family):
    """Values and dtypes (int64, int32, uint8) as torch's, tensors and Python ints alike."""
    assert_runs_as_torch(executed[f"{family}/shifts"], "ms_right_shift", "ms_left_shift")


@pytest.fixture(params=FAMILIES)
def engine(request):
    return request.getfixturevalue(request.param)


def test_what_stays(engine):
    """Two int literals, text in strings and the bitwise and/or/xor MindSpore runs stay as written; a second
    convert of converted code changes nothing (the helpers' own shifts are Python's)."""
    source = "import torch\n\n\ndef f(x):\n    s = 'x >> 2'\n    return 8 >> 1, x & 3, x | x, x ^ 1, s\n"
    text = convert_source(engine, source).source.decode()
    assert "return 8 >> 1, x & 3, x | x, x ^ 1, s" in text and "s = 'x >> 2'" in text
    once = convert_source(engine, "import torch\n\n\ndef f(x):\n    return torch.abs(x) >> 1\n").source
    assert convert_source(engine, once).source == once
