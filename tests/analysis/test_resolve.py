"""Name resolution: every import style finds the API; look-alikes find nothing."""
from __future__ import annotations

import pytest


def found(engine, src: str, kinds=("call", "attribute", "class_base", "method_def")) -> list[tuple[str, str]]:
    return [(u.torch_name, u.kind) for u in engine.analyze(src).uses if u.kind in kinds and not u.guess]


@pytest.mark.parametrize("src, expected", [
    pytest.param("import torch\ntorch.nn.Linear(2, 3)\n", [("torch.nn.Linear", "call")], id="import-torch"),
    pytest.param("import torch.nn as nn\nnn.Linear(2, 3)\n", [("torch.nn.Linear", "call")], id="import-as"),
    pytest.param("from torch import nn\nnn.Linear(2, 3)\n", [("torch.nn.Linear", "call")], id="from-import"),
    pytest.param("from torch import nn as tnn\ntnn.Linear(2, 3)\n", [("torch.nn.Linear", "call")], id="from-as"),
    pytest.param("import torch.nn.functional as F\nF.relu(x)\n", [("torch.nn.functional.relu", "call")],
                 id="functional-as-F"),
    pytest.param("from torch.nn import functional as F\nF.relu(x)\n", [("torch.nn.functional.relu", "call")],
                 id="from-nn-import-functional"),
    pytest.param("from torch.nn import Linear as L\nL(2, 3)\n", [("torch.nn.Linear", "call")], id="from-as-L"),
    pytest.param("from torch.nn import (\n    Linear,\n    ReLU,\n)\nLinear(1, 2); ReLU()\n",
                 [("torch.nn.Linear", "call"), ("torch.nn.ReLU", "call")], id="parenthesized-from"),
    pytest.param("from torch.optim import SGD\nSGD(p, lr=0.1)\n", [("torch.optim.SGD", "call")], id="from-optim"),
    pytest.param("import torch.nn\ntorch.nn.ReLU()\n", [("torch.nn.ReLU", "call")], id="import-dotted-binds-root"),
    pytest.param("import os, torch\ntorch.cat([a])\n", [("torch.cat", "call")], id="import-list"),
    pytest.param("import torch\ntorch.nn.functional.relu(x)\n", [("torch.nn.functional.relu", "call")],
                 id="long-chain"),
    pytest.param("import torch.nn as nn\nnn.init.xavier_uniform_(w)\n", [("torch.nn.init.xavier_uniform_", "call")],
                 id="alias-chain"),
    pytest.param("import torch\nx = torch.float32\n", [("torch.float32", "attribute")], id="attribute"),
    pytest.param("import torch\ndef f(x: torch.Tensor) -> torch.Tensor: ...\n",
                 [("torch.Tensor", "attribute"), ("torch.Tensor", "attribute")], id="annotations"),
    pytest.param("import torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n        return x\n",
                 [("torch.nn.Module", "class_base"), ("torch.nn.Module.forward", "method_def")], id="class-base"),
    pytest.param("import torch.nn as nn\nnn.Module.__init__(self)\n", [("torch.nn.Module", "attribute")],
                 id="longest-known-prefix"),
    pytest.param("def f():\n    import torch\n    return torch.cat(x)\n", [("torch.cat", "call")],
                 id="import-in-function"),
    pytest.param("try:\n    import torch\nexcept ImportError:\n    torch = None\ntorch.cat(x)\n",
                 [("torch.cat", "call")], id="optional-import-none-fallback"),
    pytest.param("import torch\ndef f(act=torch.nn.ReLU):\n    torch = 1\n    return act\n",
                 [("torch.nn.ReLU", "attribute")], id="default-evaluated-outside"),
    pytest.param("from torch.nn.modules.linear import Linear\nLinear(1, 2)\n", [("torch.nn.Linear", "call")],
                 id="implementation-path"),
    pytest.param("import torch\n@torch.no_grad()\ndef f(): pass\n", [("torch.no_grad", "call")], id="decorator"),
])
def test_resolves(engine, src, expected):
    assert found(engine, src) == expected


@pytest.mark.parametrize("src", [
    pytest.param("def f():\n    torch = load()\n    return torch.nn.Linear(1, 2)\n", id="local-variable-torch"),
    pytest.param("torch = Thing()\ntorch.nn.Linear(1, 2)\n", id="never-imported"),
    pytest.param("import torch\ntorch = Thing()\ntorch.nn.Linear(1, 2)\n", id="rebound-after-import"),
    pytest.param("import torch\ns = 'torch.nn.Linear(1, 2)'\n# torch.nn.Linear(3, 4)\n", id="string-and-comment"),
    pytest.param("import torch\nclass Linear:\n    pass\nLinear(1, 2)\n", id="user-class-linear"),
    pytest.param("from mymodule import nn\nnn.Linear(1, 2)\n", id="nn-from-elsewhere"),
    pytest.param("import torch.nn as nn\nfrom mymodule import nn\nnn.Linear(1, 2)\n", id="alias-shadowed-by-import"),
    pytest.param("import torch.nn as nn\ndef f(nn):\n    return nn.Linear(1, 2)\n", id="parameter-shadows"),
    pytest.param("import torch.nn as nn\nfor nn in layers:\n    nn.Linear(1, 2)\n", id="loop-variable-shadows"),
    pytest.param("import torch.nn as nn\nwith open(p) as nn:\n    nn.Linear(1, 2)\n", id="with-shadows"),
    pytest.param("import torch\nx = [torch.cat(a) for torch in things]\n", id="comprehension-shadows"),
    pytest.param("import torch\nobj.torch.cat(x)\n", id="attribute-named-torch"),
    pytest.param("import torch\nf(torch=1)\n", id="keyword-named-torch"),
    pytest.param("from . import torch\ntorch.cat(x)\n", id="relative-import"),
    pytest.param("import torchvision\ntorchvision.models.resnet18()\n", id="torchvision-is-not-torch"),
    pytest.param("import torch\nclass Net:\n    def forward(self, x):\n        return self.parameters()\n",
                 id="plain-class-forward"),
])
def test_no_false_positives(engine, src):
    assert found(engine, src) == []


def test_shadowing_is_per_function(engine):
    src = "import torch\ndef f():\n    torch = 1\n    return torch\ndef g():\n    return torch.cat(x)\n"
    assert found(engine, src) == [("torch.cat", "call")]


def test_global_statement_reaches_module(engine):
    src = "import torch\ndef f():\n    global torch\n    return torch.cat(x)\n"
    assert found(engine, src) == [("torch.cat", "call")]


@pytest.mark.parametrize("src, expected", [
    pytest.param("import torch.nn as nn\nclass Net(nn.Module):\n    def f(self):\n        return self.parameters()\n",
                 ("torch.nn.Module.parameters", "call"), id="self-in-module"),
    pytest.param("import torch.nn as nn\nclass Net(nn.Module):\n    def f(me):\n        me.train()\n",
                 ("torch.nn.Module.train", "call"), id="self-named-otherwise"),
    pytest.param("import torch\nopt = torch.optim.SGD(p, lr=1)\nopt.step()\n",
                 ("torch.optim.Optimizer.step", "call"), id="optimizer-step"),
    pytest.param("from torch.optim import SGD\ndef train():\n    opt = SGD(p, lr=1)\n    opt.zero_grad()\n",
                 ("torch.optim.Optimizer.zero_grad", "call"), id="optimizer-in-function"),
    pytest.param("from torch.optim import lr_scheduler\nsched = lr_scheduler.StepLR(o, 3)\nsched.step()\n",
                 ("torch.optim.lr_scheduler.LRScheduler.step", "call"), id="scheduler-step"),
    pytest.param("import torch.nn as nn\nclass Net(nn.Module): pass\nmodel = Net()\nmodel.eval()\n",
                 ("torch.nn.Module.eval", "call"), id="instance-of-local-module"),
    pytest.param("import torch.nn as nn\nclass A(nn.Module): pass\nclass B(A):\n    def g(self):\n"
                 "        self.train()\n", ("torch.nn.Module.train", "call"), id="indirect-subclass"),
    pytest.param("import torch.nn as nn\nm = nn.Linear(2, 3)\nm.parameters()\n",
                 ("torch.nn.Module.parameters", "call"), id="torch-layer-instance"),
])
def test_methods_of_known_objects(engine, src, expected):
    assert expected in found(engine, src)


@pytest.mark.parametrize("src", [
    pytest.param("import torch.nn as nn\nclass Net(nn.Module):\n    def train(self): pass\n    def f(self):\n"
                 "        self.train()\n", id="method-defined-locally"),
    pytest.param("import torch\nopt = make()\nopt.step()\n", id="unknown-object"),
    pytest.param("import torch\nopt = torch.optim.SGD(p, lr=1)\nopt = other()\nopt.step()\n", id="rebound-object"),
    pytest.param("import torch.nn as nn\nclass Net(nn.Module):\n    @staticmethod\n    def f(self):\n"
                 "        self.train()\n", id="staticmethod-first-arg"),
])
def test_methods_no_false_positives(engine, src):
    methods = ("torch.nn.Module.", "torch.optim.Optimizer.")
    assert [u for u in found(engine, src) if u[0].startswith(methods) and u[1] == "call"] == []


@pytest.mark.parametrize("src, expected", [
    pytest.param("import torch\ny = x.view(2, 3)\n", [("torch.Tensor.view", True)], id="guess"),
    pytest.param("import torch\ny = torch.randn(3).view(3)\n", [("torch.randn", False), ("torch.Tensor.view", True)],
                 id="guess-on-call-result"),
])
def test_tensor_method_guesses(engine, src, expected):
    assert [(u.torch_name, u.guess) for u in engine.analyze(src).uses] == expected


@pytest.mark.parametrize("src", [
    pytest.param("y = x.view(2, 3)\n", id="no-torch-in-file"),
    pytest.param("import torch\ny = 'a,b'.split(',')\n", id="string-receiver"),
    pytest.param("import torch\nimport numpy as np\nnp.random.split(a)\n", id="module-receiver"),
    pytest.param("import torch\nclass A:\n    def f(self):\n        return self.view(1)\n", id="self-receiver"),
    pytest.param("import torch\nclass A(B):\n    def f(self):\n        return super().view(1)\n", id="super-receiver"),
    pytest.param("import torch\ny = x.reshape_unknown(3)\n", id="not-a-tensor-method"),
])
def test_guess_no_false_positives(engine, src):
    assert [u for u in engine.analyze(src).uses if u.guess] == []


def test_guesses_can_be_switched_off(kb):
    from kb.analysis import Engine, EngineSettings

    engine = Engine(kb, EngineSettings(tensor_method_guesses=False))
    assert engine.analyze("import torch\ny = x.view(2)\n").uses == []


def test_import_uses(engine):
    uses = engine.analyze("from torch.optim import SGD\nfrom torch import nn\n").uses
    assert [(u.torch_name, u.kind, u.range.start.character) for u in uses] == [("torch.optim.SGD", "import", 24)]


def test_broken_file_still_gives_uses(engine):
    src = "import torch\nx = torch.cat([a, b]\ndef broken(:\n    pass\ny = torch.float32\nclass (\n"
    names = [u.torch_name for u in engine.analyze(src).uses]
    assert "torch.cat" in names and "torch.float32" in names


def test_half_typed_chain(engine):
    uses = engine.analyze("import torch\ntorch.nn.\nx = torch.cat(a)\n").uses
    assert [u.torch_name for u in uses] == ["torch.cat"]


@pytest.mark.parametrize("name, canonical, expected", [
    ("torch.nn.modules.conv.Conv2d", "torch.nn.Conv2d", True),
    ("torch.nn.modules.linear.Linear", "torch.nn.Linear", True),
    ("torch.optim.sgd.SGD", "torch.optim.SGD", True),
    ("torch._C._VariableFunctions.cat", "torch.cat", True),
    ("torch.cuda.manual_seed", "torch.manual_seed", False),
    # a part before a dropped ``modules`` must be kept: this is an attribute of a Module, not the API
    ("torch.nn.modules.container.Module.is_tensor", "torch.is_tensor", False),
    ("torch.nn.Linear", "torch.nn.Linear", False),
])
def test_reexport_rule(name, canonical, expected):
    from kb.analysis.catalog import is_reexport

    assert is_reexport(name, canonical) is expected


@pytest.mark.parametrize("name, public", [
    ("torch.nn.modules.linear.Linear", "torch.nn.Linear"),  # torch.nn.quantized.Linear shares the leaf
    ("torch.nn.modules.conv.Conv2d", "torch.nn.Conv2d"),  # so do torch.ao.nn.qat.Conv2d and others
    ("torch.nn.modules.LSTM", "torch.nn.LSTM"),
])
def test_an_implementation_path_finds_its_public_name_among_namesakes(real_kb, name, public):
    from kb.analysis.catalog import Catalog

    assert len([n for n in real_kb.torch_names if n.endswith("." + public.rsplit(".", 1)[1])]) > 1
    assert Catalog(real_kb).lookup(name)["torch"] == public
