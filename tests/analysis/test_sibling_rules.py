"""Rules found on torchvision's ViT, Swin and ConvNeXt files: classes imported from a sibling file,
helpers two fixes write at the same place (bundled KB). Each fix beside its no-op neighbour; the
ones with numbers are run in torch and in MindSpore (child processes) and compared."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kb.analysis.project import convert_file
from kb.analysis.siblingclasses import imported_classes
from tests.analysis.roundtrip import converted


MISC = """import torch
from torch import nn


class MLP(torch.nn.Sequential):
    def __init__(self, dims):
        layers = [nn.Linear(a, b) for a, b in zip(dims, dims[1:])]
        super().__init__(*layers)


class Deeper(MLP):
    def forward(self, x):
        return super().forward(x) * 2


class Plain:
    def modules(self):
        return [1, 2]
"""

USER = """from torch import nn

from .misc import MLP, Plain, Deeper as D


class Block(MLP):
    def __init__(self):
        super().__init__([4, 8, 4])
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = MLP([4, 3])
        self.deep = D([3, 2])
        self.plain = Plain()
        self.count = len(list(self.mlp.modules())) + len(list(self.deep.modules()))
        self.other = self.plain.modules()


def count():
    block = Block()
    return len(list(block.modules())), Net().count
"""


def _package(tmp_path, files):
    package = tmp_path / "pkg"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    for name, text in files.items():
        (package / name).write_text(text)
    return package


def test_a_sibling_files_torch_class_is_known_with_its_bases_and_methods(tmp_path):
    package = _package(tmp_path, {"misc.py": MISC, "user.py": USER})
    found = imported_classes(package / "user.py", USER.encode())
    assert set(found) == {"MLP", "D"}  # Plain derives from nothing torch: not a torch class
    assert found["MLP"].torch_bases == ("torch.nn.Sequential",) and found["MLP"].methods == {"__init__"}
    assert found["D"].torch_bases == ("torch.nn.Sequential",) and "forward" in found["D"].methods


def test_a_class_imported_by_the_package_s_absolute_name_is_known_too(tmp_path):
    """``from pkg.misc import MLP`` inside ``pkg/`` reads the same sibling file as ``from .misc import MLP``."""
    absolute = USER.replace("from .misc import", "from pkg.misc import")
    assert absolute != USER
    package = _package(tmp_path, {"misc.py": MISC, "user.py": absolute})
    found = imported_classes(package / "user.py", absolute.encode())
    assert set(found) == {"MLP", "D"} and found["MLP"].torch_bases == ("torch.nn.Sequential",)
    other = absolute.replace("from pkg.misc import", "from elsewhere.misc import")  # not this package: unknown
    assert imported_classes(package / "user.py", other.encode()) == {}


def test_modules_of_a_class_from_a_sibling_file_walks_the_cell_tree(classic, mint, tmp_path):
    package = _package(tmp_path, {"misc.py": MISC, "user.py": USER})
    torch_count = _run(tmp_path, "import torch", "from pkg.user import count; print(json.dumps(count()))")
    for engine in (classic, mint):
        misc, user = convert_file(engine, package / "misc.py"), convert_file(engine, package / "user.py")
        out = user.converted.decode()
        # Deeper derives from torch through MLP: its forward and super().forward both follow
        assert "    def construct(self, x):\n        return super().construct(x) * 2\n" in misc.converted.decode()
        assert "for m in [cell for _, cell in self.cells_and_names()]:" in out
        assert "len(list([cell for _, cell in block.cells_and_names()]))" in out  # an instance of the subclass
        assert "len(list([cell for _, cell in self.mlp.cells_and_names()]))" in out
        assert "len(list([cell for _, cell in self.deep.cells_and_names()]))" in out  # through an alias
        assert "self.other = self.plain.modules()" in out  # not a torch class: its own method
        assert "torch" not in out and "# msmap:" not in out
        ms_dir = tmp_path / engine.settings.family
        _package(ms_dir, {"misc.py": misc.converted.decode(), "user.py": out})
        ms_count = _run(ms_dir, "import mindspore", "from pkg.user import count; print(json.dumps(count()))")
        assert ms_count == torch_count == [3, 2 + 2]  # the cell itself and every descendant, as torch


def test_a_plain_relative_import_is_no_class(tmp_path):
    package = _package(tmp_path, {"util.py": "def helper(m):\n    return m\n", "user.py": ""})
    src = "import torch\nfrom .util import helper\nfrom . import util\n\nx = helper(torch.zeros(2)).modules()\n"
    assert imported_classes(package / "user.py", src.encode()) == {}


def _run(where, first: str, code: str):
    script = f"import json\n{first}\n{code}\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240, cwd=where)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


TWO_HELPERS = """from functools import partial
from torch import nn


class V(nn.Module):
    def __init__(self, norm_layer=partial(nn.LayerNorm, eps=1e-6)):
        super().__init__()
        seq = nn.Sequential()
        seq.add_module("a", nn.ReLU())
        self.seq = seq
        self.norm = norm_layer(4)
"""


def test_two_fixes_writing_helpers_at_the_same_place_both_apply(classic):
    out = converted(classic, TWO_HELPERS)
    # The adapter and the add_module helper both go before the class: one pass writes both (the
    # add_module fix, left for the next pass, would find seq already a SequentialCell and stay).
    assert 'ms_add_module(seq, "a", ms.nn.ReLU())' in out and "partial(ms_LayerNorm, eps=1e-6)" in out
    assert out.index("def ms_LayerNorm(") < out.index("def ms_add_module(") < out.index("class V(")
    assert "# msmap:" not in out and out.count("def ms_add_module(") == 1


def test_one_helper_asked_for_twice_is_written_once(classic):
    src = TWO_HELPERS.replace('seq.add_module("a", nn.ReLU())', 'seq.add_module("a", nn.ReLU())\n'
                              '        seq.add_module("b", nn.ReLU())')
    out = converted(classic, src)
    assert out.count("def ms_add_module(") == 1 and 'ms_add_module(seq, "b", ms.nn.ReLU())' in out


def _numbers(engine, src: str, call: str, tmp_path) -> tuple[list, list]:
    """``call`` evaluated on the torch source and on its conversion (child processes), as nested lists."""
    out = converted(engine, src)
    assert "torch" not in out.replace("torch's", "").replace("torch.nn.", "") and "# msmap:" not in out
    tag = engine.settings.family
    (tmp_path / f"torch_side_{tag}.py").write_text(src)
    (tmp_path / f"ms_side_{tag}.py").write_text(out)
    get = "import numpy as np\nnp.random.seed(0)\nx = np.random.randn(2, 3, 4, 5).astype(np.float32)\n"
    torch_side = _run(tmp_path, "import torch\nT = torch.tensor", f"{get}from torch_side_{tag} import *\n"
                      f"print(json.dumps([v.detach().numpy().tolist() for v in {call}]))")
    ms_side = _run(tmp_path, "import mindspore\nT = mindspore.Tensor", f"{get}from ms_side_{tag} import *\n"
                   f"print(json.dumps([v.asnumpy().tolist() for v in {call}]))")
    return torch_side, ms_side


def _close(a, b) -> bool:
    import numpy as np

    return all(np.allclose(np.array(u), np.array(v), rtol=1e-4, atol=1e-5) for u, v in zip(a, b)) and len(a) == len(b)


LAYER_NORM = """import torch.nn.functional as F


def norms(x, w, b):
    return (F.layer_norm(x, (x.shape[-1],), w, b, 1e-6), F.layer_norm(x, x.shape[-2:]),
            F.layer_norm(x, [5], eps=1e-3, weight=w), F.layer_norm(x, (5,)))
"""


def test_functional_layer_norm_runs_on_the_cpu_with_torchs_numbers(classic, mint, tmp_path):
    call = "norms(T(x), T(np.linspace(0.5, 2, 5).astype(np.float32)), T(np.linspace(-1, 1, 5).astype(np.float32)))"
    for engine in (classic, mint):  # ops.layer_norm and mint's have no CPU kernel (LayerNormExt)
        out = converted(engine, LAYER_NORM)
        assert "ms_layer_norm(x, (x.shape[-1],), weight=w, bias=b, eps=1e-6)" in out
        torch_side, ms_side = _numbers(engine, LAYER_NORM, call, tmp_path)
        assert _close(torch_side, ms_side)


LAYER_NORM_2D = """from functools import partial

import torch.nn.functional as F
from torch import nn


class LayerNorm2d(nn.LayerNorm):
    \"\"\"Normalises the channels of an NCHW tensor.\"\"\"

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class Scaled(nn.LayerNorm):
    def __init__(self, channels, scale):
        super().__init__(channels, eps=1e-3)
        self.scale = scale

    def forward(self, x):
        return super().forward(x) * self.scale


def build(T):
    norm = partial(LayerNorm2d, eps=1e-6)(3)
    scaled = Scaled(5, 2.0)
    for layer in (norm, scaled):
        c = layer.normalized_shape[0]
        values = [0.5 + i / c for i in range(c)], [i / c - 0.5 for i in range(c)]
        for p, v in zip(layer.trainable_params() if hasattr(layer, "trainable_params") else layer.parameters(), values):
            p.set_data(T(v)) if hasattr(p, "set_data") else p.data.copy_(T(v))
    return norm, scaled
"""


def test_a_subclass_of_a_torch_layer_takes_torchs_arguments_and_attributes(classic, mint, tmp_path):
    call = "(lambda n, s: (n(T(x)), s(T(x)), T([n.eps if hasattr(n, 'eps') else n.epsilon])))(*build(T))"
    for engine in (classic, mint):  # mint's LayerNorm has no CPU kernel: both derive from the classic one
        out = converted(engine, LAYER_NORM_2D)
        assert "class LayerNorm2d(ms.nn.LayerNorm):\n    \"\"\"Normalises" in out
        assert "    def __init__(self, normalized_shape, eps=1e-05, elementwise_affine=True" in out  # torch's own
        assert "weight=self.gamma, bias=self.beta, eps=self.epsilon)" in out
        assert "super().__init__((channels,), epsilon=1e-3)" in out and "super().construct(x) * self.scale" in out
        assert "epsilon=1e-3" in out and out.count("def __init__(") == 2  # Scaled keeps its own, mapped
        torch_side, ms_side = _numbers(engine, LAYER_NORM_2D, call, tmp_path)
        assert _close(torch_side, ms_side)


def test_a_module_subclass_or_a_same_signature_layer_gets_no_constructor(classic):
    src = ("from torch import nn\n\nclass A(nn.Module):\n    def forward(self, x):\n        return x\n\n\n"
           "class B(nn.Flatten):\n    def forward(self, x):\n        return super().forward(x).weight\n")
    out = converted(classic, src)
    assert "__init__" not in out and "class A(ms.nn.Cell):" in out
    assert ".weight" in out  # no weight rule renames Flatten's attributes


def test_mint_permute_gets_its_dims_as_a_tuple(mint, tmp_path):
    src = "import torch\n\n\ndef turn(x, dims=[0, 2, 3, 1]):\n    return (torch.permute(x, dims), torch.permute(x, [3, 2, 1, 0]))\n"
    out = converted(mint, src)
    assert "ms.mint.permute(x, tuple(dims))" in out and "ms.mint.permute(x, (3, 2, 1, 0))" in out
    torch_side, ms_side = _numbers(mint, src, "turn(T(x))", tmp_path)
    assert _close(torch_side, ms_side)


@pytest.mark.parametrize("body, fixed, kept", [
    pytest.param("    q, k = x[0], x[1]\n    return q.softmax(dim=0) + k.softmax(dim=1)\n", "q.softmax(axis=0) + k.softmax(axis=1)", None,
                 id="parallel-assignment-of-tensors"),
    pytest.param("    q, n = x[0], len(x)\n    return q.softmax(dim=0), n.softmax(dim=1)\n", "q.softmax(axis=0)", "n.softmax(dim=1)",
                 id="parallel-assignment-with-a-non-tensor"),
    pytest.param("    q, k = pair\n    return q.transpose(0, 1)\n", None, "q.transpose(0, 1)", id="unpacking-an-unknown-value"),
    # a keyword only torch spells so (dim=) is no evidence for a name the function assigns: its value decides
    pytest.param("    q, k = pair\n    return q.softmax(dim=0)\n", None, "q.softmax(dim=0)",
                 id="unpacking-an-unknown-value-given-dim"),
])
def test_parallel_assignments_pair_names_with_their_values(classic, body, fixed, kept):
    out = converted(classic, "import torch\nfrom torch import Tensor\n\n\ndef f(x: Tensor, pair):\n" + body)
    if fixed:
        assert fixed in out
    if kept:
        assert f"else {kept})" in out


ATTENTION = """import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = nn.MultiheadAttention(8, 2, batch_first=True)
        self.plain = nn.MultiheadAttention(8, 2, bias=False)

    def forward(self, x):
        y, none = self.attention(x, x, x, need_weights=False)
        z, weights = self.plain(x, x, x)
        return y, z, weights, none is None
"""


def test_multihead_attention_answers_like_torch_without_weights(classic, mint, tmp_path):
    (tmp_path / "torch_block.py").write_text(ATTENTION)
    make = ("import numpy as np\nx = np.random.RandomState(0).randn(2, 3, 8).astype(np.float32)\n")
    torch_side = _run(tmp_path, "import torch\ntorch.manual_seed(0)", make + (
        "from torch_block import Block\nb = Block().eval()\n"
        "np.savez('state.npz', **{k: v.numpy() for k, v in b.state_dict().items()})\n"
        "y, z, w, none = b(torch.tensor(x))\nprint(json.dumps([y.tolist(), z.tolist(), w.tolist(), none]))"))
    for engine in (classic, mint):
        out = converted(engine, ATTENTION)
        assert "self.attention = MsMultiheadAttention(8, 2, batch_first=True)" in out
        assert "self.plain = MsMultiheadAttention(8, 2, bias=False)" in out
        name = f"ms_block_{engine.settings.family}"
        (tmp_path / f"{name}.py").write_text(out)
        ms_side = _run(tmp_path, "import mindspore", make + (
            f"from {name} import Block\nb = Block()\nb.set_train(False)\nstate = np.load('state.npz')\n"
            "for n, p in b.parameters_and_names():\n    p.set_data(mindspore.Tensor(state[n]))\n"
            "y, z, w, none = b(mindspore.Tensor(x))\n"
            "print(json.dumps([y.asnumpy().tolist(), z.asnumpy().tolist(), w.asnumpy().tolist(), bool(none)]))"))
        assert ms_side[3] is True and torch_side[3] is True  # (output, None), as torch
        assert _close(torch_side[:3], ms_side[:3])
