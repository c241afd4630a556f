"""Rewrites proven in issue 26's second round, converted with the real KB per family (device CPU) and run next to
torch in one batch: int64 counts and int32 indices cast where MindSpore's kernels differ (bincount, index_add,
Tensor.multinomial), torch.where's one-argument form, one_hot's input= keyword, the functional convolutions'
padding (pad_mode='pad'), whole-tensor aminmax/nanmedian, nansum's keepdim, torch.avg_pool1d's stride, polygamma's
n as a tensor, linalg.vander's increasing powers, functions of a value domain (asin, atanh, erfinv, logit: proven
on float inputs they are defined for), and names a skip word used to hide (quantile, nn.Identity). Calls no proof
covers keep a marker; the probe machinery's new pieces (domain inputs, dtype-only kernel misses, typed call forms)
are checked directly."""
from __future__ import annotations

import textwrap
from typing import Any

import pytest

from kb.probes import rewrites
from kb.probes.calls import Case
from tests.analysis.executed import FAMILIES, assert_converted_and_matching, convert_and_run, converted_line

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
INDEX = {"shape": [2], "dtype": "int64", "range": [0, 2]}
COUNTS = {"shape": [7], "dtype": "int64", "range": [0, 4]}
PROBS = {"shape": [3, 5], "range": [0.1, 1.0]}

# (id, body of run(...), run's parameters (typed as tensors), inputs, text the conversion holds, compare)
CASES: list[tuple[str, str, str, dict[str, Any], str, str]] = [
    ("bincount", "return torch.bincount(a)", "a", {"a": COUNTS}, "ms.int64", "values"),
    ("bincount-minlength", "return torch.bincount(a, minlength=9)", "a", {"a": COUNTS}, "minlength=9", "values"),
    ("tensor-bincount", "return a.bincount(minlength=6)", "a", {"a": COUNTS}, "ms.int64", "values"),
    ("index-add", "return torch.index_add(x, 1, i, s)", "x, i, s", {"x": [2, 3, 4], "i": INDEX, "s": [2, 2, 4]},
     "ms.int32", "values"),
    ("tensor-index-add-alpha", "return x.index_add(0, i, s, alpha=2.0)", "x, i, s",
     {"x": [3, 4], "i": INDEX, "s": [2, 4]}, "alpha=2.0", "values"),
    ("where-one-arg", "return torch.where(m)", "m", {"m": {"shape": [3, 4], "dtype": "bool"}}, "nonzero", "values"),
    ("where-one-arg-1d", "return torch.where(v > 0)", "v", {"v": [7]}, "nonzero", "values"),
    ("one-hot-input-kw", "return F.one_hot(input=a, num_classes=5)", "a",
     {"a": {"shape": [2, 3], "dtype": "int64", "range": [0, 4]}}, "ms_one_hot(a, num_classes=5)", "values"),
    ("conv1d-padding", "return F.conv1d(x, w, b, stride=2, padding=1)", "x, w, b",
     {"x": [2, 3, 9], "w": [4, 3, 3], "b": [4]}, "pad_mode='pad'", "values"),
    ("conv1d-padding-groups", "return F.conv1d(x, w, padding=1, groups=4)", "x, w", {"x": [2, 8, 9], "w": [8, 2, 3]},
     "pad_mode='pad'", "values"),
    ("conv3d-padding", "return F.conv3d(x, w, padding=1)", "x, w", {"x": [1, 3, 4, 4, 4], "w": [4, 3, 3, 3, 3]},
     "pad_mode='pad'", "values"),
    ("asin", "return torch.asin(x)", "x", {"x": {"shape": [3, 4], "range": [-0.9, 0.9]}}, "asin", "values"),
    ("tensor-atanh", "return x.atanh()", "x", {"x": {"shape": [3, 4], "range": [-0.9, 0.9]}}, "atanh", "values"),
    ("logit", "return torch.logit(x)", "x", {"x": {"shape": [3, 4], "range": [0.05, 0.95]}}, "logit", "values"),
    ("tensor-multinomial", "return p.multinomial(2)", "p", {"p": PROBS}, "multinomial_int64(p, 2)", "shape"),
    ("is-floating-point", "return x.is_floating_point()", "x", {"x": [2, 3]}, "is_floating_point", "values"),
    # whole-tensor reductions, torch's pooling stride, argument types MindSpore wants, power order
    ("tensor-aminmax-all", "return x.aminmax()", "x", {"x": [3, 4]}, "reshape(x, (-1,))", "values"),
    ("nanmedian-all", "return torch.nanmedian(x)", "x", {"x": [3, 5]}, "[0]", "values"),
    ("tensor-nansum-keepdim", "return x.nansum(dim=1, keepdim=True)", "x", {"x": [3, 4]}, "keepdims=True", "values"),
    ("avg-pool1d", "return torch.avg_pool1d(x, 3)", "x", {"x": [2, 3, 8]}, "stride=3", "values"),
    ("polygamma", "return torch.polygamma(1, x)", "x", {"x": {"shape": [3, 4], "range": [0.5, 3.0]}}, "ms.int64",
     "values"),
    ("linalg-vander", "return torch.linalg.vander(v)", "v", {"v": [4]}, "flip(", "values"),
    ("tensor-index-fill", "return x.index_fill(1, i, -1.0)", "x, i", {"x": [2, 3, 4], "i": INDEX}, "ms.int32",
     "values"),
    ("qr-complete", "return torch.qr(a, some=False)", "a", {"a": [4, 3]}, "mode='complete'", "values"),
    ("mvlgamma", "return torch.mvlgamma(x, 3)", "x", {"x": {"shape": [3, 4], "range": [1.1, 3.0]}}, "mvlgamma",
     "values"),
]


def source(body: str, params: str) -> str:
    typed = ", ".join(f"{p.strip()}: torch.Tensor" for p in params.split(","))
    return HEAD + f"def run({typed}):\n" + textwrap.indent(body, "    ") + "\n"


@pytest.fixture(scope="module")
def executed(real_kb, tmp_path_factory):
    def cases(family: str) -> list[Case]:
        made = [Case(id=f"{family}/{cid}", source=source(body, params), inputs=inputs, compare=compare)
                for cid, body, params, inputs, _, compare in CASES]
        made.append(Case(id=f"{family}/identity", source=HEAD + "def make():\n    return nn.Identity()\n",
                         inputs={"x": [2, 3]}, layer=True))
        return made

    return convert_and_run(real_kb, tmp_path_factory, cases)


@pytest.mark.parametrize("call, reason", [
    ("torch.bincount(a, weights=w)", "weights"),  # torch keeps the weights' dtype: no template takes it
    ("torch.quantile(x, 0.5)", "Unproven rewrite"),  # no CPU kernel (Quantile): no longer hidden as uncallable
    ("F.interpolate(x, scale_factor=2, mode='bicubic')", "bicubic"),  # MindSpore's bicubic differs
])
@pytest.mark.parametrize("family", FAMILIES)
def test_a_call_no_round_two_proof_covers_keeps_its_marker(request, family, call, reason):
    line = converted_line(request.getfixturevalue(family), HEAD, "x, a, w", call)
    assert "# msmap:" in line and reason in line, line


@pytest.mark.parametrize("cid, body, params, inputs, text, compare", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("family", FAMILIES)
def test_a_round_two_rewrite_converts_and_gives_torch_s_result(executed, family, cid, body, params, inputs, text,
                                                               compare):
    case = executed[f"{family}/{cid}"]
    assert text in case.converted, case.converted
    assert_converted_and_matching(case, body)
    if cid == CASES[0][0]:  # the layer nn.Identity (once per family)
        assert_converted_and_matching(executed[f"{family}/identity"], "nn.Identity()")


@pytest.mark.parametrize("call, reason", [
    ("x.kthvalue(2)", "Rewrite probe"),  # crashed in MindSpore
    ("x.svd()", "Rewrite probe"),  # other shapes
    ("x.quantile(0.5)", "Unproven rewrite"),  # no CPU kernel
])
@pytest.mark.parametrize("family", FAMILIES)
def test_a_known_tensor_s_method_without_a_proof_is_marked_not_left_as_written(request, family, call, reason):
    """The receiver is a tensor (annotated) and the method's target is not automatic: the call as written is not
    proven, so it gets a marker instead of passing silently for a method that needs nothing."""
    line = converted_line(request.getfixturevalue(family), HEAD, "x: torch.Tensor", call)
    assert "# msmap:" in line and reason in line, line
    untyped = converted_line(request.getfixturevalue(family), HEAD, "x", call)
    assert "# msmap:" not in untyped, untyped  # an unknown receiver (maybe no tensor) stays as it was


@pytest.mark.parametrize("call, marked", [
    ("x.dim()", False),  # mindspore.Tensor.dim: the same call, nothing found against it
    ("x.element_size()", True),  # MindSpore spells it x.itemsize (an attribute): as written it raises
])
@pytest.mark.parametrize("family", FAMILIES)
def test_a_known_tensor_s_method_left_as_written_is_marked_only_when_it_would_not_run(request, family, call,
                                                                                        marked):
    """Not automatic is not enough for a marker on a method left as written: only a different MindSpore name,
    a relation that does not convert as it is, or a probe that found it crash, differ or lack a kernel."""
    line = converted_line(request.getfixturevalue(family), HEAD, "x: torch.Tensor", call)
    assert ("# msmap:" in line) is marked, line


@pytest.mark.parametrize("call", ["nn.init.normal_(w, mean=1.0, std=0.1)", "nn.init.normal_(w, 0, 1)",
                                  "nn.init.normal_(w, mean=2.5, std=0.5)", "nn.init.normal_(w, -0.5, 2.5)"])
@pytest.mark.parametrize("family", FAMILIES)
def test_an_init_s_usual_values_convert(request, family, call):
    """A model's usual init values (a shifted mean, a unit or larger std) convert: a value gate on an initialiser
    must not make a mean=1.0 scale init raise at construction."""
    line = converted_line(request.getfixturevalue(family), HEAD, "w: torch.Tensor", call)
    assert "# msmap:" not in line and "ms_init_(" in line, line


def test_domain_inputs_come_before_integer_and_bool_inputs():
    variants = rewrites._variants("torch.asin")
    kinds = [v[1] for v in variants]
    first_int = kinds.index("int64")
    assert all(k == "float32" for k in kinds[:first_int]) and "bool" in kinds[first_int:]
    assert [[2, 3, 4], "float32", [-0.9, 0.9]] in variants[:first_int]  # asin, atanh, erfinv
    assert [[2, 3, 4], "float32", [0.05, 0.95]] in variants[:first_int]  # logit


def test_skip_words_do_not_hide_computations():
    assert rewrites._skip_word("quantile") is None and rewrites._skip_word("nanquantile") is None
    assert rewrites._skip_word("Identity") is None
    assert "quant" in str(rewrites._skip_word("quantize_per_tensor"))
    assert "seed" in str(rewrites._skip_word("manual_seed"))


def test_a_kernel_missing_for_one_dtype_is_probed_again(tmp_path):
    versions = {"mindspore": "2.10.0", "torch": "2.13.0"}
    rows = [{"probe": "rewrite/classic/torch.asin", "ms_api": "mindspore.ops.asin", "result": "unprobed",
             "detail": "no executed rewrite: no_cpu_kernel: TypeError: Select CPU operator[Asin] fail! Unsupported "
                       "data type!", **{f"{k}_version": v for k, v in versions.items()}},
            {"probe": "rewrite/mint/torch.acos", "ms_api": "mindspore.mint.acos", "result": "unprobed",
             "detail": "no executed rewrite: no_cpu_kernel: RuntimeError: The kernel AcosExt unregistered.",
             "ms_version": "2.10.0", "torch_version": "2.13.0"}]
    path = tmp_path / "rows.jsonl"
    import json

    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    known = rewrites._no_kernel_rows(path, versions)
    assert list(known) == [("rewrite/mint/torch.acos", "mindspore.mint.acos")]


def test_a_typed_call_form_annotates_its_inputs(tmp_path):
    from kb.probes import callforms

    path = tmp_path / "forms.yaml"
    path.write_text("- {id: m, torch: torch.Tensor.bincount, expr: 'a.bincount()', inputs: {a: [3]}, typed: true}\n"
                    "- {id: f, torch: torch.bincount, expr: 'torch.bincount(a)', inputs: {a: [3]}}\n")
    typed, plain = callforms._cases(callforms.load(path), "classic")
    assert "def run(a: torch.Tensor):" in typed.source and "def run(a):" in plain.source
