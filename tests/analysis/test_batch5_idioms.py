"""Faults held-out batch 5 found (issue 25), each reproduced on generated code and checked by converting with
``msmap convert --device CPU`` in both families and running torch and the emitted MindSpore code side by side
(kb.probes.calls, isolated subprocesses)."""
from __future__ import annotations

import re

import pytest

from kb.analysis.convert import convert_source
from kb.probes.calls import Case, snippet
from tests.analysis.executed import FAMILIES, assert_converted_and_matching, convert_and_run

# (id, torch expression, inputs[, lines before it[, a layer made by the expression]]): each must convert with no
# marker and give torch's values and dtypes
CALLS = [
    # str methods on values known to be str are never tensor methods
    ("str-literal-split", "x * len('a.b.c'.split('.'))", {"x": [2, 3]}),
    ("fstring-split", "x * len(f'{x.shape[0]}.{x.shape[1]}'.split('.'))", {"x": [2, 3]}),
    ("str-call-split", "x * len(str(x.shape[0] + 0.5).split('.'))", {"x": [2, 3]}),
    # torch's float constants: math's floats
    ("pi-e", "2 * torch.pi * x + torch.e", {"x": [2, 3]}),
    ("inf-clamp", "torch.where(x > 0, x, torch.tensor(-torch.inf)).clamp(max=torch.inf)", {"x": [2, 3]}),
    ("nan-mask", "torch.isnan(x * torch.nan)", {"x": [2, 3]}),
    # a complex part read on what is known to be a tensor: MindSpore's real/imag are methods, taken as functions
    ("fft-real-of-call", "torch.fft.fft(x).real + 1", {"x": [2, 4]}),
    ("fft-parts-of-name", "f.real * 2 + f.imag", {"x": [3, 4]}, "f = torch.fft.fft(x)"),
    # int scale factors (MindSpore wants floats): literal, tuple, and values that arrive in variables
    ("interpolate-int-tuple", "F.interpolate(x, scale_factor=(2, 3))", {"x": [1, 2, 3, 4]}),
    ("interpolate-int-name", "F.interpolate(x, scale_factor=s, mode='bilinear')", {"x": [1, 2, 3, 4]},
     "s = x.shape[0] + 1"),
    ("interpolate-tuple-name", "F.interpolate(x, scale_factor=s)", {"x": [1, 2, 3, 4]}, "s = [2, x.shape[0]]"),
    ("upsample-int-name", "nn.Upsample(scale_factor=s)", {"x": [1, 2, 3, 4]}, "s = 2", True),
    ("upsample-int-tuple", "nn.Upsample(scale_factor=(3, 2), mode='nearest')", {"x": [1, 2, 3, 4]}, "", True),
    # topk of integer tensors: classic ops.topk has int kernels on CPU (int64 included), indices int64 as torch
    ("topk-int64", "torch.topk(i, 2)", {"i": {"shape": [3, 6], "dtype": "int64", "range": [-10**6, 10**6]}}),
    ("tensor-topk-int32-smallest", "torch.neg(i).topk(2, dim=0, largest=False)",
     {"i": {"shape": [5, 3], "dtype": "int32", "range": [0, 10**6]}}),
    # the magnitude of a complex FFT is real in torch (MindSpore's abs keeps complex64: TopK refused it)
    ("fft-magnitude-topk", "torch.topk(abs(z).mean(0), 2)", {"x": [6, 8]}, "z = torch.fft.rfft(x, dim=1)"),
    ("fft-torch-abs", "torch.abs(torch.fft.fft(x))", {"x": [3, 4]}),
    ("fft-method-abs", "torch.fft.fft2(x).abs() + 1", {"x": [3, 4]}),
    ("upsampling-bilinear-tuple", "nn.UpsamplingBilinear2d(scale_factor=(2, 3))", {"x": [1, 2, 3, 4]}, "", True),
]
UNGUARDED = ("fft-real-of-call", "fft-parts-of-name")  # known tensors: no runtime type test


@pytest.fixture(scope="module")
def executed(real_kb, tmp_path_factory):
    return convert_and_run(real_kb, tmp_path_factory, lambda family: [
        Case(id=f"{family}/{cid}", source=snippet(expr, list(inputs), layer, setup), inputs=inputs, layer=layer)
        for cid, expr, inputs, setup, layer in (c + ("", False)[len(c) - 3:] for c in CALLS)])


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("cid, expr", [c[:2] for c in CALLS], ids=[c[0] for c in CALLS])
def test_call_converts_and_matches_torch(executed, family, cid, expr):
    case = executed[f"{family}/{cid}"]
    assert_converted_and_matching(case, expr)
    if cid in UNGUARDED:
        assert "isinstance" not in case.converted and "ops.real(" in case.converted


def test_torch_constants_are_math_s_floats():
    import math

    import torch

    for name in ("pi", "e", "inf"):
        assert type(getattr(torch, name)) is float and getattr(torch, name) == getattr(math, name)
    assert type(torch.nan) is float and math.isnan(torch.nan) and math.isnan(math.nan)


@pytest.mark.parametrize("engine_name", ["classic", "mint"])
def test_constants_become_math_with_its_import(request, engine_name):
    engine = request.getfixturevalue(engine_name)
    out = convert_source(engine, '"""doc"""\nfrom __future__ import annotations\nimport torch\n\n\n'
                                 'def f(x):\n    return x * torch.pi, torch.inf, torch.nan, torch.e\n').text
    assert out.count("import math\n") == 1 and out.index("from __future__") < out.index("import math")
    assert "return x * math.pi, math.inf, math.nan, math.e" in out and "torch" not in out
    # ``math`` bound to something else in the file: the marker stays
    kept = convert_source(engine, "import torch\nimport numpy.math as math\n\nr = 2 * torch.pi\n").text
    assert "r = 2 * torch.pi  # msmap:" in kept


VERSION = '''\
import torch

MAJOR = int(torch.__version__.split(".")[0])
PARTS = torch.__version__.split("+")[0].split(".")
'''


@pytest.mark.parametrize("engine_name", ["classic", "mint"])
def test_a_str_method_on_torch_version_is_not_a_tensor_function(request, engine_name):
    out = convert_source(request.getfixturevalue(engine_name), VERSION).text
    assert ".split(" in out and "ops.split" not in out and "mint.split" not in out
    # the version split to be tested reads the torch release the knowledge base was built on (rules/torch_versions.py)
    assert re.search(r'int\("\d+\.\d+\.\d+"\.split\("\."\)\[0\]\)', out) and "torch" not in out, out


@pytest.mark.parametrize("engine_name", ["classic", "mint"])
def test_a_part_of_an_unknown_receiver_keeps_its_runtime_test(request, engine_name):
    out = convert_source(request.getfixturevalue(engine_name),
                         "import torch\n\n\ndef part(z, w):\n    return torch.fft.fft(w).imag, z.real\n").text
    assert "return ms.ops.imag(ms.ops.fft(w)), (ms.ops.real(z) if isinstance(z, ms.Tensor) else z.real)" in out


def test_the_scale_factor_transform_folds_literals_and_keeps_expressions():
    from kb.analysis.transforms import apply_transform

    transform = "None if v is None else (tuple(float(s) for s in v) if isinstance(v, tuple) or isinstance(v, list) " \
                "else float(v))"
    assert [apply_transform(transform, v) for v in ("2", "(2, 3)", "[1, 1.5]", "None")] == \
        ["2.0", "(2.0, 3.0)", "(1.0, 1.5)", "None"]
    assert apply_transform(transform, "self.s").startswith("None if self.s is None else (tuple(float(s) for s in")
    assert apply_transform("tuple(v + s for s in v)", "(1, 2)").startswith("tuple(")  # (names v: as text)


@pytest.mark.parametrize("engine_name", ["classic", "mint"])
def test_abs_of_a_value_not_known_to_be_complex_stays(request, engine_name):
    source = "import torch\n\n\ndef f(x, y):\n    z = torch.fft.fft(x)\n    z = y\n    return abs(y), abs(z), y.abs()\n"
    out = convert_source(request.getfixturevalue(engine_name), source).text
    assert "return abs(y), abs(z), y.abs()" in out and "ops.real" not in out
