"""In-place tensor methods without a CPU kernel in MindSpore 2.10 (fill_, zero_, clamp_, masked_fill_, sigmoid_ ...,
probed in data/probes/defs/kernels_methods.yaml) become their out-of-place form where that means what torch's call
means (kb/analysis/inplace.py).  Converted with ``--device CPU`` in both families and run next to torch
(kb.probes.calls); the form chosen for each kind of receiver is checked on the text."""
from __future__ import annotations

import re

import pytest

from kb.analysis.convert import convert_source
from kb.probes.calls import Case
from tests.analysis.executed import assert_converted_and_matching, convert_and_run

FORWARD = '''import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(3))
        self.scale.data.zero_()
        self.offset = nn.Parameter(torch.zeros(3).fill_(0.25))

    def forward(self, x):
        y = x * 2
        y.clamp_(-0.5, 0.5)
        z = y.clone().masked_fill_(y > 0.2, 0.0)
        x.sigmoid_()
        return y + z + x + self.scale + self.offset


def make():
    return Net()
'''

NO_CPU_KERNEL = r"\.(fill|zero|clamp|masked_fill|sigmoid|tanh|floor|log|sign|erfinv|index_fill|index_add|scatter|" \
                r"masked_scatter)_\("

CASES = [
    ("forward", FORWARD, {"x": [2, 3]}, True),
    ("returned-chain", "import torch\n\n\ndef run(x: torch.Tensor):\n    return x.add_(3.).clamp_(0., 6.).div_(6.)\n",
     {"x": [2, 3]}, False),
    ("slice-zero", "import torch\n\n\ndef run(b: torch.Tensor):\n    b = b.clone()\n    n = b.numel() // 3\n"
     "    b[n:2 * n].zero_()\n    return b\n", {"b": [9]}, False),
    ("fresh-fill", "import torch\n\n\ndef run(x: torch.Tensor):\n    return x + torch.zeros(3).fill_(2.0)\n",
     {"x": [2, 3]}, False),
    ("local-tanh", "import torch\n\n\ndef run(x: torch.Tensor):\n    y = x - 1\n    y.tanh_()\n    return y\n",
     {"x": [2, 3]}, False),
]


@pytest.fixture(scope="module")
def executed(real_kb, tmp_path_factory):
    return convert_and_run(real_kb, tmp_path_factory, lambda family: [
        Case(id=f"{family}/{cid}", source=source, inputs=inputs, layer=layer) for cid, source, inputs, layer in CASES])


@pytest.mark.parametrize("family", ["classic", "mint"])
@pytest.mark.parametrize("cid", [c[0] for c in CASES])
def test_converts_and_matches_torch(executed, family, cid):
    case = executed[f"{family}/{cid}"]
    assert_converted_and_matching(case, cid)
    assert not re.search(NO_CPU_KERNEL, case.converted)  # (add_, div_ have CPU kernels and stay)


def test_each_receiver_gets_the_form_that_keeps_torchs_meaning(classic):
    out = convert_source(classic, FORWARD).text
    assert "y = y.clamp(-0.5, 0.5)" in out  # a local: rebound (gradients flow)
    assert "x = x.sigmoid()" in out  # an argument the function hands on
    assert "z = y.copy().masked_fill(y > 0.2, 0.0)" in out  # a fresh copy: the value alone
    assert "self.scale.assign_value(ms.ops.zeros_like(self.scale))" in out  # held by the cell: written back
    assert "ms.Parameter(ms.ops.full_like(ms.ops.zeros(3), 0.25))" in out


def test_a_loop_variable_is_written_back_and_data_goes(classic):
    source = ("import torch\n\n\ndef clip(params: list[torch.Tensor]):\n    for p in params:\n"
              "        p.data.clamp_(-0.05, 0.05)\n")
    out = convert_source(classic, source).text
    assert "p.assign_value(p.clamp(-0.05, 0.05))" in out  # MindSpore's .data is a copy: writing it does nothing


def test_an_in_place_call_whose_value_is_used_on_a_shared_tensor_is_left_with_the_reason(classic):
    source = "import torch\n\n\ndef run(x: torch.Tensor):\n    y = x.clamp_(0, 1)\n    return y\n"
    result = convert_source(classic, source)
    assert "y = x.clamp_(0, 1)  # msmap:" in result.text  # the marker is short; the per-file list has the reason
    assert any("split it into a rebinding and the use" in left.reason for left in result.left + result.unsure)


def test_where_the_in_place_kernel_exists_nothing_changes(real_kb):
    from kb.analysis import Engine, EngineSettings

    ascend = Engine(real_kb, EngineSettings(device="Ascend"))
    out = convert_source(ascend, "import torch\n\n\ndef run(x: torch.Tensor):\n    x.clamp_(0, 1)\n    return x\n")
    # kept as written, not rewritten out of place (a note may say no probe could prove it on this machine)
    assert "    x.clamp_(0, 1)" in out.text and "x = x.clamp(" not in out.text


def test_the_value_returned_from_an_argument_is_the_out_of_place_value(classic):
    source = "import torch\n\n\ndef act(x: torch.Tensor, inplace: bool = False):\n" \
             "    return x.sigmoid_() if inplace else x.sigmoid()\n"
    assert "return x.sigmoid() if inplace else x.sigmoid()" in convert_source(classic, source).text
