"""Rewrites: each rule's fix test sits beside a no-op test (what must not change)."""
from __future__ import annotations

import ast

import pytest

from kb.analysis import Engine, EngineSettings
from tests.standin_text import without_definition


def fixed(engine, src: str) -> str:
    result = engine.fix_all(src)
    ast.parse(result.source)
    return result.text


@pytest.mark.parametrize("src, expected", [
    pytest.param("import torch.nn as nn\nm = nn.ReLU()\n", "import mindspore as ms\nm = ms.nn.ReLU()\n",
                 id="callee-and-import"),
    pytest.param("import torch.nn as nn\nm = nn.Linear(2, 3, bias=False)\n",
                 "import mindspore as ms\nm = ms.nn.Dense(2, 3, has_bias=False)\n", id="keyword-renamed"),
    pytest.param("import torch.nn as nn\nm = nn.Linear(2, 3, False)\n",
                 "import mindspore as ms\nm = ms.nn.Dense(2, 3, has_bias=False)\n", id="positional-to-keyword"),
    pytest.param("import torch.nn as nn\nm = nn.Linear(2, 3, device='cpu')\n",
                 "import mindspore as ms\nm = ms.nn.Dense(2, 3)\n", id="dropped-param"),
    pytest.param("import torch.nn as nn\nm = nn.Linear(2, 3, dtype=None)\n",
                 "import mindspore as ms\nm = ms.nn.Dense(2, 3)\n", id="unsupported-param-at-default"),
    pytest.param("import torch.nn as nn\nm = nn.Linear(2,\n    3,  # out\n    device=d,\n)\n",
                 "import mindspore as ms\nm = ms.nn.Dense(2,\n    3,  # out\n)\n", id="dropped-last-keeps-comment"),
    pytest.param("import torch.nn as nn\nm = nn.Dropout(0.2)\n",
                 "import mindspore as ms\nm = ms.nn.Dropout(p=0.2)\n", id="positional-at-other-position"),
    pytest.param("import torch.nn as nn\nm = nn.Conv2d(3, 8, 3)\n",
                 "import mindspore as ms\nm = ms.nn.Conv2d(3, 8, 3, has_bias=True, pad_mode='pad')\n",
                 id="added-param-and-kept-default"),
    pytest.param("import torch.nn as nn\nm = nn.Conv2d(3, 8, 3, padding=1, groups=2)\n",
                 "import mindspore as ms\nm = ms.nn.Conv2d(3, 8, 3, padding=1, group=2, has_bias=True, pad_mode='pad')\n",
                 id="conv-padding"),
    pytest.param("import torch.nn as nn\nm = nn.BatchNorm2d(8, momentum=0.2)\n",
                 "import mindspore as ms\nm = ms.nn.BatchNorm2d(8, momentum=0.8)\n", id="transform-computed"),
    pytest.param("import torch.nn as nn\nm = nn.BatchNorm2d(8, momentum=mom)\n",
                 "import mindspore as ms\nm = ms.nn.BatchNorm2d(8, momentum=1 - mom)\n", id="transform-wrapped"),
    pytest.param("import torch.nn as nn\nm = nn.LayerNorm(4)\n",
                 "import mindspore as ms\nm = ms.nn.LayerNorm(4, epsilon=1e-05)\n", id="torch-default-written-out"),
    pytest.param("import torch.nn as nn\na = nn.GELU()\nb = nn.GELU(approximate='tanh')\n",
                 "import mindspore as ms\na = ms.nn.GELU(approximate=False)\nb = ms.nn.GELU(approximate=True)\n",
                 id="defaults-differ"),
    pytest.param("import torch.nn.functional as F\ny = F.softmax(x, 1)\n",
                 "import mindspore as ms\ny = ms.ops.softmax(x, 1)\n", id="positional-same-position"),
    pytest.param("import torch.nn.functional as F\ny = F.softmax(x, dim=1)\n",
                 "import mindspore as ms\ny = ms.ops.softmax(x, axis=1)\n", id="functional-keyword"),
    pytest.param("from torch.nn import Linear as L\nm = L(2, 3)\n",
                 "import mindspore as ms\nm = ms.nn.Dense(2, 3)\n", id="from-import-alias"),
    pytest.param("import torch\nx = torch.zeros(3, dtype=torch.float32)\n",
                 "import mindspore as ms\nx = ms.ops.zeros(3, dtype=ms.float32)\n", id="attribute-dtype"),
    pytest.param("import torch.nn as nn\nm = nn.Sequential(nn.Linear(2, 3), nn.ReLU())\n",
                 "import mindspore as ms\nm = ms.nn.SequentialCell(ms.nn.Dense(2, 3), ms.nn.ReLU())\n", id="nested"),
    pytest.param("import torch.nn as nn\nm = nn.Linear(2, 3)\nm.parameters()\nm.eval()\n",
                 "import mindspore as ms\nm = ms.nn.Dense(2, 3)\nm.trainable_params()\nm.set_train(mode=False)\n",
                 id="methods-renamed"),
    pytest.param("import torch.nn as nn\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n\n"
                 "    def forward(self, x):  # keep me\n        return x\n",
                 "import mindspore as ms\n\nclass Net(ms.nn.Cell):\n    def __init__(self):\n        super().__init__()\n\n"
                 "    def construct(self, x):  # keep me\n        return x\n", id="class-migration"),
    pytest.param("import mindspore as mind\nimport torch.nn as nn\nm = nn.ReLU()\n",
                 "import mindspore as mind\nm = mind.nn.ReLU()\n", id="reuses-existing-alias"),
    pytest.param("import torch.nn as nn\nms = 3\nm = nn.ReLU()\n",
                 "import mindspore\nms = 3\nm = mindspore.nn.ReLU()\n", id="alias-taken"),
    pytest.param('"""Doc."""\nfrom __future__ import annotations\nimport os\nimport torch\nx = torch.cat(a)\n',
                 '"""Doc."""\nfrom __future__ import annotations\nimport os\nimport mindspore as ms\nx = ms.ops.cat(a)\n',
                 id="import-placed-before-torch-import"),
    pytest.param("import torch\ntry:\n    import torch.nn as nn\nexcept ImportError:\n    pass\nm = nn.ReLU()\n",
                 "import mindspore as ms\ntry:\n    pass\nexcept ImportError:\n    pass\nm = ms.nn.ReLU()\n",
                 id="only-statement-in-block-becomes-pass"),
    pytest.param("import torch\nimport torch.nn.functional as F\nimport torch.nn as nn\nm = nn.ReLU()\n",
                 "import mindspore as ms\nm = ms.nn.ReLU()\n", id="torch-imports-unused-from-the-start-go-too"),
    pytest.param("import torch.nn as nn\nm = nn.Linear(\n    2,\n    3,  # out\n    device=d\n)\n",
                 "import mindspore as ms\nm = ms.nn.Dense(\n    2,\n    3  # out\n)\n", id="dropped-own-line"),
    pytest.param("import torch.nn as nn\nm = nn.Linear(2, 3, device=d,)\n",
                 "import mindspore as ms\nm = ms.nn.Dense(2, 3,)\n", id="dropped-trailing-comma"),
    pytest.param("import torch.nn as nn\nm = nn.Linear(device=d, in_features=2, out_features=3)\n",
                 "import mindspore as ms\nm = ms.nn.Dense(in_channels=2, out_channels=3)\n", id="dropped-first"),
    pytest.param("import torch.nn as nn\nnorm = nn.BatchNorm2d\n",
                 "import mindspore as ms\nnorm = ms.nn.BatchNorm2d\n", id="reference-same-defaults-renamed"),
    pytest.param("from functools import partial\nimport torch.nn as nn\nn = partial(nn.BatchNorm2d, momentum=0.01)\n",
                 "from functools import partial\nimport mindspore as ms\nn = partial(ms.nn.BatchNorm2d, momentum=0.99)\n",
                 id="partial-arguments-mapped"),
    pytest.param("import torch.nn as nn\n\nconv = nn.Conv2d\n",
                 "import mindspore as ms\n\n\ndef ms_Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, "
                 "dilation=1, groups=1, bias=True, padding_mode='zeros', device=None, dtype=None):\n"
                 "    \"\"\"torch.nn.Conv2d's parameters, building mindspore.nn.Conv2d (written by msmap convert).\"\"\"\n"
                 "    if padding_mode != 'zeros':\n"
                 "        raise NotImplementedError('padding_mode is not supported by ms.nn.Conv2d in this conversion')\n"
                 "    if device is not None:\n"
                 "        raise NotImplementedError('device is not supported by ms.nn.Conv2d in this conversion')\n"
                 "    if dtype is not None:\n"
                 "        raise NotImplementedError('dtype is not supported by ms.nn.Conv2d in this conversion')\n"
                 "    return ms.nn.Conv2d(in_channels=in_channels, out_channels=out_channels, kernel_size=kernel_size, "
                 "stride=stride, padding=padding, dilation=dilation, group=groups, has_bias=bias, pad_mode='pad')\n"
                 "\n\nconv = ms_Conv2d\n", id="reference-gets-a-torch-signature-adapter"),
])
def test_fix(engine, src, expected):
    assert fixed(engine, src) == expected


def test_an_import_partly_unused_becomes_a_stand_in_for_the_rest(engine):
    out = fixed(engine, "from torch.nn import Linear, Conv3d\nm = Linear(2, 3)\nc = Conv3d(1, 1, 1)\n")
    assert without_definition(out) == \
        'import mindspore as ms\n\n\nConv3d = MsUnconverted("torch.nn.Conv3d")\nm = ms.nn.Dense(2, 3)\nc = Conv3d(1, 1, 1)\n'


@pytest.mark.parametrize("src", [
    pytest.param("import torch\ndef f():\n    torch = load()\n    return torch.nn.ReLU()\n", id="local-torch"),
    pytest.param("import torch\ns = 'torch.nn.ReLU()'  # torch.nn.ReLU()\n", id="string-and-comment"),
    pytest.param("import torch\nclass Linear:\n    pass\nm = Linear(2, 3)\n", id="user-class-linear"),
    pytest.param("from mymodule import nn\nm = nn.Linear(2, 3)\n", id="nn-from-mymodule"),
    pytest.param("import torch.nn as nn\nm = nn.Linear(2, 3, dtype=half)\n", id="unsupported-param-used"),
    pytest.param("import torch.nn as nn\nm = nn.Bilinear(*dims)\n", id="star-args-no-signature-for-an-adapter"),
    pytest.param("import torch.nn as nn\nmake(nn.Bilinear)\n", id="class-passed-without-call-no-signature"),
    pytest.param("import torch.nn as nn\nm = nn.Conv2d(3, 8, 3, padding_mode='reflect')\n", id="conv-padding-mode"),
    pytest.param("import torch\nx = torch.no_grad()\n", id="no-equivalent"),
    pytest.param("import torch.nn.functional as F\ny = F.dropout(x, 0.1)\n", id="context-change"),
    pytest.param("import torch\ny = x.view(3)\n", id="tensor-method-guess"),
    pytest.param("import torch\ny = torch.new_api(3)\n", id="target-not-in-this-version"),
    pytest.param("import torch\nx = torch.cat([a, b]\n", id="syntax-error-unchanged"),
    pytest.param("import torch\nopt = torch.optim.Adagrad\nopt.step()\n", id="optimizer-class-not-instance"),
])
def test_no_op(engine, src):
    assert engine.fix_all(src).text == src


@pytest.mark.parametrize("src, expected", [
    pytest.param("import torch.nn as nn\nm = nn.Dropout(p=0.3)\n",
                 "import mindspore as ms\nm = ms.nn.Dropout(keep_prob=0.7)\n", id="literal-computed"),
    pytest.param("import torch.nn as nn\nm = nn.Dropout(p=rate)\n",
                 "import mindspore as ms\nm = ms.nn.Dropout(keep_prob=1 - rate)\n", id="expression-wrapped"),
    pytest.param("import torch.nn as nn\nm = nn.Dropout(0.2, True)\n",
                 "import mindspore as ms\nm = ms.nn.Dropout(0.8)\n", id="positional-transform-and-drop"),
    pytest.param("import torch.nn as nn\nm = nn.Dropout(inplace=True)\n",
                 "import mindspore as ms\nm = ms.nn.Dropout()\n", id="all-arguments-dropped"),
])
def test_fix_on_mindspore_1x(kb, src, expected):
    engine = Engine(kb, EngineSettings(ms_version="1.10"))
    assert fixed(engine, src) == expected


def test_no_op_on_mindspore_1x(kb):
    engine = Engine(kb, EngineSettings(ms_version="1.10"))
    src = "import torch\nclass Dropout:\n    pass\nm = Dropout(p=0.3)\n"
    assert engine.fix_all(src).text == src


@pytest.mark.parametrize("src, expected", [
    pytest.param("import torch.nn as nn\nm = nn.Linear(2, 3)\n", "import mindspore as ms\nm = ms.mint.nn.Linear(2, 3)\n",
                 id="mint-target"),
    pytest.param("import torch.nn as nn\nm = nn.Sequential()\n", "import mindspore as ms\nm = ms.nn.SequentialCell()\n",
                 id="mint-family-classic-api"),
    pytest.param("import torch.nn as nn\nm = nn.LayerNorm(3)\n",
                 "import mindspore as ms\nm = ms.nn.LayerNorm(3, epsilon=1e-05)\n", id="fallback-to-classic"),
])
def test_fix_mint(mint_engine, src, expected):
    assert fixed(mint_engine, src) == expected


def test_fallback_is_marked(mint_engine):
    use = mint_engine.analyze("import torch.nn as nn\nm = nn.LayerNorm(3)\n").uses[0]
    assert use.fallback and "classic API" in use.title


@pytest.mark.parametrize("src, reason", [
    pytest.param("import torch.nn as nn\nm = nn.Linear(2, 3, dtype=half)\n", "'dtype' has no MindSpore equivalent",
                 id="unsupported"),
    pytest.param("import torch.nn as nn\nm = nn.Bilinear(*dims)\n", "unpacks *args", id="star-args"),
    pytest.param("import torch.nn as nn\nmake(nn.Bilinear)\n", "without a call", id="no-call"),
    pytest.param("import torch\nx = torch.no_grad()\n", "no MindSpore equivalent: Gradients", id="no-equivalent"),
    pytest.param("import torch.nn.functional as F\nF.dropout(x)\n", "context change: The training flag", id="context"),
    pytest.param("import torch\ny = torch.new_api(3)\n", "no MindSpore 2.10.0 target", id="version"),
])
def test_reasons(engine, src, reason):
    use = next(u for u in engine.analyze(src).uses if u.kind != "import")
    assert reason in use.reason and not use.edits


@pytest.mark.parametrize("src, category", [
    pytest.param("import torch.nn as nn\nnn.ReLU()\n", "direct", id="direct"),
    pytest.param("import torch.nn as nn\nnn.Linear(1, 2)\n", "caveats", id="warning-caveat"),
    pytest.param("import torch.nn as nn\nnn.BatchNorm2d(3)\n", "caveats", id="semantics-differ"),
    pytest.param("import torch.nn as nn\nnn.GELU()\n", "caveats", id="defaults-differ"),
    pytest.param("import torch.nn.functional as F\nF.dropout(x)\n", "manual", id="context-change"),
    pytest.param("import torch.nn as nn\nnn.Linear(1, 2, dtype=h)\n", "manual", id="blocked"),
    pytest.param("import torch\ntorch.no_grad()\n", "none", id="no-equivalent"),
    pytest.param("import torch\nx.view(1)\n", "guess", id="guess"),
])
def test_categories(engine, src, category):
    assert [u.category for u in engine.analyze(src).uses if u.kind != "import"] == [category]


def test_behaviour_change_in_title(engine):
    use = engine.analyze("import torch.nn as nn\nnn.BatchNorm2d(3)\n").uses[0]
    assert "(changes behaviour: a parameter's meaning differs)" in use.title


def test_quick_fix_includes_import_once(engine):
    src = "import torch.nn as nn\na = nn.ReLU()\nb = nn.ReLU()\n"
    analysis = engine.analyze(src)
    fixes = analysis.fixes()
    assert len(fixes) == 2
    for fix in fixes:
        assert sum(e.new_text == "import mindspore as ms\n" for e in fix.edits) == 1
        assert all(e.range is not None for e in fix.edits)


def test_class_migration_is_one_fix_for_base_and_methods(engine):
    src = "import torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n        return x\n"
    analysis = engine.analyze(src)
    fixes = analysis.fixes()
    assert len(fixes) == 1 and {u.kind for u in fixes[0].uses} == {"class_base", "method_def"}
