"""An in-place method whose value is assigned (held-out batch 6, fast-gat's ``y = x.masked_fill_(~m, -inf)``:
MindSpore 2.10 has no CPU kernel InplaceMaskedFillScalar): where the receiver is a name its function binds, the
statement binds both names to the out-of-place result (``y = x = x.masked_fill(~m, -inf)``), as torch leaves both
holding the changed tensor; on a receiver not typed, the same behind a statement-level runtime test, only where no
other name may hold the tensor (inplace.py, guarded.py).  Run next to torch in both families."""
from __future__ import annotations

import re

import pytest

from kb.probes.calls import Case
from tests.analysis.executed import FAMILIES, assert_converted_and_matching, convert_and_run
from tests.analysis.roundtrip import converted

HEAD = "import torch\nfrom torch import nn\n\n\n"
UNKNOWN = "def run(x, y):\n    return helper((x, y))\n"  # the pair hides that x and y are tensors

# (id, source, what the converted code holds, whether a runtime test is left)
CASES = [
    ("value-of-a-layer-result", '''class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.LeakyReLU(0.2)

    def forward(self, x, y):
        a = self.act(x - y)
        b = a.masked_fill_(y > x, float("-inf"))
        return b.exp(), a * 2


def run(x, y):
    return Head()(x, y)
''', "b = a = a.masked_fill(", False),
    ("value-of-several-in-place-methods", '''def run(x: torch.Tensor, y: torch.Tensor):
    a = x * 3
    b = a.clamp_(-1.0, 1.0)
    c = y.exp()
    d = c.masked_fill_(c > 2.0, 0.5)
    e = x.abs()
    f = e.sigmoid_()
    return a, b, c, d, e, f
''', "b = a = a.clamp(", False),
    ("value-on-a-receiver-not-typed", '''def helper(pair):
    a, b = pair
    c = a.clone()
    d = c.masked_fill_(b > 0, 0.0)
    return c + 1, d


''' + UNKNOWN, "else: d = c.masked_fill_(b > 0, 0.0)", True),
]


@pytest.fixture(scope="module")
def executed(real_kb, tmp_path_factory):
    return convert_and_run(real_kb, tmp_path_factory, lambda family: [
        Case(id=f"{family}/{cid}", source=HEAD + text, inputs={"x": [3, 4], "y": [3, 4]})
        for cid, text, _, _ in CASES])


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("cid, text, holds, tested", CASES, ids=[c[0] for c in CASES])
def test_the_converted_code_gives_torch_s_results(executed, family, cid, text, holds, tested):
    case = executed[f"{family}/{cid}"]
    assert holds in case.converted, case.converted
    assert ("isinstance(" in case.converted) == tested, case.converted
    assert tested or not re.search(r"\.[a-z]+_\(", case.converted), case.converted  # no in-place call left to run
    assert_converted_and_matching(case, cid)


def test_converting_again_changes_nothing(classic, mint):
    for engine in (classic, mint):
        for _, text, _, _ in CASES:
            once = converted(engine, HEAD + text)
            assert "# msmap:" not in once, once
            assert converted(engine, once) == once


@pytest.mark.parametrize("body", [
    "y = s.masked_fill_(s > 0, 0.0)\n    return y",  # a parameter: the caller's tensor changes in torch
    "u = s.view(-1)\n    y = u.masked_fill_(u > 0, 0.0)\n    return y",  # a view of it
    "u = s.clone()\n    y: object = u.masked_fill_(u > 0, 0.0)\n    return y",  # an annotated assignment
    "u = s.clone()\n    y = z = u.masked_fill_(u > 0, 0.0)\n    return y, z",  # a chain of targets
    "y = s.clone().view(-1).masked_fill_(s.view(-1) > 0, 0.0)\n    return y",  # a view as the receiver
])
def test_a_value_others_may_see_keeps_its_marker(classic, body):
    out = converted(classic, HEAD + f"def helper(s):\n    {body}\n\n\ndef run(x, y):\n    return helper(x)\n")
    assert "# msmap:" in out and "masked_fill_(" in out, out
