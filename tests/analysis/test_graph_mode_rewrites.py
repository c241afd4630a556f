"""Code a forward reaches compiles in GRAPH_MODE after conversion: ``map`` over a lambda (or a nested def) that
closes over a local becomes a generator expression (rules/graph_maps.py), a name bound in one branch of an ``if``
only and read later is bound to None first (rules/graph_branch_names.py), a tensor's chunk(dim=) and mint's
transpose(a, b) take the forms GRAPH_MODE compiles as PyNative runs them (axis=, swapaxes), and the ms_einsum
helper compiles when a graph calls it twice, with einops' names and with an implicit output. One model per family,
converted, run in one child without torch under PyNative and GRAPH_MODE, compared with torch; beside it, what the
rules leave alone."""
from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.executed import FAMILIES, assert_modes_match, run_without_torch
from tests.analysis.roundtrip import converted

MODEL = '''import torch
import torch.nn as nn
from einops import einsum


def pack_one(t):
    return t.flatten(2), t.shape


def scale_all(xs, s):
    return tuple(map(lambda t: t * s, xs))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = 2
        self.proj = nn.Linear(4, 12)
        self.sizes = list(map(lambda m: m * 2, (1, 2)))

    def forward(self, x):
        is_image = x.ndim >= 4
        if is_image:
            x, ps = pack_one(x)
            x = x.transpose(1, 2)
        b, h = x.shape[0], self.heads
        q, k, v = self.proj(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: t.reshape(b, -1, h, t.shape[-1] // h).permute(0, 2, 1, 3), (q, k, v))
        def split(t):
            return t * h
        q, k = map(split, (q, k))
        dots = torch.einsum("bhid,bhjd->bhij", q, k).softmax(dim=-1)
        out = einsum(dots, v, "batch head i j, batch head j d -> batch head i d")
        out = out.transpose(1, 2).reshape(b, -1, 4)
        gram = torch.einsum("ij,kj", out[0], out[0])
        out = sum(scale_all((out, out), b))
        if is_image:
            out = out.transpose(1, 2).reshape(ps)
        return out, gram
'''

RUN = """
import json

import mindspore as ms
import numpy as np

x = ms.Tensor(np.load({inputs!r}))
found = {{}}
for family in {families!r}:
    module = __import__(f"converted_{{family}}")
    net = module.Net()
    parameters = dict(net.parameters_and_names())
    for name, value in np.load({weights!r}).items():
        parameters[name].set_data(ms.Tensor(value))
    for mode in ("pynative", "graph"):
        ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
        found[f"{{family}}/{{mode}}"] = [o.asnumpy().tolist() for o in net(x)]
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def texts(classic, mint):
    return {"classic": converted(classic, MODEL), "mint": converted(mint, MODEL)}


def test_a_forward_with_closures_a_one_branch_name_and_einsum_runs_in_graph_mode_with_torch_s_results(
        texts, tmp_path, monkeypatch):
    import torch

    monkeypatch.chdir(tmp_path)  # (GRAPH_MODE writes its analysis files into the working directory)
    for family, text in texts.items():
        assert "# msmap:" not in text and "import torch" not in text, text
        (tmp_path / f"converted_{family}.py").write_text(text)
    x = np.random.default_rng(0).standard_normal((2, 4, 2, 3)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    scope: dict = {}
    exec(MODEL, scope)
    torch.manual_seed(0)
    net = scope["Net"]().eval()
    np.savez(tmp_path / "w.npz", **{"proj.weight": net.proj.weight.detach().numpy(),
                                   "proj.bias": net.proj.bias.detach().numpy()})
    expected = [o.detach().numpy() for o in net(torch.from_numpy(x))]
    done = run_without_torch(tmp_path, texts["classic"], RUN.format(
        inputs=str(tmp_path / "x.npy"), weights=str(tmp_path / "w.npz"), families=list(FAMILIES)))
    assert_modes_match(done, expected, rtol=1e-4, atol=1e-5)


def test_maps_closing_over_locals_become_generators_and_others_stay(texts):
    for text in texts.values():
        assert ".chunk(3, axis=-1)" in text  # GRAPH_MODE compiles chunk(dim=) to a primitive with no CPU kernel
        assert "for t in (q, k, v)" in text and "q, k = (split(item) for item in (q, k))" in text, text
        assert "return tuple(t * s for t in xs)" in text  # a helper the forward calls; one argument: no parentheses
        assert "self.sizes = list(map(lambda m: m * 2, (1, 2)))" in text  # __init__ is not compiled


def test_a_name_one_branch_binds_is_bound_to_none_before_the_if(texts):
    for text in texts.values():
        lines = text.splitlines()
        at = lines.index("        ps = None")
        assert lines[at + 1] == "        if is_image:" and lines[at - 1].strip() == "is_image = x.ndim >= 4"
        assert "        x = None" not in lines and "        b = None" not in lines  # bound before, or not read after


NO_OPS = [
    pytest.param('''import torch.nn as nn
class M(nn.Module):
    def forward(self, x):
        a, b = map(lambda t: t * 2, (x, x))
        return a + b
''', id="map-without-free-local"),
    pytest.param('''import torch.nn as nn
def plain(x, k):
    return list(map(lambda t: t * k, x))
class M(nn.Module):
    def forward(self, x):
        return x
''', id="map-in-a-function-no-forward-calls"),
    pytest.param('''import torch.nn as nn
class M(nn.Module):
    def forward(self, x, flag: bool = False):
        y = x
        if flag:
            y = x * 2
        if flag:
            z = y
            return z
        return y
''', id="bound-before-or-not-read-after"),
    pytest.param('''import torch.nn as nn
map = lambda f, xs: [f(x) for x in xs]
class M(nn.Module):
    def forward(self, x):
        s = 2
        return map(lambda t: t * s, [x])
''', id="map-rebound-by-the-file"),
]


@pytest.mark.parametrize("src", NO_OPS)
def test_what_graph_mode_compiles_already_is_left_as_written(classic, src):
    text = converted(classic, src)
    body = text[text.index("class M"):]
    assert body == src[src.index("class M"):].replace("nn.Module", "ms.nn.Cell").replace("def forward", "def construct")


def test_a_name_a_loop_carries_is_bound_before_the_loop(classic):
    src = '''import torch.nn as nn
class M(nn.Module):
    def forward(self, x):
        for i in range(3):
            if i == 1:
                kept = x * i
        return kept
'''
    text = converted(classic, src)
    assert "    def construct(self, x):\n        kept = None\n        for i in range(3):\n" in text, text
