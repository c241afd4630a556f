"""Values the converter cannot see, taken when the code runs (issue 25), in both families, run next to torch:

- a layer or function called with ``*args``/``**kwargs`` goes through its torch-signature adapter (adapters.py), and
  so does a subclass forwarding them to its converted base (layersubclass.py);
- ``getattr(nn, name)`` with a name known only at run time looks the name up in a table of proven conversions
  written into the file (runtimelookups.py); another name raises NotImplementedError naming it;
- a parameter held in a variable whose rewrite differs from torch for some values (``mode=self.mode``) goes through
  the adapter, which checks the value against the classes the rewrite probe proved (valueguards.py);
- a list where MindSpore takes an int or a tuple only is handed over as a tuple (tupleparams.py).

Each unproven value is run too: it must raise NotImplementedError naming the value, never give another result."""
from __future__ import annotations

import json
import textwrap
from typing import Any

import numpy as np
import pytest

from kb.probes.calls import Case
from tests.analysis.executed import FAMILIES, assert_converted_and_matching, convert_and_run, run_without_torch
from tests.analysis.roundtrip import converted

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"

# (id, body of make() or run(...), run's parameters (None: a layer), inputs, text the conversion holds,
#  None or the words NotImplementedError must name when the value is not proven)
CASES: list[tuple[str, str, str | None, dict[str, Any], str, str | None]] = [
    # *args / **kwargs into a layer or function: the adapter takes torch's parameters
    ("conv-unpacked", "args = (2, 4, 3)\nkw = {'stride': 2, 'padding': 1, 'bias': False}\n"
     "return nn.Conv2d(*args, **kw)", None, {"x": [1, 2, 7, 7]}, "(*args, **kw)", None),
    ("batchnorm-kwargs", "kw = {'eps': 1e-3, 'momentum': 0.3}\nreturn nn.BatchNorm2d(4, **kw)", None,
     {"x": [2, 4, 3, 3]}, "BatchNorm2d(4, **kw)", None),
    ("linear-star", "dims = [6, 3]\nreturn nn.Linear(*dims)", None, {"x": [2, 6]}, "(*dims)", None),
    ("maxpool-star", "a = (3, 2)\nreturn nn.MaxPool2d(*a)", None, {"x": [1, 2, 7, 7]}, "(*a)", None),
    ("subclass-star-kwargs", "return MyConv(2, 4, 3, padding=1, bias=False)", None, {"x": [1, 2, 8]},
     "super().__init__(**", None),
    ("interpolate-kwargs", "kw = {'scale_factor': 2, 'mode': 'bilinear', 'align_corners': False}\n"
     "return F.interpolate(x, **kw)", "x", {"x": [1, 2, 3, 4]}, "_interpolate(x, **kw)", None),
    ("interpolate-kwargs-bicubic", "kw = {'size': (5, 6), 'mode': 'bicubic'}\nreturn F.interpolate(x, **kw)", "x",
     {"x": [1, 2, 3, 4]}, "_interpolate(x, **kw)", "mode='bicubic'"),
    ("softmax-star", "a = (1,)\nreturn F.softmax(x, *a)", "x", {"x": [2, 3, 4]}, "softmax(x, *a)", None),
    # a value in a variable, where the rewrite differs from torch for some values: checked when the code runs
    ("interpolate-mode-nearest", "return F.interpolate(x, scale_factor=2, mode=mode)", "x, mode",
     {"x": [1, 2, 3, 4], "mode": "nearest"}, "_interpolate(x, scale_factor=2, mode=mode)", None),
    ("interpolate-mode-bilinear", "return F.interpolate(x, scale_factor=2, mode=mode)", "x, mode",
     {"x": [1, 2, 3, 4], "mode": "bilinear"}, "_interpolate(x, scale_factor=2, mode=mode)", None),
    ("interpolate-mode-bicubic", "return F.interpolate(x, scale_factor=2, mode=mode)", "x, mode",
     {"x": [1, 2, 3, 4], "mode": "bicubic"}, "_interpolate(x, scale_factor=2, mode=mode)", "mode='bicubic'"),
    # a list where MindSpore takes an int or a tuple only
    ("reflection-pad-list", "pads = [1, 2, 0, 1]\nreturn nn.ReflectionPad2d(pads)", None, {"x": [1, 2, 4, 5]},
     "tuple(pads) if isinstance(pads, list) else pads", None),
    ("maxpool-list-kernel", "ks = [2, 2]\nreturn nn.MaxPool2d(kernel_size=ks)", None, {"x": [1, 2, 6, 6]},
     "isinstance(ks, list)", None),
    ("conv-list-sizes", "ks, st = [3, 1], [2, 1]\nreturn nn.Conv2d(2, 3, kernel_size=ks, stride=st)", None,
     {"x": [1, 2, 7, 7]}, "isinstance(st, list)", None),
    ("adaptive-pool-list", "out = [2, 3]\nreturn nn.AdaptiveAvgPool2d(out)", None, {"x": [1, 2, 6, 6]},
     "isinstance(out, list)", None),
    ("zero-pad-literal-list", "return nn.ZeroPad2d([1, 0, 2, 1])", None, {"x": [1, 2, 3, 3]}, "((1, 0, 2, 1))",
     None),
    ("max-pool-function-list", "k = [2, 2]\nreturn F.max_pool2d(x, k)", "x", {"x": [1, 2, 6, 6]},
     "isinstance(k, list)", None),
    # getattr on a torch module with a name known only at run time
    ("getattr-norm", "cfg = {'norm': 'BatchNorm2d'}\nreturn getattr(nn, cfg['norm'])(4)", None, {"x": [2, 4, 3, 3]},
     "ms_torch_nn(cfg['norm'])(4)", None),
    ("getattr-activation", "cfg = {'act': 'GELU'}\nreturn getattr(nn, cfg['act'])()", None, {"x": [2, 5]},
     "ms_torch_nn(cfg['act'])()", None),
    ("getattr-unlisted-class", "cfg = {'act': 'Softmin'}\nreturn getattr(nn, cfg['act'])(dim=1)", None,
     {"x": [2, 5]}, "ms_torch_nn(cfg['act'])", "torch.nn.Softmin"),
    ("getattr-functional", "return getattr(F, name)(x)", "x, name", {"x": [2, 5], "name": "silu"},
     "ms_torch_nn_functional(name)(x)", None),
    ("getattr-functional-unlisted", "return getattr(F, name)(x)", "x, name", {"x": [2, 5], "name": "normalize"},
     "ms_torch_nn_functional(name)(x)", "torch.nn.functional.normalize"),
    ("getattr-dtype", "return torch.zeros(2, 3, dtype=getattr(torch, name)) + 1", "x, name",
     {"x": [2], "name": "int32"}, "ms_torch(name)", None),
]
SUBCLASS = "class MyConv(nn.Conv1d):\n    def __init__(self, *a, **kw):\n        super().__init__(*a, **kw)\n\n\n"


def source(body: str, params: str | None) -> str:
    header = f"def run({params}):\n" if params is not None else "def make():\n"
    extra = SUBCLASS if "MyConv" in body else ""
    return HEAD + extra + header + textwrap.indent(body, "    ") + "\n"


@pytest.fixture(scope="module")
def executed(real_kb, tmp_path_factory):
    return convert_and_run(real_kb, tmp_path_factory, lambda family: [
        Case(id=f"{family}/{cid}", source=source(body, params), inputs=inputs, layer=params is None)
        for cid, body, params, inputs, _, _ in CASES])


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("cid, body, params, inputs, text, refused", CASES, ids=[c[0] for c in CASES])
def test_value_known_at_run_time(executed, family, cid, body, params, inputs, text, refused):
    case = executed[f"{family}/{cid}"]
    assert text in case.converted, case.converted
    if refused is None:
        assert_converted_and_matching(case, body)
        return
    assert case.automatic, case.why_left()  # converted; the value is refused only when the code runs
    assert case.result == "crash" and "NotImplementedError" in case.detail and refused in case.detail, \
        (case.result, case.detail)


MODEL = HEAD + '''\
class Head(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.mode = cfg['mode']
        self.act = cfg['act']
        self.ks = cfg['ks']
        self.pad = nn.ReflectionPad2d(cfg['pads'])
        self.norm = getattr(nn, cfg['norm'])(cfg['width'])
        self.pool = nn.MaxPool2d(self.ks)

    def forward(self, x):
        x = self.pad(x)
        x = F.interpolate(x, scale_factor=2, mode=self.mode)
        x = getattr(F, self.act)(x)
        return self.norm(self.pool(x)) + F.max_pool2d(x, self.ks)
'''
CONFIG = {"mode": "bilinear", "act": "silu", "ks": [2, 2], "pads": [1, 1, 2, 0], "norm": "BatchNorm2d", "width": 3}
RUN = """
import json
import numpy as np
import mindspore as ms
import converted

CONFIG = {config!r}
x = ms.Tensor(np.load({inputs!r}))
found = {{}}
for mode in ("pynative", "graph"):
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    m = converted.Head(CONFIG)
    m.set_train(False)
    found[mode] = m(x).asnumpy().tolist()
    bicubic = converted.Head(dict(CONFIG, mode="bicubic"))
    bicubic.set_train(False)
    try:
        bicubic(x)
        found[mode + "-bicubic"] = "ran"
    except NotImplementedError as exc:
        found[mode + "-bicubic"] = str(exc)
print(json.dumps(found))
"""


@pytest.mark.parametrize("family", FAMILIES)
def test_a_model_of_run_time_values_gives_torch_s_output_in_pynative_and_graph_mode(request, family, tmp_path,
                                                                                    monkeypatch):
    import torch

    monkeypatch.chdir(tmp_path)  # (GRAPH_MODE writes its report of the refused value, rank_0/, where it runs)

    text = converted(request.getfixturevalue(family), MODEL)
    assert "# msmap:" not in text and "import torch" not in text
    x = np.random.default_rng(0).standard_normal((1, 3, 6, 6)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    scope: dict = {}
    exec(MODEL, scope)
    model = scope["Head"](CONFIG).eval()
    expected = model(torch.from_numpy(x)).detach().numpy()
    done = run_without_torch(tmp_path, text, RUN.format(config=CONFIG, inputs=str(tmp_path / "x.npy")))
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().split("\n")[-1])
    for mode in ("pynative", "graph"):
        np.testing.assert_allclose(np.array(found[mode]), expected, rtol=1e-4, atol=1e-5, err_msg=mode)
        assert "mode=bicubic" in found[mode + "-bicubic"].replace("'", ""), found[mode + "-bicubic"]


def test_a_literal_value_the_probe_found_different_is_still_left_with_the_reason(classic):
    out = converted(classic, HEAD + "def run(x):\n    return F.interpolate(x, size=(5, 6), mode='bicubic')\n")
    assert "F.interpolate(x, size=(5, 6), mode='bicubic')" in out and "# msmap: rewrite differs from torch" in out


def test_unpacked_keywords_the_target_takes_as_they_are_need_no_adapter(classic):
    out = converted(classic, HEAD + "def run(x, kw):\n    return F.gelu(x, **kw)\n")
    assert "return ms.ops.gelu(x, **kw)" in out and "def ms_" not in out


def test_a_reference_to_a_templated_target_gets_no_adapter(classic):
    """``F.normalize`` converts through a call template (ops.norm and ops.clamp around the arguments): an adapter
    of the target's parameters would compute something else, so the reference is left with the reason."""
    out = converted(classic, "import torch.nn.functional as F\n\nnormalize = F.normalize\n")
    assert "def ms_norm" not in out and "# msmap:" in out


@pytest.mark.parametrize("value", [None, True, False, 0, 1, -1, 0.25, -0.5, 3, -7, 2.5, "bilinear", (2, 2), [1, 0],
                                   (0.5, 4)])
def test_a_value_class_condition_holds_for_its_own_values_only(value):
    from kb.analysis.valueguards import class_condition
    from kb.probes.values import value_class

    others = [None, True, False, 0, 1, -1, 0.25, -0.5, 3, -7, "nearest", (2, 2), (2, 2, 2), [1, 0], (0.5, 4)]
    condition = class_condition(value_class(value), "v")
    assert eval(condition, {}, {"v": value})  # noqa: S307 (a condition this module wrote)
    for other in others:
        assert eval(condition, {}, {"v": other}) == (value_class(other) == value_class(value)), (value, other)


def test_tuple_parameters_widen_calls_only(classic):
    out = converted(classic, HEAD + "pad = nn.ReflectionPad2d\nconv = nn.Conv2d(2, 3, 3, stride=2)\n")
    assert "pad = ms.nn.ReflectionPad2d\n" in out  # a reference is renamed as before
    assert "ms.nn.Conv2d(2, 3, 3, stride=2," in out  # an int literal stays as it is
