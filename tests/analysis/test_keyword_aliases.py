"""torch's argument parser takes NumPy's keyword names for its own (``torch.cat(ts, axis=-1)``,
``torch.sum(x, axis=0, keepdims=True)``); mint's functions take only torch's names. The conversion writes each alias
under the name the target takes (a mint function: ``dim``/``keepdim``; a classic one: what it takes, ``axis`` for
``ops.cat``) and runs with torch's result in both families."""
from __future__ import annotations

import pytest

from kb.probes.calls import Case
from tests.analysis.executed import FAMILIES, assert_converted_and_matching, convert_and_run

HEAD = "import torch\n\n\n"
CASES = [
    ("cat-axis", "return torch.cat((x, y), axis=-1)"),
    ("sum-axis-keepdims", "return torch.sum(x, axis=0, keepdims=True)"),
    ("stack-axis", "return torch.stack([x, y], axis=1)"),
    ("mean-axis-keepdims", "return torch.mean(x, axis=1, keepdims=True)"),
]


@pytest.fixture(scope="module")
def executed(real_kb, tmp_path_factory):
    return convert_and_run(real_kb, tmp_path_factory, lambda family: [
        Case(id=f"{family}/{cid}", source=HEAD + f"def run(x, y):\n    {body}\n", inputs={"x": [2, 3], "y": [2, 3]})
        for cid, body in CASES])


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("cid, body", CASES, ids=[c[0] for c in CASES])
def test_an_alias_keyword_converts_and_gives_torch_s_result(executed, family, cid, body):
    case = executed[f"{family}/{cid}"]
    mint_calls = [line for line in case.converted.splitlines() if "ms.mint." in line]
    assert not any("axis=" in line or "keepdims=" in line for line in mint_calls), case.converted
    assert_converted_and_matching(case, body)
