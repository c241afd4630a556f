"""Held-out batch 6, cause 4: ``torch.ops.<ns>.<op>`` (s5-pytorch's jax_compat.py: ``torch.ops.aten.slice``). An ATen
operator with a public torch function is called as that function and converts by its record
(kb/analysis/rules/aten_ops.py), run next to torch in both families; one without (``aten.slice``) and another
namespace keep a marker."""
from __future__ import annotations

import pytest

from tests.analysis.executed import FAMILIES, assert_converted_and_matching, one_case_per_family
from tests.analysis.roundtrip import converted

ATEN = '''import torch


def run(x, y):
    return (torch.ops.aten.mul.Tensor(x, y), torch.ops.aten.sum.dim_IntList(x, [1]), torch.ops.aten.relu.default(x),
            torch.ops.aten.sub(x, y), torch.ops.aten.exp(torch.ops.aten.neg(y)))
'''


@pytest.fixture(scope="module")
def executed(real_kb, tmp_path_factory):
    return one_case_per_family(real_kb, tmp_path_factory, "aten-ops", source=ATEN, inputs={"x": [3, 4], "y": [3, 4]})


@pytest.mark.parametrize("family", FAMILIES)
def test_aten_ops_with_public_functions_convert(executed, family):
    case = executed[f"{family}/aten-ops"]
    assert_converted_and_matching(case, "aten operators")
    assert "ops.aten" not in case.converted


@pytest.mark.parametrize("family", FAMILIES)
def test_aten_ops_without_a_public_function_keep_a_marker(request, family):
    text = converted(request.getfixturevalue(family), "import torch\n\n\ndef run(x):\n"
                     "    a = torch.ops.aten.slice(x, 1, 0, -1, 2)\n    b = torch.ops.my_lib.op(x)\n"
                     "    c = torch.ops.aten.mul.out(x, x, out=x)\n    return a, b, c\n")
    lines = text[text.index("def run("):].splitlines()
    assert "torch.ops.aten.slice(x, 1, 0, -1, 2)  # msmap: aten.slice: an ATen operator with no public" \
        in next(line for line in lines if "slice" in line)
    assert "# msmap: no MindSpore equivalent" in next(line for line in lines if "my_lib" in line)
    assert "# msmap: aten.mul.out: not the public torch.mul" in next(line for line in lines if "mul" in line)
