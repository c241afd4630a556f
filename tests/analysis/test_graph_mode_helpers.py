"""The helper code msmap writes into a converted file compiles in GRAPH_MODE, as users train and deploy:
MsEinops (rearrange / reduce / repeat with groups, ellipsis and anonymous axes; the layer), ms_finfo,
ms_iinfo and MsRMSNorm (no import inside a function, no ``dtype_to_nptype``), and a ``hasattr`` on a torch
module by a computed name answered when the code runs from the table of run-time lookups
(featuretests.py).  One model per family, converted, run in one child without torch under PyNative and
GRAPH_MODE, compared with torch."""
from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.executed import FAMILIES, assert_modes_match, run_without_torch
from tests.analysis.roundtrip import converted

MODEL = '''import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange, reduce, repeat
from einops.layers.torch import Rearrange


class Net(nn.Module):
    def __init__(self, activation_fn="gelu"):
        super().__init__()
        self.to_patches = Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2)
        if hasattr(F, activation_fn):
            self.act = getattr(F, activation_fn)
        else:
            raise ValueError(f"Unknown activation function: {activation_fn}")
        self.norm = nn.RMSNorm(4)

    def forward(self, x):
        a = rearrange(x, "b c h w -> b (h w) c")
        b = rearrange(x, "b ... w -> b w ...")
        c = reduce(x, "b c (h 2) (w 2) -> b c h w", "mean")
        d = repeat(x.mean(dim=(2, 3)), "b c -> b c n", n=3)
        e = self.to_patches(x)
        f = x / (x.abs().amax() + torch.finfo(x.dtype).eps) + torch.iinfo(torch.int8).max
        g = rearrange(x, "(b1 b2) c h w -> b1 (b2 c) (h w)", b1=1)
        h = reduce(x, "b c ... -> b c", "max")
        return a, b, c, d, e, f, g, h, self.act(x), self.norm(x)
'''

RUN = """
import json

import mindspore as ms
import numpy as np

x = ms.Tensor(np.load({inputs!r}))
found = {{}}
for family in {families!r}:
    module = __import__(f"converted_{{family}}")
    for mode in ("pynative", "graph"):
        ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
        found[f"{{family}}/{{mode}}"] = [o.asnumpy().tolist() for o in module.Net()(x)]
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def texts(classic, mint):
    return {"classic": converted(classic, MODEL), "mint": converted(mint, MODEL)}


def test_helpers_and_a_computed_feature_test_run_in_graph_mode_with_torch_s_results(texts, tmp_path, monkeypatch):
    import torch

    monkeypatch.chdir(tmp_path)  # (GRAPH_MODE writes its analysis files into the working directory)
    for family, text in texts.items():
        assert "# msmap:" not in text and "import torch" not in text and "import numpy" not in text, text
        (tmp_path / f"converted_{family}.py").write_text(text)
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    scope: dict = {}
    exec(MODEL, scope)
    expected = [o.detach().numpy() for o in scope["Net"]()(torch.from_numpy(x))]
    done = run_without_torch(tmp_path, texts["classic"], RUN.format(inputs=str(tmp_path / "x.npy"),
                                                                      families=list(FAMILIES)))
    assert_modes_match(done, expected, rtol=1e-5, atol=1e-5)


def test_a_computed_feature_test_is_a_membership_test_of_the_lookup_table(texts):
    for text in texts.values():
        line = next(t for t in text.splitlines() if "activation_fn in (" in t)
        assert '"gelu"' in line and '"relu"' in line and "hasattr" not in text, line


def test_the_helpers_hold_no_construct_graph_mode_refuses(texts):
    import ast

    for text in texts.values():
        for node in ast.walk(ast.parse(text)):
            assert not isinstance(node, (ast.Import, ast.ImportFrom)) or node.col_offset == 0, ast.unparse(node)
            assert not isinstance(node, (ast.ListComp, ast.GeneratorExp)) or len(node.generators) == 1, \
                ast.unparse(node)
            assert not isinstance(node, ast.FunctionDef) or node.name == "__init__" or not node.args.posonlyargs, \
                node.name  # (GRAPH_MODE compiles no positional-only parameter; __init__ is not compiled)
        assert "dtype_to_nptype" not in text
