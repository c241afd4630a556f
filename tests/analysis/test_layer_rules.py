"""Rules for torchvision-style model files: layer attributes, add_module, Sequential subclasses,
in-place initialisation, torch._assert, checkpoint and TorchScript overloads (bundled KB).
Each rule has its fix beside a no-op neighbour."""
from __future__ import annotations

import subprocess
import sys


from tests.analysis.roundtrip import converted


INIT_LOOP = """import math
from torch import nn


def init(model):
    for m in model.modules():
        if isinstance(m, nn.Linear):
            r = 1.0 / math.sqrt(m.out_features)
        elif isinstance(m, nn.Conv2d):
            g = m.groups
    return m.out_features
"""


def test_layer_attributes_follow_the_family_inside_an_isinstance_branch(classic, mint):
    out = converted(classic, INIT_LOOP)
    assert "math.sqrt(m.out_channels)" in out and "g = m.group\n" in out
    assert "return m.out_features" in out  # outside the branch the type is unknown: untouched
    assert "math.sqrt(m.out_features)" in converted(mint, INIT_LOOP)  # mint Linear keeps out_features


def test_uniform_init_with_two_bounds_becomes_a_shifted_symmetric_initializer(classic, mint):
    src = "from torch import nn\n\ndef init(w, r):\n    nn.init.uniform_(w, -r, 2 * r)\n    nn.init.xavier_uniform_(w)\n"
    for engine in (classic, mint):
        out = converted(engine, src)
        assert "ms_init_(w, ms.common.initializer.Uniform(scale=(2 * r - (-r)) / 2), (-r + 2 * r) / 2)" in out
        assert "XavierUniform(gain=1.0)" in out and "# msmap:" not in out


def test_add_module_on_a_layer_attribute_and_on_a_local_sequential(classic):
    src = ("from torch import nn\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
           "        self.features = nn.Sequential()\n        self.features.add_module('a', nn.ReLU())\n"
           "        seq = nn.Sequential()\n        seq.add_module('b', nn.ReLU())\n"
           "        self.registry.add_module('c', 1)\n")
    out = converted(classic, src)
    assert "ms_add_module(self.features, 'a', ms.nn.ReLU())" in out
    assert "ms_add_module(seq, 'b', ms.nn.ReLU())" in out
    assert "self.registry.add_module('c', 1)" in out  # not known to be a layer: left alone
    assert out.count("def ms_add_module(") == 1


def test_layers_set_as_attributes_of_a_sequential_subclass_are_added_in_order(classic):
    src = ("from torch import nn\n\nclass T(nn.Sequential):\n    def __init__(self, c):\n        super().__init__()\n"
           "        self.norm = nn.BatchNorm2d(c)\n        self.relu = nn.ReLU(inplace=True)\n        self.scale = 2\n\n\n"
           "class P(nn.Module):\n    def __init__(self, c):\n        super().__init__()\n        self.norm = nn.BatchNorm2d(c)\n")
    out = converted(classic, src)
    assert 'ms_add_module(self, "norm", ms.nn.BatchNorm2d(c))' in out
    assert 'ms_add_module(self, "relu", ms.nn.ReLU())' in out
    assert "self.scale = 2" in out  # not a layer
    assert "        self.norm = ms.nn.BatchNorm2d(c)\n" in out  # a plain Cell registers attributes itself


def test_torch_assert_as_a_statement_becomes_assert(classic):
    src = "import torch\n\ndef f(x, n):\n    torch._assert(n % 2 == 0, 'odd')\n    y = torch._assert(n > 0, 'neg')\n    return y\n"
    out = converted(classic, src)
    assert "    assert n % 2 == 0, 'odd'\n" in out
    assert "y = torch._assert(n > 0, 'neg')  # msmap: the rewrite is a statement" in out


def test_in_place_normal_on_a_new_tensor_runs_on_the_cpu(mint):
    src = ("import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
           "        self.pos = nn.Parameter(torch.empty(1, n, 8).normal_(std=0.02))\n")
    out = converted(mint, src)
    assert "ms_init_(ms.mint.empty(1, n, 8), ms.common.initializer.Normal(sigma=0.02, mean=0))" in out
    assert ".normal_(" not in out and "def ms_init_(" in out


def test_checkpoint_becomes_recompute_and_overload_decorators_go(classic):
    src = ("import torch\nimport torch.utils.checkpoint as cp\nfrom torch import nn\n\n\nclass L(nn.Module):\n"
           "    def run(self, fn, xs):\n        return cp.checkpoint(fn, *xs, use_reentrant=False)\n\n"
           "    @torch.jit._overload_method\n    def forward(self, x):\n        pass\n\n"
           "    @staticmethod\n    def other(x):\n        return x\n\n"
           "    def forward(self, x):\n        return x\n")
    out = converted(classic, src)
    assert "ms.recompute(fn, *xs, use_reentrant=False)" in out
    assert "_overload_method" not in out and "torch" not in out
    assert "    @staticmethod\n" in out  # other decorators stay


def test_layer_norm_adapter_refuses_several_axes_at_run_time_with_the_reason(classic, tmp_path):
    src = "from functools import partial\nimport torch.nn as nn\n\nnorm = partial(nn.LayerNorm, eps=1e-6)\n"
    out = converted(classic, src)
    assert "def refuse(why):" in out  # the adapter defines what its transforms call
    (tmp_path / "norms.py").write_text(out)
    code = ("import norms\nprint(type(norms.norm(8)).__name__)\n"
            "try:\n    norms.norm([4, 8])\nexcept NotImplementedError as e:\n    print('refused:', e)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    lines = done.stdout.splitlines()
    assert lines[0] == "LayerNorm" and lines[1].startswith("refused: normalized_shape has several axes"), done.stderr
