"""Held-out batch 6, cause 5: complex numbers (s5-pytorch init.py's ``C_[..., 0] + 1j * C_[..., 1]``, lru-pytorch's
``torch.complex(re, im)``). ``torch.complex`` becomes ``ms.ops.Complex()(re, im)`` (data/curated/complex.yaml,
proven by call forms), a product or quotient with a complex literal becomes ``ms_complex_mul``/``ms_complex_div``
(kb/analysis/rules/complex_literals.py: MindSpore's CPU Mul takes no Python complex); ``.real``/``.imag``,
``exp``, ``view_as_real`` and ``polar`` keep their mappings. Converted in both families and run next to torch."""
from __future__ import annotations

import pytest

from tests.analysis.executed import FAMILIES, assert_converted_and_matching, one_case_per_family
from tests.analysis.roundtrip import converted

COMPLEX = '''import torch


def init(c):
    return c[..., 0] + 1j * c[..., 1]


def run(x, y):
    z = torch.complex(x, y)
    w = init(torch.stack([x, y], -1))
    v = z * -2j / (0.5j)
    wide = x.double() * 1j
    polar = torch.polar(x.abs(), y)
    return (torch.view_as_real(w * z), torch.view_as_real(v), (w - z).real, torch.exp(w).imag,
            torch.view_as_real(wide), torch.view_as_real(polar + z), 2 * 3j * x.sum().item())
'''


@pytest.fixture(scope="module")
def executed(real_kb, tmp_path_factory):
    return one_case_per_family(real_kb, tmp_path_factory, "complex", source=COMPLEX, inputs={"x": [3, 4], "y": [3, 4]})


@pytest.mark.parametrize("family", FAMILIES)
def test_complex_values_match_torch(executed, family):
    case = executed[f"{family}/complex"]
    assert_converted_and_matching(case, "complex numbers")
    assert "ms_complex_mul(1j, c[..., 1])" in case.converted and "ms.ops.Complex()(x, y)" in case.converted


@pytest.mark.parametrize("family", FAMILIES)
def test_plain_numbers_stay(request, family):
    """Two numbers (``2 * 3j``) and an addition (MindSpore's Add takes a Python complex) are left as written."""
    text = converted(request.getfixturevalue(family), "import torch\n\n\ndef run(x):\n"
                     "    return torch.tanh(x) + 1j, 2 * 3j, -1.5j * (2)\n")
    assert text.endswith(f"    return ms.{'mint' if family == 'mint' else 'ops'}.tanh(x) + 1j, 2 * 3j, -1.5j * (2)\n")
