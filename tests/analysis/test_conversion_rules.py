"""The conversion rules added for real model files, each as a fix beside a no-op (bundled KB)."""
from __future__ import annotations

import pytest

from kb.analysis import Engine, EngineSettings
from kb.analysis.convert import convert_source
from kb.analysis.leftovers import unmarked_references
from tests.analysis.roundtrip import converted


@pytest.fixture(scope="module")
def classic(real_kb):
    return Engine(real_kb, EngineSettings())


@pytest.fixture(scope="module")
def mint_ascend(real_kb):
    return Engine(real_kb, EngineSettings(family="mint", device="Ascend"))


def test_device_cpu_keeps_mint_off_ops_without_a_cpu_kernel(mint_cpu, mint_ascend):
    src = "import torch.nn as nn\nc = nn.Conv2d(3, 8, 3)\nr = nn.ReLU()\n"
    on_cpu, on_ascend = converted(mint_cpu, src), converted(mint_ascend, src)
    assert "ms.nn.Conv2d(3, 8, 3, has_bias=True, pad_mode='pad')" in on_cpu  # mint Conv2d: no CPU kernel
    # no probe could run mint's Conv2d here (no CPU kernel): unproven, so classic's proven rewrite on Ascend too
    assert "ms.nn.Conv2d(3, 8, 3, has_bias=True, pad_mode='pad')" in on_ascend and "mint.nn.Conv2d" not in on_ascend
    assert "ms.mint.nn.ReLU()" in on_cpu  # mint ReLU runs on the CPU


def test_isinstance_branch_renames_the_parameters_of_the_tested_layer(classic):
    src = ("import torch.nn as nn\n\nclass N(nn.Module):\n    def init(self):\n"
           "        for m in self.modules():\n            if isinstance(m, nn.BatchNorm2d):\n"
           "                nn.init.constant_(m.weight, 1)\n            elif isinstance(m, nn.Linear):\n"
           "                nn.init.zeros_(m.weight)\n")
    out = converted(classic, src)
    assert "ms_init_(m.gamma, " in out and "ms_init_(m.weight, " in out  # BatchNorm's weight is gamma; Dense keeps weight
    assert "for m in [cell for _, cell in self.cells_and_names()]:" in out


def test_a_name_reassigned_in_the_branch_is_not_renamed(classic):
    src = ("import torch.nn as nn\n\ndef f(m, other):\n    if isinstance(m, nn.BatchNorm2d):\n"
           "        m = other\n        print(m.weight)\n")
    assert "m.weight" in converted(classic, src)


@pytest.mark.parametrize("src, fixed, kept", [
    pytest.param("import torch.nn as nn\n\nclass A(nn.Module):\n    def forward(self, x):\n        return x.size(0)\n",
                 "return x.shape[0]", None, id="forward-input"),
    pytest.param("import torch.nn as nn\n\nclass A(nn.Module):\n    def forward(self, x):\n"
                 "        y = self.fc(x)\n        return y.softmax(dim=-1)\n", "y.softmax(axis=-1)", None,
                 id="sub-layer-result"),
    pytest.param("import torch.nn as nn\n\nclass A(nn.Module):\n    def forward(self, x):\n"
                 "        n = len(x)\n        return n.softmax(dim=-1)\n", None, "n.softmax(dim=-1)",
                 id="builtin-result-not-a-tensor"),
    pytest.param("import torch\n\ndef f(q):\n    return q.transpose(0, 1)\n", None, "q.transpose(0, 1)",
                 id="unknown-receiver"),
    # dim= is torch's spelling only (NumPy and Python say axis): the receiver is a torch tensor
    pytest.param("import torch\n\ndef f(q):\n    return q.softmax(dim=-1)\n", "q.softmax(axis=-1)", None,
                 id="unknown-receiver-given-dim"),
    pytest.param("import torch\n\ndef f(q):\n    return q.size(1)\n", "q.shape[1]", None,
                 id="size-on-any-receiver"),  # right for a MindSpore tensor and a NumPy array alike
])
def test_tensor_methods_only_on_known_tensors(classic, src, fixed, kept):
    out = converted(classic, src)
    if fixed:
        assert fixed in out
    if kept:
        assert f"else {kept})" in out  # a tensor gets the rewrite, tested at run time (guarded.py)


SILU_TEST = "import torch.nn as nn\nif hasattr(nn, 'SiLU'):\n    act = nn.SiLU()\nelse:\n    act = None\n"


@pytest.mark.parametrize("family", ["classic", "mint"])
def test_feature_test_on_an_attribute_that_converts_is_true(request, family):
    """hasattr(nn, 'SiLU'): mindspore.nn.SiLU (mint: mindspore.mint.nn.SiLU) exists, so the converted
    code keeps the branch that uses it."""
    out = converted(request.getfixturevalue(family), SILU_TEST)
    assert "if True:" in out and ("ms.nn.SiLU()" if family == "classic" else "ms.mint.nn.SiLU()") in out
    assert "torch" not in out


@pytest.mark.parametrize("src, answer", [
    pytest.param("import torch.nn as nn\nok = 'SiLU' in dir(nn)\n", "ok = True", id="in-dir"),
    pytest.param("import torch.nn as nn\nok = 'SiLU' not in dir(nn)\n", "ok = False", id="not-in-dir"),
    pytest.param("import torch.nn as nn\nA = getattr(nn, 'SiLU', None)\n", "A = ms.nn.SiLU", id="getattr"),
    pytest.param("import torch\nok = hasattr(torch, 'no_such_feature')\n", "ok = False", id="unknown-name"),
    pytest.param("import torch.nn as nn\nA = getattr(nn, 'NoSuchLayer', nn.ReLU)\n", "A = ms_ReLU",
                 id="getattr-absent-default"),  # (the default, a class passed as a value, through its adapter)
])
def test_feature_test_answers_for_the_converted_code(classic, src, answer):
    out = converted(classic, src)
    # no torch left (an adapter's docstring may name the torch layer whose parameters it takes)
    assert answer in out and "import torch" not in out and not unmarked_references(out.encode()), out


def test_feature_test_with_a_computed_name_and_no_lookup_table_is_false(classic):
    out = converted(classic, "import torch.optim as optim\n\ndef has(name):\n    return hasattr(optim, name)\n")
    assert "return False" in out


def test_feature_test_with_a_computed_name_asks_the_run_time_lookup_table(classic):
    out = converted(classic, "import torch.nn as nn\n\ndef has(name):\n    return hasattr(nn, name)\n")
    assert 'return name in ("ReLU", ' in out and '"Conv2d"' in out and "hasattr" not in out, out


def test_feature_test_fix_names_the_api_it_found(classic):
    uses = [u for u in classic.analyze(SILU_TEST).uses if u.torch_name == "hasattr(<torch module>, name)"]
    assert len(uses) == 1 and "torch.nn.SiLU converts to mindspore.nn.SiLU" in uses[0].title
    assert "absent" not in uses[0].title


def test_feature_test_on_something_else_is_left_alone(classic):
    assert converted(classic, "import os\nok = hasattr(os, 'sep')\n") == "import os\nok = hasattr(os, 'sep')\n"
    src = "import torch\n\ndef f(m):\n    return hasattr(m, 'weight')\n"  # an object, not a torch module
    assert "hasattr(m, 'weight')" in converted(classic, src)


def test_add_module_goes_through_the_helper_that_names_and_runs_the_cell(classic):
    src = ("import torch.nn as nn\n\nclass S(nn.Sequential):\n    def __init__(self):\n        super().__init__()\n"
           "        self.add_module('a', nn.ReLU())\n")
    out = converted(classic, src)
    assert "ms_add_module(self, 'a', ms.nn.ReLU())" in out and "# msmap:" not in out
    assert out.count("def ms_add_module(") == 1 and "parent.cell_list = list(parent.cells())" in out


def test_helper_is_written_once_before_its_first_use(classic):
    src = ("import torch.nn.functional as F\n\ndef a(q, k, v):\n    return F.scaled_dot_product_attention(q, k, v)\n\n\n"
           "def b(q, k, v):\n    return F.scaled_dot_product_attention(q, k, v, is_causal=True)\n")
    out = converted(classic, src)
    assert out.count("def ms_scaled_dot_product_attention(") == 1
    assert out.index("def ms_scaled_dot_product_attention(") < out.index("def a(")


def test_module_dict_becomes_a_cell_that_may_hold_cell_lists(classic):
    out = converted(classic, "import torch.nn as nn\nd = nn.ModuleDict(dict(h=nn.ModuleList([nn.ReLU()])))\n")
    assert "class ms_ModuleDict(ms.nn.Cell):" in out
    assert "d = ms_ModuleDict(dict(h=ms_ModuleList([ms.nn.ReLU()])))" in out


def test_summary_counts_a_file_with_a_marker_as_not_complete(classic):
    done = convert_source(classic, "import torch.nn as nn\nr = nn.ReLU()\n")
    marked = convert_source(classic, "import torch\ndef f(q):\n    return q().transpose(0, 1)\n")
    assert not done.left and not done.unsure and done.unsure == []
    assert marked.unsure and marked.unsure[0].torch_name == "torch.Tensor.transpose"
