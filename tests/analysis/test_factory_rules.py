"""Rules for code written against torch >= 2 layer conventions (timm-style), each beside its no-op
neighbour: factory keyword dicts, feature tests through dir()/getattr(), torch types in annotations
and type aliases, guarded torch imports, vector norms (bundled KB)."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from kb.analysis import Engine, EngineSettings
from tests.analysis.roundtrip import converted


@pytest.fixture(scope="module")
def classic(real_kb):
    return Engine(real_kb, EngineSettings())


LAYER = """import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self, dim, norm_layer=None, device=None, dtype=None):
        {factory}
        super().__init__()
        self.scale = nn.Parameter(torch.ones(dim, **dd))
        self.shift = nn.Parameter(torch.zeros(dim, **dd))
        self.proj = nn.Linear(dim, dim, **dd)
        self.norm = norm_layer(dim, **dd) if norm_layer else nn.Identity()
"""


@pytest.mark.parametrize("factory", ["dd = {'device': device, 'dtype': dtype}", "dd = dict(device=device, dtype=dtype)"])
def test_factory_dict_drops_the_device_and_keeps_a_given_dtype(classic, factory):
    out = converted(classic, LAYER.format(factory=factory))
    assert "dd = {'dtype': dtype} if dtype is not None else {}" in out
    assert "ms.ops.ones(dim, **dd)" in out and "ms.ops.zeros(dim, **dd)" in out  # the splat stands for dtype=
    assert "ms.nn.Dense(dim, dim, **dd)" in out and "norm_layer(dim, **dd)" in out
    assert "torch" not in out and "# msmap:" not in out


def test_factory_dict_without_a_dtype_empties(mint_cpu):
    src = "import torch\n\ndef make(n, device=None):\n    kw = {'device': device}\n    return torch.ones(n, **kw)\n"
    out = converted(mint_cpu, src)
    assert "kw = {}" in out and "return ms.mint.ones(n)" in out  # an empty dict adds nothing


def run_isolated(code: str) -> str:
    """Run MindSpore code in a child process (a failing op can leave error state behind)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_factory_dict_runs_and_builds_the_same_numbers(classic):
    pytest.importorskip("mindspore")
    out = converted(classic, LAYER.format(factory="dd = {'device': device, 'dtype': dtype}"))
    printed = run_isolated(out + textwrap.dedent("""
        layer = Gate(4)
        print(layer.scale.asnumpy().tolist(), layer.shift.asnumpy().tolist())
        print(Gate(4, dtype=ms.float16).scale.dtype)  # a dtype given on purpose still reaches MindSpore
        """))
    assert printed.split("\n")[:2] == ["[1.0, 1.0, 1.0, 1.0] [0.0, 0.0, 0.0, 0.0]", "Float16"]


@pytest.mark.parametrize("body", [
    pytest.param("    dd = {'device': device, 'dtype': dtype}\n    print(dd['device'])\n    return torch.ones(n, **dd)\n",
                 id="dict-read-by-key"),
    pytest.param("    dd = {'device': device, 'layout': None}\n    return torch.ones(n, **dd)\n", id="other-key"),
    pytest.param("    return torch.ones(n, **opts)\n", id="unknown-dict"),
])
def test_other_unpacked_dicts_are_left_with_the_reason(classic, body):
    src = f"import torch\n\ndef make(n, opts, device=None, dtype=None):\n{body}"
    out = converted(classic, src)
    assert "torch.ones(n, **" in out and "the call unpacks *args or **kwargs" in out
    assert "{'dtype': dtype} if dtype is not None" not in out


def test_feature_tests_through_dir_and_getattr(classic):
    src = ("import torch\nimport torch.nn.functional as F\n\n_has_silu = 'silu' in dir(torch.nn.functional)\n"
           "_no_mish = 'mish' not in dir(F)\n"
           "disable = getattr(getattr(torch, 'compiler', None), 'disable', None) or print\n"
           "items = []\nplain = 'x' in dir(items)\nname = getattr(items, 'x', None)\n")
    out = converted(classic, src)
    # the converted code has both (F.silu -> ops.silu, F.mish -> ops.mish): the tests answer for it
    assert "_has_silu = True" in out and "_no_mish = False" in out
    assert "disable = getattr(None, 'disable', None) or print" in out
    assert "plain = 'x' in dir(items)" in out and "name = getattr(items, 'x', None)" in out  # not torch: kept
    assert "torch" not in out


def test_torch_types_in_annotations(classic):
    src = ("from typing import Dict, Optional, Tuple, Type, Union\n\nimport torch\nimport torch.nn as nn\n\n"
           "LayerType = Union[str, Type[nn.Module]]\n\n\nclass P(nn.Module):\n    flag: torch.jit.Final[bool]\n\n"
           "    def __init__(self, device: Optional[Union[str, torch.device]] = None, dtype: torch.dtype = None):\n"
           "        super().__init__()\n        self.flag = True\n"
           "        self.cache: Dict[Tuple[int, torch.device], int] = {}\n\n"
           "    def forward(self, x, device: torch.device = None):\n        return x\n")
    out = converted(classic, src)
    assert "LayerType = Union[str, Type[ms.nn.Cell]]" in out  # a type alias is a type context
    assert "flag: bool" in out  # Final[T] says T
    assert "device: Optional[Union[str, object]] = None, dtype: ms.dtype = None" in out
    assert "Dict[Tuple[int, object], int]" in out and "device: object = None" in out
    assert "torch" not in out and "# msmap:" not in out


def test_a_torch_type_in_a_type_test_is_not_replaced(classic):
    src = "import torch\n\ndef f(d):\n    return isinstance(d, torch.device)\n"
    out = converted(classic, src)
    assert "isinstance(d, torch.device)" in out and "# msmap: no MindSpore equivalent" in out  # object would always match


def test_guarded_torch_imports_settle_as_without_torch(classic):
    src = ("import torch\n\ntry:\n    from torch import _assert\nexcept ImportError:\n"
           "    def _assert(condition, message):\n        assert condition, message\n\n\n"
           "def twice(f, x):\n    try:\n        from torch import vmap\n    except ImportError:\n"
           "        from functorch import vmap\n    return vmap(f, 0, 0)(x)\n\n\n"
           "try:\n    import numpy as np\nexcept ImportError:\n    np = None\n")
    out = converted(classic, src)
    assert "def _assert(condition, message):\n    assert condition, message" in out  # the fallback is what runs
    assert "    return ms.ops.vmap(f, 0, 0)(x)" in out and "functorch" not in out  # the torch import converts
    assert "try:\n    import numpy as np\nexcept ImportError:\n    np = None" in out  # not torch: kept
    assert "torch" not in out


def test_a_guarded_timm_import_settles_and_a_guarded_einops_import_is_kept(classic):
    """timm needs torch, so without torch its guarded import takes the fallback; einops imports anywhere, so its
    guarded import is not replaced by the fallback."""
    src = ("import torch\n\ntry:\n    from timm.layers import DropPath\nexcept ImportError:\n"
           "    def DropPath(p):\n        return None\n\n"
           "try:\n    from einops import rearrange\nexcept ImportError:\n    def rearrange(x, pattern):\n        return x\n\n\n"
           "def f(x):\n    return DropPath(0.1), rearrange(torch.relu(x), 'a b -> b a')\n")
    out = converted(classic, src)
    assert "def DropPath(p):" in out and "timm" not in out
    assert "try:\n    from einops import rearrange\nexcept ImportError:" in out


@pytest.mark.parametrize("src", [
    pytest.param("import torch\n\ntry:\n    from torch import _assert\n    ok = True\nexcept ImportError:\n"
                 "    ok = False\n", id="more-than-imports"),
    pytest.param("try:\n    import torch\nexcept ImportError:\n    torch = None\n", id="optional-torch"),
])
def test_a_guarded_import_without_a_fallback_for_its_names_is_kept(classic, src):
    assert "try:\n    " in converted(classic, src)


@pytest.mark.parametrize("call, want", [
    ("x.norm(p=2, dim=(1, 2), keepdim=True)", "ms.ops.vector_norm(x, ord=2, axis=(1, 2), keepdims=True)"),
    ("x.norm(dim=-1)", "ms.ops.vector_norm(x, axis=-1)"),
    ("torch.norm(x)", "ms.ops.vector_norm(x)"),
])
def test_norm_with_a_number_is_a_vector_norm_on_either_family(classic, mint_cpu, call, want):
    src = f"import torch\nimport torch.nn as nn\n\nclass N(nn.Module):\n    def forward(self, x):\n        return {call}\n"
    for engine in (classic, mint_cpu):  # mint.linalg.vector_norm has no CPU kernel: the classic op
        assert f"return {want}" in converted(engine, src)


def test_vector_norm_rewrite_matches_torch_over_two_dims():
    pytest.importorskip("torch")
    pytest.importorskip("mindspore")
    printed = run_isolated(textwrap.dedent("""
        import numpy as np, torch, mindspore as ms
        x = np.random.default_rng(0).standard_normal((2, 5, 6, 3)).astype(np.float32)
        want = torch.tensor(x).norm(p=2, dim=(1, 2), keepdim=True).numpy()
        got = ms.ops.vector_norm(ms.Tensor(x), ord=2, axis=(1, 2), keepdims=True).asnumpy()
        old = ms.Tensor(x).norm(ord=2, dim=(1, 2), keepdim=True).asnumpy()  # what the old rewrite gave
        print(np.allclose(got, want, rtol=1e-5), np.allclose(old, want, rtol=1e-3))
        """))
    assert printed.split("\n")[-2] == "True False"


def test_functional_conv2d_keeps_torch_padding_and_matches_torch(classic, mint_cpu):
    pytest.importorskip("torch")
    src = ("import torch\nimport torch.nn.functional as F\n\n\ndef f(x, w, b):\n"
           "    return F.conv2d(x, w, b, 2, (1, 2)), F.conv2d(x, w, padding='same')\n")
    out = converted(classic, src)
    assert "ms.ops.conv2d(x, w, b, 2, padding=(1, 2), pad_mode='pad')" in out  # torch's 5th positional is padding
    assert "ms.ops.conv2d(x, w, padding=0, pad_mode='same')" in out
    assert converted(mint_cpu, src) == out  # mint's conv2d has no CPU kernel: the classic op
    printed = run_isolated(out + textwrap.dedent("""
        import numpy as np, torch
        rng = np.random.default_rng(0)
        x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((2, 3, 9, 9), (4, 3, 3, 3), (4,)))
        got = f(ms.Tensor(x), ms.Tensor(w), ms.Tensor(b))
        t = torch.nn.functional
        want = (t.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(b), 2, (1, 2)),
                t.conv2d(torch.tensor(x), torch.tensor(w), padding='same'))
        print(all(np.allclose(g.asnumpy(), v.numpy(), rtol=1e-4, atol=1e-5) for g, v in zip(got, want)))
        """))
    assert printed.split("\n")[-2] == "True"


def test_functional_conv2d_with_unpacked_arguments_goes_through_its_adapter(classic):
    """The padding ``*rest`` carries is known only when the code runs: torch's parameters are taken then
    (test_runtime_adapters.py runs such calls next to torch)."""
    out = converted(classic, "import torch.nn.functional as F\n\ndef f(x, w, *rest):\n    return F.conv2d(x, w, *rest)\n")
    assert "return ms_conv2d(x, w, *rest)" in out and "def ms_conv2d(input, weight, bias=None" in out
    assert "# msmap:" not in out


def test_a_star_import_of_the_package_s_own_module_by_its_absolute_name(classic, tmp_path):
    """geffnet's activations/__init__.py: ``from geffnet.activations.activations import *`` brings ``F``;
    after conversion the sibling no longer imports it, so ``F.silu`` must be converted where it is used
    (it was left, and the converted package failed at import with NameError: F)."""
    from kb.analysis.project import convert_file
    from kb.probes.calls import torch_left

    package = tmp_path / "geffnet" / "activations"
    package.mkdir(parents=True)
    (tmp_path / "geffnet" / "__init__.py").write_text("")
    (package / "activations.py").write_text("import torch\nfrom torch.nn import functional as F\n\n"
                                            "def swish(x):\n    return x * torch.sigmoid(x)\n")
    user = package / "__init__.py"
    user.write_text("from geffnet.activations.activations import *\n\nFNS = dict(relu=F.relu, swish=swish)\n")
    out = convert_file(classic, user).converted.decode()
    assert "FNS = dict(relu=ms_relu, swish=swish)" in out and not torch_left(out)


def test_torch_names_from_a_sibling_star_import_convert(classic, tmp_path):
    from kb.analysis.project import convert_file
    from kb.probes.calls import torch_left

    (tmp_path / "acts.py").write_text("import torch\nfrom torch import nn as nn\nfrom torch.nn import functional as F\n\n"
                                      "def swish(x):\n    return x * torch.sigmoid(x)\n")
    (tmp_path / "closed.py").write_text("__all__ = ['swish']\nimport torch.nn as nn\n\ndef swish(x):\n    return x\n")
    user = tmp_path / "factory.py"
    user.write_text("from .acts import *\n\n_has_silu = 'silu' in dir(torch.nn.functional)\n"
                    "LAYERS = dict(relu=nn.ReLU, selu=nn.SELU, swish=swish)\nFNS = dict(relu=F.relu)\n")
    out = convert_file(classic, user).converted.decode()
    assert out.startswith("from .acts import *\nimport mindspore as ms\n")
    assert "_has_silu = True" in out and "LAYERS = dict(relu=ms_ReLU, selu=ms_SeLU, swish=swish)" in out
    assert "FNS = dict(relu=ms_relu)" in out and not torch_left(out)  # every star-imported torch name converted
    closed = tmp_path / "closed_user.py"
    closed.write_text("from .closed import *\nimport torch\n\nx = torch.zeros(2)\ny = nn.ReLU\n")
    out = convert_file(classic, closed).converted.decode()
    assert "y = nn.ReLU" in out  # __all__ does not export nn: the name is not torch's here


def test_selu_and_functional_leaky_relu_as_values_get_torch_signature_adapters(classic, mint_cpu):
    src = ("import torch.nn as nn\nimport torch.nn.functional as F\n\nFNS = dict(leaky=F.leaky_relu, selu=nn.SELU)\n\n\n"
           "def f(x):\n    return F.leaky_relu(x), nn.SELU(inplace=True)(x)\n")
    for engine in (classic, mint_cpu):  # mint's SELU and leaky_relu have no CPU kernel: the classic ones
        out = converted(engine, src)
        assert "return ms.ops.leaky_relu(input=input, alpha=negative_slope)" in out  # torch's names, MindSpore's call
        assert "return ms.ops.leaky_relu(x, alpha=0.01), ms.nn.SeLU()(x)" in out  # torch's default slope kept
        assert "FNS = dict(leaky=ms_leaky_relu, selu=ms_SeLU)" in out
