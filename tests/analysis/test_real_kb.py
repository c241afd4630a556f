"""End-to-end on the real knowledge base (data/): the brief's examples, and every record."""
from __future__ import annotations

import ast

import pytest

from kb.analysis import Engine, EngineSettings
from kb.analysis.convert import convert_source


@pytest.fixture(scope="module")
def classic(real_kb):
    return Engine(real_kb, EngineSettings())


def converted(engine, src: str) -> str:
    result = engine.fix_all(src)
    ast.parse(result.source)
    assert engine.fix_all(result.source).source == result.source
    return result.text


@pytest.mark.parametrize("src, expected", [
    pytest.param("import torch.nn as nn\nm = nn.Dropout(p=0.3)\n",
                 "import mindspore as ms\nm = ms.nn.Dropout(keep_prob=0.7)\n", id="dropout-1x-literal"),
    pytest.param("import torch.nn as nn\nm = nn.Dropout(p=rate)\n",
                 "import mindspore as ms\nm = ms.nn.Dropout(keep_prob=1 - rate)\n", id="dropout-1x-expression"),
])
def test_mindspore_1x(real_kb, src, expected):
    assert converted(Engine(real_kb, EngineSettings(ms_version="1.10")), src) == expected


@pytest.mark.parametrize("src, needle", [
    pytest.param("import torch.nn as nn\nm = nn.Linear(2, 3)\n", "m = ms.nn.Dense(2, 3)", id="linear"),
    pytest.param("import torch\nv, i = torch.topk(x, 3)\n", "ms.ops.topk(", id="topk"),
    pytest.param("import torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n        return x\n",
                 "class Net(ms.nn.Cell):\n    def construct(self, x):", id="class-migration"),
    pytest.param("import torch.nn as nn\nm = nn.Dropout(0.2)\n", "ms.nn.Dropout(p=0.2)", id="dropout-2x-keyword"),
])
def test_classic(classic, src, needle):
    assert needle in converted(classic, src)


def test_mint(real_kb):
    engine = Engine(real_kb, EngineSettings(family="mint"))
    assert "ms.mint.nn.Linear(2, 3)" in converted(engine, "import torch.nn as nn\nm = nn.Linear(2, 3)\n")
    out = converted(engine, "import torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
                            "        return x\n")
    assert "class Net(ms.nn.Cell):" in out and "def construct(self, x):" in out


@pytest.mark.parametrize("src, name, category", [
    pytest.param("import torch\nopt = torch.optim.SGD(p, lr=0.1)\nopt.zero_grad()\n",
                 "torch.optim.Optimizer.zero_grad", "direct", id="zero-grad"),  # removed (rule zero-grad)
    pytest.param("import torch\nopt = torch.optim.SGD(p, lr=0.1)\nopt.step()\n",
                 "torch.optim.Optimizer.step", "manual", id="step"),
    pytest.param("from torch.optim import lr_scheduler\ns = lr_scheduler.StepLR(o, 2)\ns.step()\n",
                 "torch.optim.lr_scheduler.LRScheduler.step", "caveats", id="scheduler-step"),  # kept, with a caveat
    pytest.param("import torch\ny = x.view(2, 3)\n", "torch.Tensor.view", "guess", id="guess"),
    pytest.param("import torch\nwith torch.no_grad():\n    pass\n", "torch.no_grad", "direct", id="no-grad-removed"),
    pytest.param("import torch\nok = isinstance(m, torch.ScriptModule)\n", "torch.ScriptModule", "none",
                 id="no-equivalent"),
])
def test_categories(classic, src, name, category):
    uses = {u.torch_name: u.category for u in classic.analyze(src).uses}
    assert uses[name] == category


@pytest.mark.parametrize("src", [
    pytest.param("def f():\n    torch = load()\n    return torch.nn.Linear(1, 2)\n", id="local-torch"),
    pytest.param("import torch\ns = 'torch.nn.Linear(1, 2)'  # torch.nn.Linear\n", id="text"),
    pytest.param("import torch\nclass Linear:\n    pass\nLinear(1, 2)\n", id="user-linear"),
    pytest.param("from mymodule import nn\nnn.Linear(1, 2)\n", id="other-nn"),
])
def test_no_false_positives(classic, src):
    assert classic.analyze(src).uses == [] and converted(classic, src) == src


@pytest.mark.parametrize("src, expected", [
    pytest.param("import torch\n\nclass M(torch.nn.Module):\n    @torch.no_grad()\n    def f(self):\n"
                 "        with torch.no_grad():\n            y = 1\n            z = 2\n        return y\n",
                 "import mindspore as ms\n\nclass M(ms.nn.Cell):\n    def f(self):\n"
                 "        y = 1\n        z = 2\n        return y\n", id="no-grad-decorator-and-with-removed"),
    pytest.param("import torch\nwith open(p) as f, torch.no_grad():\n    y = 1\n",
                 "with open(p) as f:\n    y = 1\n", id="no-grad-item-removed"),
    pytest.param("import torch\nif torch.jit.is_scripting():\n    y = 1\n", "if False:\n    y = 1\n",
                 id="is-scripting-is-false"),
    pytest.param("import torch\nimport torch.nn as nn\nB = nn.Sigmoid()\nx = torch.zeros(2, 3)\ny = x.size(1)\n",
                 "import mindspore as ms\nB = ms.nn.Sigmoid()\nx = ms.ops.zeros((2, 3))\ny = x.shape[1]\n",
                 id="size-with-a-dim-is-a-shape-entry-on-any-receiver"),
])
def test_templates_and_removals(classic, src, expected):
    assert converted(classic, src) == expected
    assert converted(classic, expected) == expected  # converting again changes nothing


@pytest.mark.parametrize("src", [
    pytest.param("with open(p) as f:\n    y = 1\n", id="unrelated-with"),
    pytest.param("@functools.lru_cache()\ndef f():\n    pass\n", id="unrelated-decorator"),
])
def test_removals_touch_nothing_else(classic, src):
    assert converted(classic, src) == src


def test_every_record_converts_to_valid_python(real_kb, classic):
    """One call per KB record, through the whole pipeline: never raises, always parses."""
    names = sorted(n for n in real_kb.torch_names if n.startswith("torch."))  # reachable through `import torch`
    lines = ["import torch"] + [f"v{i} = {name}(a, b, key=1)" for i, name in enumerate(names)]
    source = "\n".join(lines) + "\n"
    analysis = classic.analyze(source)
    assert analysis.error is None and len(analysis.uses) >= len(names) * 0.9
    result = convert_source(classic, source)
    ast.parse(result.source)
    assert convert_source(classic, result.source).source == result.source


def test_instance_attribute_named_like_an_api_is_not_a_use(classic):
    """``self.is_tensor`` on a Module subclass imported by its implementation path is the instance's
    own attribute, not ``torch.is_tensor`` (an over-eager re-export rule once said it was)."""
    src = ("from torch.nn.modules.container import Module\n"
           "class P(Module):\n"
           "    def __init__(self):\n"
           "        self.is_tensor = True\n"
           "        if self.is_tensor:\n"
           "            pass\n")
    names = [u.torch_name for u in classic.analyze(src).uses]
    assert "torch.is_tensor" not in names and "torch.nn.Module" in names


def test_internal_imports_find_nothing_but_still_count_for_import_cleanup(classic):
    """Names imported from torch internals with nothing public below them are not followed (half of
    the names in torch's own sources), yet fix-all still sees their references when it tidies imports."""
    src = ("import torch\n"
           "from torch._inductor.pattern_matcher import CallFunction, Ignored\n"
           "CallFunction(torch.cat, Ignored())\n"
           "Ignored.x = CallFunction\n")
    analysis = classic.analyze(src)
    assert [u.torch_name for u in analysis.uses if u.counts] == ["torch.cat"]
    assert analysis.ref_counts == {"torch": 1, "CallFunction": 2, "Ignored": 2}
    assert not classic.catalog.reaches("torch._inductor.pattern_matcher.CallFunction")
    assert classic.catalog.reaches("torch.nn.modules.conv")  # -> torch.nn.Conv2d ...
    assert classic.catalog.reaches("torch.optim.sgd")  # -> torch.optim.SGD
