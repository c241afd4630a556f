"""Rewrites that depend on what the code passes (bundled KB, --device CPU, both families): a template
condition (``torch.autocast(..., enabled=False)`` goes), a torch-only parameter passed as a variable
(a torch-signature adapter checks it when the code runs), ``torch.Tensor(data)``, sampling with a
generator, ``Tensor.repeat`` and a torch ``device=`` on a MindSpore factory. Numeric rules are run
next to torch (kb.probes.calls); each fix has its no-op beside it."""
from __future__ import annotations

import pytest

from kb.analysis import Engine, EngineSettings
from kb.analysis.convert import convert_source
from kb.model import check_template
from kb.probes.calls import Case, snippet, torch_left
from tests.analysis.executed import assert_converted_and_matching, convert_and_run
from tests.analysis.roundtrip import converted

# (id, torch expression, inputs, compare, text the rewrite must hold: one for both families, or one per family)
CALLS = [
    ("tensor-from-tensor", "torch.Tensor(x)[None, ...]", {"x": [2, 3]}, "values", "tensor_float32(x)"),
    ("tensor-from-list", "torch.Tensor([[1, 2], [3, 4]]) + x", {"x": [2, 2]}, "values", "tensor_float32("),
    # torch.max/min of two tensors (element-wise), of a dim held in a name, of an int literal
    ("max-two-tensors", "torch.max(x, torch.zeros_like(x))", {"x": [3, 4]}, "values",
     {"classic": "ms_max(x, ms.ops.zeros_like(x))", "mint": "ms.mint.max(x, ms.ops.zeros_like(x))"}),
    ("min-dim-name", "torch.min(x, x.dim() - 1)[0]", {"x": [3, 4]}, "values",
     {"classic": "ms_min(x, x.dim() - 1)", "mint": "ms.mint.min(x, x.dim() - 1)"}),
    ("max-dim-int", "torch.max(x, 1, keepdim=True)[1]", {"x": [3, 4]}, "values",
     {"classic": "ms.ops.max(x, 1, keepdims=True)", "mint": "ms.mint.max(x, 1, keepdim=True)"}),
    # inplace=True on a value nothing else sees (made for the call): the same result without it
    ("relu6-inplace-temporary", "x * F.relu6(x + 3.0, inplace=True) / 6.0", {"x": [3, 4]}, "values",
     "relu6(x + 3.0) / 6.0"),
    # a torch.device that is not the literal 'cpu': MsDevice, a name Tensor.to takes, with torch's .index
    ("device-variable-to", "x.to(torch.device('cpu' if x.dim() < 9 else 'cuda')) * 2", {"x": [2, 3]}, "values",
     "x.to(MsDevice('cpu' if x.dim() < 9 else 'cuda')) * 2"),
    ("device-accelerator-index", "x * torch.device('cuda', 1).index", {"x": [2, 3]}, "values",
     "x * MsDevice('cuda', index=1).index"),
    # pad_sequence: a function written into the file; both layouts, both sides
    ("pad-sequence-batch-first", "torch.nn.utils.rnn.pad_sequence([x[0], x[1, :2], x[2, :1]], batch_first=True, "
     "padding_value=-1.0)", {"x": [3, 4, 2]}, "values", "ms_pad_sequence([x[0], x[1, :2], x[2, :1]], batch_first=True"),
    ("pad-sequence-left", "torch.nn.utils.rnn.pad_sequence([x[0, :1], x[1]], padding_side='left')", {"x": [2, 3, 2]},
     "values", "ms_pad_sequence("),
    # Tensor.expand's keyword overload: MindSpore takes the tuple by position only
    ("expand-size-keyword", "torch.relu(x).expand(size=(3, 2, 4))", {"x": [2, 4]}, "values", ".expand((3, 2, 4))"),
    # torch.Tensor(n): n uninitialised float32 values (the shape and dtype are what can be compared)
    ("tensor-uninitialised-int", "torch.Tensor(x.shape[0])", {"x": [4]}, "shape", "tensor_float32(x.shape[0])"),
    ("tensor-uninitialised-sizes", "torch.Tensor(x.shape[0], 3)", {"x": [4]}, "shape",
     "tensor_float32(x.shape[0], 3)"),
    # antialias given as an expression: the adapter refuses only a value torch would not ignore
    ("interpolate-antialias-expr", "F.interpolate(x, scale_factor=2, mode='bilinear', antialias=x.dim() > 9)",
     {"x": [1, 2, 3, 2]}, "values", "ms_interpolate(x, scale_factor=2"),
    ("interpolate-antialias-size", "F.interpolate(x, size=(5, 4), mode='nearest', antialias=x.dim() > 9)",
     {"x": [1, 2, 3, 2]}, "values", "ms_interpolate("),
    # int64 indices as torch's; a generator seeds the op
    ("multinomial-generator", "torch.multinomial(torch.softmax(x, -1), 2, generator=torch.Generator())",
     {"x": [3, 6]}, "shape", "multinomial_int64("),
    ("multinomial-replacement", "torch.multinomial(torch.softmax(x, -1), 4, True)", {"x": [3, 6]}, "shape",
     "replacement=True"),
    # a receiver known to be a tensor (a torch result): Tensor.repeat has no CPU kernel
    ("repeat-varargs", "torch.abs(x).repeat(2, 1, 3)", {"x": [2, 3]}, "values", "x), (2, 1, 3))"),
    ("repeat-tuple", "torch.abs(x).repeat((2, 2))", {"x": [2, 3]}, "values", "x), (2, 2))"),
    # a torch device on a factory whose MindSpore twin has device= too: dropped, as everywhere else
    ("tensor-device", "torch.tensor([1.5, 2.5], device=x.device) * x", {"x": [2]}, "values", None),
    ("empty-device-shape", "torch.empty(0, 3, device=x.device).shape", {"x": [2]}, "values", None),
]


@pytest.fixture(scope="module")
def executed(real_kb, tmp_path_factory):
    return convert_and_run(real_kb, tmp_path_factory, lambda family: [
        Case(id=f"{family}/{cid}", source=snippet(expr, list(inputs), False), inputs=inputs, layer=False,
             compare=compare) for cid, expr, inputs, compare, _ in CALLS])


@pytest.mark.parametrize("family", ["classic", "mint"])
@pytest.mark.parametrize("cid, expr, inputs, compare, text", CALLS, ids=[c[0] for c in CALLS])
def test_call_converts_and_matches_torch(executed, family, cid, expr, inputs, compare, text):
    case = executed[f"{family}/{cid}"]
    assert_converted_and_matching(case, expr)
    text = text.get(family) if isinstance(text, dict) else text
    if text:
        assert text in case.converted
    assert "device=" not in case.converted


@pytest.fixture(scope="module", params=["classic", "mint"])
def cpu(real_kb, request):
    return Engine(real_kb, EngineSettings(family=request.param, device="CPU"))


AUTOCAST = '''import torch


def f(x, device):
    with torch.inference_mode(False), torch.autocast(device_type=device.type, enabled=False):
        y = x * 2
    with torch.autocast("cpu", None, False):
        y = y + 1
    return y
'''


def test_autocast_turned_off_is_removed_and_its_body_kept(cpu):
    out = converted(cpu, AUTOCAST)
    assert "autocast" not in out and "with " not in out and "torch" not in out
    assert "    y = x * 2\n    y = y + 1\n    return y\n" in out


@pytest.mark.parametrize("call", ['torch.autocast("cpu")', 'torch.autocast("cpu", torch.bfloat16)',
                                  'torch.autocast("cpu", enabled=flag)', 'torch.autocast("cpu", enabled=True)'])
def test_autocast_that_may_be_on_becomes_the_helper_that_refuses_low_precision(cpu, call):
    # MsAutocast raises NotImplementedError when a region torch computes in low precision is entered
    # (tests/analysis/test_amp_rules.py runs it)
    out = converted(cpu, f"import torch\n\n\ndef f(x, flag):\n    with {call}:\n        return x * 2\n")
    assert "with MsAutocast(\"cpu\"" in out and "class MsAutocast(object):" in out and "# msmap:" not in out


def test_unsupported_parameter_as_a_variable_goes_through_a_checking_adapter(cpu):
    src = ("import torch.nn.functional as F\n\n\ndef f(x, antialias):\n"
           "    return F.interpolate(x, size=(4, 4), mode='bilinear', antialias=antialias)\n")
    out = converted(cpu, src)  # (mode='bicubic' differs from torch: a curated call form found it)
    assert "return ms_interpolate(x, size=(4, 4), mode='bilinear', antialias=antialias)" in out
    assert "# msmap:" not in out and not torch_left(out)  # (the adapter's messages name torch's API)
    definition = out[out.index("def ms_interpolate("):out.index("def f(")]
    namespace: dict = {"ms": None}  # the guard runs before anything of MindSpore is touched
    exec(compile(definition, "<adapter>", "exec"), namespace)
    with pytest.raises(NotImplementedError, match="antialias"):
        namespace["ms_interpolate"](None, size=(4, 4), antialias=True)


def test_unsupported_parameter_as_a_literal_is_left_with_the_reason(cpu):
    src = "import torch.nn.functional as F\ny = F.interpolate(x, size=(4, 4), mode='bilinear', antialias=True)\n"
    out = converted(cpu, src)
    assert "F.interpolate(" in out and "ms_interpolate" not in out
    assert "# msmap: torch parameter 'antialias' has no MindSpore equivalent" in out


def test_tensor_by_shape_gets_its_shape(cpu):
    """``torch.Tensor(2, 3)`` (sizes, values never initialised): zeros of that shape, float32 (the call cases
    above compare shape and dtype with torch's)."""
    out = converted(cpu, "import torch\nz = torch.Tensor(2, 3)\nt = torch.Tensor\n")
    assert "z = tensor_float32(2, 3)\n" in out and "return ms.ops.zeros(data, ms.float32)" in out
    assert "t = ms.Tensor\n" in out  # the class as a value is still the same-named class


def test_device_annotation_becomes_object_where_the_call_has_a_template(cpu):
    src = ("import torch\nfrom typing import Optional, Union\n\n\n"
           "def f(device: torch.device, other: Optional[Union[str, torch.device]] = None):\n"
           "    return torch.device('cpu')\n")
    out = converted(cpu, src)
    assert "def f(device: object, other: Optional[Union[str, object]] = None):" in out
    assert "torch" not in out


def test_template_conditions_must_be_literals():
    check_template("{enabled=False}")
    check_template("{self}.tile({repeats}){flag='x'}")
    for bad in ("{enabled=flag}", "{?enabled=False}"):
        with pytest.raises(ValueError, match="condition"):
            check_template(bad)


def test_generator_seeds_multinomial_and_replacement_is_torch_default(real_kb):
    classic = Engine(real_kb, EngineSettings(device="CPU"))
    out = convert_source(classic, "import torch\ng = torch.Generator()\ni = torch.multinomial(p, 1, generator=g)\n").text
    assert "i = multinomial_int64(p, 1, generator=g)" in out
    assert "def multinomial_int64(input, num_samples, replacement=False, generator=None):" in out
    assert "generator.initial_seed()" in out


def test_inplace_on_a_tensor_other_code_sees_keeps_its_marker(classic):
    """``y = F.relu6(x, inplace=True)`` changes x for the code after it: MindSpore cannot, so it converts with the
    marker (rules/inplace_activations.py)."""
    text = convert_source(classic, "import torch.nn.functional as F\n\n\ndef f(x):\n"
                          "    x = F.leaky_relu(x, 0.2, inplace=True)\n    y = F.relu6(x, inplace=True)\n"
                          "    return x, y\n").text
    assert "x = ms.ops.leaky_relu(x, 0.2)\n" in text  # assigned back to its own name: nothing else sees it
    assert "y = ms.ops.relu6(x)  # msmap: torch's inplace=True also overwrote the input" in text
