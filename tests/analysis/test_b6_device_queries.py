"""Held-out batch 6, cause 1: questions about accelerators asked of a CPU target (kb/analysis/rules/device_queries.py,
kb/analysis/branches.py). The query becomes torch's answer on a machine without the accelerator, and the branch
that answer rules out drops with its markers (vn-transformer's ``if not torch.cuda.is_available() or not flash:
return`` then ``torch.cuda.get_device_properties``); converted in both families and run next to torch."""
from __future__ import annotations

import pytest

from kb.analysis.engine import Engine
from kb.analysis.rules.device_queries import ANSWERS
from kb.analysis.settings import EngineSettings
from tests.analysis.executed import FAMILIES, assert_converted_and_matching, one_case_per_family
from tests.analysis.roundtrip import converted

QUERIES = '''import torch
import torch.nn as nn

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
GPUS = torch.cuda.device_count()


def capability(flash):
    if not torch.cuda.is_available() or not flash:
        return (0, 0)
    props = torch.cuda.get_device_properties(torch.device("cuda"))
    return (props.major, props.minor)


def backend():
    if torch.cuda.is_available():
        return 1 + torch.cuda.current_device()
    elif torch.backends.mps.is_available():
        return 2
    else:
        scale = 3
        return scale


def many():
    if torch.cuda.is_available() and torch.cuda.device_count() > 1:
        return torch.cuda.get_device_capability()[0]
    return 7


class Attend(nn.Module):
    def __init__(self, flash=True):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.cuda_config = None
        if not torch.cuda.is_available() or not flash:
            return
        properties = torch.cuda.get_device_properties(torch.device("cuda"))
        self.cuda_config = properties.major

    def forward(self, x):
        return self.proj(x) * (2.0 if self.cuda_config is None else 3.0)


def run(x):
    major, minor = capability(True)
    scale = 2.0 if torch.cuda.device_count() > 1 else 0.5
    layer = Attend()
    y = layer(x.to(DEVICE)) * 0 + x
    return y * scale + major + 10 * backend() + 100 * GPUS + 1000 * int(torch.cuda.is_available()) + many()
'''


def test_answers_are_torch_s_without_the_accelerator():
    """Each folded answer is what torch itself answers here (torch's CPU build: no CUDA, MPS or XPU)."""
    import torch

    for name, answer in ANSWERS.items():
        function = torch
        for part in name.split(".")[1:]:
            function = getattr(function, part)
        assert function() == answer and type(function()) is type(answer), name


@pytest.fixture(scope="module")
def executed(real_kb, tmp_path_factory):
    return one_case_per_family(real_kb, tmp_path_factory, "device-queries", source=QUERIES, inputs={"x": [2, 4]})


@pytest.mark.parametrize("family", FAMILIES)
def test_queries_fold_and_dead_branches_drop(executed, family):
    case = executed[f"{family}/device-queries"]
    assert_converted_and_matching(case, "device queries")
    code = case.converted[case.converted.index("\nDEVICE = "):]  # (the helpers above it name devices)
    for gone in ("torch.", "get_device_properties", "current_device", "mps", "if False"):
        assert gone not in code, (gone, code)


@pytest.mark.parametrize("family", FAMILIES)
def test_branch_shapes(request, family):
    engine = request.getfixturevalue(family)
    text = converted(engine, "import torch\n\ndef f(flag):\n"
                             "    if f(flag) and torch.cuda.is_available():\n        x = torch.cuda.current_device()\n"
                             "    if torch.cuda.is_available() or flag:\n        return 1\n"
                             "    if torch.backends.mps.is_available():\n        return 2\n    else:\n        y = 3\n"
                             "        return y\n")
    # a test with an effect keeps it (only the body goes); an undecided one keeps the branch; an else replaces the if
    assert "    if f(flag) and False:\n        pass\n" in text
    assert "    if False or flag:\n        return 1\n" in text
    assert text.endswith("    y = 3\n    return y\n") and "mps" not in text


@pytest.fixture(scope="module")
def ascend(real_kb):
    return Engine(real_kb, EngineSettings(device="Ascend"))


def test_ascend_keeps_the_query(ascend):
    """On Ascend the answer depends on the machine: the query keeps its mapping and the branch stays."""
    text = converted(ascend, "import torch\n\ndef f():\n    if not torch.cuda.is_available():\n        return 0\n"
                             "    return torch.cuda.get_device_properties(0).major\n")
    assert "is_available()" in text and "get_device_properties" in text
