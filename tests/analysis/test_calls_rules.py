"""Rewrite rules found by the single-calls benchmark (benchmarks/bench_calls.py), each checked by
converting a torch call with the engine (``--device CPU``, both families) and running torch and the
emitted MindSpore code in isolated subprocesses (kb.probes.calls: values, shapes and dtypes, so
int32 indices where torch gives int64 fail). The calls here are not the benchmark's."""
from __future__ import annotations

import pytest

from kb.analysis import Engine, EngineSettings
from kb.analysis.convert import convert_source
from kb.analysis.transforms import Refused, apply_transform
from kb.probes.calls import Case, snippet
from tests.analysis.executed import assert_converted_and_matching, convert_and_run

F32 = "float32"
INTS = {"shape": [3, 4], "dtype": "int64", "range": [0, 2]}
LABELS = {"shape": [5], "dtype": "int64", "range": [0, 3]}

# (id, torch expression, inputs, is a layer, compare, text the classic rewrite must hold)
CALLS = [
    # an explicit None where torch computes the value is the omitted argument (stride=kernel_size)
    ("maxpool-stride-none", "nn.MaxPool2d(3, None)", {"x": [1, 2, 9, 9]}, True, "values", "stride=3"),
    ("avgpool1d-stride-none-kw", "nn.AvgPool1d(kernel_size=2, stride=None)", {"x": [2, 3, 9]}, True, "values",
     "stride=2"),
    ("f-avgpool2d-stride-none", "F.avg_pool2d(x, 3, None)", {"x": [1, 2, 9, 9]}, False, "values", "stride=3"),
    # F.avg_pool stride defaults to kernel_size in torch, to 1 in MindSpore
    ("f-avgpool2d-default-stride", "F.avg_pool2d(x, 3)", {"x": [1, 2, 9, 9]}, False, "values", "stride=3"),
    ("f-avgpool1d-default-stride", "F.avg_pool1d(x, kernel_size=3)", {"x": [2, 2, 9]}, False, "values",
     "stride=3"),
    # int64 indices as torch (the classic ops give int32 on CPU)
    ("topk-int64", "torch.topk(x, 3, dim=0)", {"x": [5, 4]}, False, "values", "int64"),
    ("sort-int64", "torch.sort(x, 0, descending=True)", {"x": [5, 4]}, False, "values", "int64"),
    ("argsort-int64", "torch.argsort(x, dim=0, descending=True)", {"x": [5, 4]}, False, "values", "int64"),
    ("argmin-int64", "torch.argmin(x, 1, keepdim=True)", {"x": [5, 4]}, False, "values", "int64"),
    ("count-nonzero-all", "torch.count_nonzero(m)", {"m": INTS}, False, "values", "int64"),
    ("count-nonzero-dim", "torch.count_nonzero(m, dim=0)", {"m": INTS}, False, "values", "int64"),
    # torch.max/min without dim is the reduction alone, not a (value, index) pair
    ("max-no-dim", "torch.max(x)", {"x": [3, 4, 2]}, False, "values", "amax"),
    ("min-no-dim", "torch.min(x)", {"x": [3, 4, 2]}, False, "values", "amin"),
    ("min-dim", "torch.min(x, dim=1)", {"x": [3, 4]}, False, "values", None),
    # the dim overloads, positional as training loops write them (_, predicted = torch.max(output, 1))
    ("max-dim-positional", "torch.max(x, 1)", {"x": [3, 4]}, False, "values", None),
    ("tensor-max-dim", "x.max(1)", {"x": [3, 4]}, False, "values", None),
    ("tensor-min-dim-keepdim", "x.min(-1, keepdim=True)", {"x": [3, 4]}, False, "values", "keepdim=True"),
    ("tensor-max-all", "x.max()", {"x": [3, 4]}, False, "values", None),
    # Tensor.log_softmax has no recorded signature: its dim by position (torch_signature in the data)
    ("tensor-squeeze-dim", "torch.relu(x).squeeze(-1)", {"x": [3, 4, 1]}, False, "values", "axis=-1"),
    ("tensor-squeeze-dim-kw", "torch.relu(x).squeeze(dim=0)", {"x": [1, 4, 2]}, False, "values", "axis=0"),
    ("tensor-log-softmax-positional", "torch.relu(x).log_softmax(1)", {"x": [3, 4]}, False, "values", "axis=1"),
    # torch.full infers the dtype from the fill value
    ("full-float", "torch.full((3,), 2.5)", {}, False, "values", "dtype="),
    ("full-int", "torch.full((2, 2), 4)", {}, False, "values", "dtype="),
    ("full-bool", "torch.full((2,), True)", {}, False, "values", "dtype="),
    # torch.dot of 1-D tensors (ops.dot refuses 1-D)
    ("dot-1d", "torch.dot(a, b)", {"a": [5], "b": [5]}, False, "values", "inner"),
    # keywords of overloads the recorded torch signature lacks
    ("prod-dim-kw", "torch.prod(x, dim=0, keepdim=True)", {"x": {"shape": [3, 2], "range": [0.5, 1.5]}}, False,
     "values", None),
    ("any-dim-kw", "torch.any(b, dim=0)", {"b": {"shape": [3, 4], "dtype": "bool"}}, False, "values", None),
    ("randn-size-kw", "torch.randn(size=(4, 2))", {}, False, "shape", None),
    ("broadcast-size-kw", "torch.broadcast_to(x, size=(3, 2, 4))", {"x": [2, 1]}, False, "values", "shape="),
    # integral scale factors: a float, recomputed output size
    ("upsample-int-scale", "nn.Upsample(scale_factor=3)", {"x": [1, 2, 2, 3]}, True, "values", None),
    ("interpolate-bilinear", "F.interpolate(x, scale_factor=2, mode='bilinear', align_corners=False)",
     {"x": [1, 2, 3, 2]}, False, "values", None),
    # int64 class labels (classic nn.CrossEntropyLoss wants int32)
    ("cross-entropy-int64", "nn.CrossEntropyLoss(reduction='sum')", {"x": [5, 4], "t": LABELS}, True, "values",
     None),
    ("cross-entropy-ignore", "nn.CrossEntropyLoss(ignore_index=1)", {"x": [5, 4], "t": LABELS}, True, "values",
     None),
    # ops.elu takes only alpha=1.0
    ("elu-alpha", "F.elu(x, alpha=2.0)", {"x": [3, 4]}, False, "values", None),
    # ops without a CPU kernel (kernel probes): another op that runs there, or the other family's target
    ("roll-tuple", "torch.roll(x, shifts=(1, -1), dims=(0, 1))", {"x": [3, 4]}, False, "values", "numpy.roll"),
    ("roll-flat", "torch.roll(x, 2)", {"x": [2, 3]}, False, "values", "numpy.roll"),
    ("normalize-p3", "F.normalize(x, p=3.0, dim=0)", {"x": [4, 3]}, False, "values", "lp_normalize"),
    ("embedding-1d", "F.embedding(i, w)", {"i": {"shape": [3], "dtype": "int64", "range": [0, 5]}, "w": [6, 2]},
     False, "values", "gather"),
    ("scatter-add-dim0", "torch.scatter_add(x, 0, i, s)",
     {"x": [3, 4], "i": {"shape": [2, 4], "dtype": "int64", "range": [0, 2]}, "s": [2, 4]}, False, "values",
     "tensor_scatter_elements"),
    ("index-select-dim1", "torch.index_select(x, 1, i)", {"x": [3, 4], "i": {"shape": [3], "dtype": "int64",
                                                                               "range": [0, 3]}}, False, "values", None),
    ("kl-div-sum", "F.kl_div(x, y, reduction='sum')", {"x": [3, 4], "y": {"shape": [3, 4], "range": [0.1, 1]}},
     False, "values", "ops.kl_div"),
    ("kl-div-loss-sum", "nn.KLDivLoss(reduction='sum')", {"x": [3, 4], "y": {"shape": [3, 4], "range": [0.1, 1]}},
     True, "values", None),
    ("upsample-bilinear-corners", "nn.Upsample(scale_factor=3.0, mode='bilinear', align_corners=True)",
     {"x": [1, 1, 2, 2]}, True, "values", None),
    ("threshold-negative", "nn.Threshold(0.5, -1.0)", {"x": [3, 4]}, True, "values", None),
    ("zero-pad-asymmetric", "nn.ZeroPad2d((1, 0, 2, 1))", {"x": [1, 1, 2, 3]}, True, "values", None),
    ("addmm-beta", "torch.addmm(c, a, b, beta=0.5)", {"c": [2, 2], "a": [2, 3], "b": [3, 2]}, False, "values", None),
    ("cosine-embedding-margin", "nn.CosineEmbeddingLoss(margin=0.2)",
     {"a": [4, 3], "b": [4, 3], "y": {"shape": [4], "range": [-1, 1]}}, True, "values", None),
    # std/var: ddof=1 written for torch's default correction
    ("std-dims", "torch.std(x, dim=(0, 1))", {"x": [3, 4, 2]}, False, "values", "ddof=1"),
    ("var-keepdim", "torch.var(x, 0, keepdim=True)", {"x": [4, 3]}, False, "values", "ddof=1"),
    # torch signatures the introspection lacked or got wrong: keywords now placed
    ("searchsorted-input-kw", "torch.searchsorted(torch.arange(0.0, 4.0), input=v, right=True)",
     {"v": {"shape": [5], "range": [-1, 5]}}, False, "values", "values=v"),
    ("log-softmax-kw", "torch.log_softmax(input=x, dim=0)", {"x": [3, 4]}, False, "values", "axis=0"),
    ("masked-fill-kw", "torch.masked_fill(input=x, mask=m, value=-1.0)",
     {"x": [3, 4], "m": {"shape": [3, 4], "dtype": "bool"}}, False, "values", "input_x="),
    ("relu-kw", "torch.relu(input=x)", {"x": [3, 4]}, False, "values", None),
    # softmin: dim is axis
    ("softmin-3d-dim0", "nn.Softmin(dim=0)", {"x": [2, 3, 4]}, True, "values", "axis=0"),
    ("f-softmin-dim-pos", "F.softmin(x, 2)", {"x": [2, 3, 4]}, False, "values", None),
    # F.batch_norm in inference: None weight/bias are ones/zeros (ops.batch_norm needs tensors)
    ("f-batch-norm-weight", "F.batch_norm(x, rm, rv, w, None, False, 0.2, 1e-3)",
     {"x": [3, 2, 5], "rm": [2], "rv": {"shape": [2], "range": [0.5, 1.5]}, "w": [2]}, False, "values",
     "batch_norm_eval"),
    # torch.finfo / iinfo of a dtype: NumPy's finfo / iinfo of the same type (helpers written into the file)
    ("finfo-eps", "x * 0 + torch.finfo(x.dtype).eps", {"x": [2, 3]}, False, "values", "ms_finfo(x.dtype).eps"),
    ("finfo-default-max", "x.clamp(max=torch.finfo().max)", {"x": [2, 3]}, False, "values", "ms_finfo()"),
    ("iinfo-max", "x * 0 + torch.iinfo(torch.int16).max", {"x": [2, 3]}, False, "values", "ms_iinfo("),
    ("finfo-mask-fill", "x.masked_fill(x > 0, -torch.finfo(x.dtype).max)", {"x": [2, 3]}, False, "values", None),
    # torch.randint(high, size): two positionals start at 0 (ops.randint needs low)
    ("randint-high-size", "torch.randint(5, (3, 4))", {}, False, "shape", "randint(0, 5, (3, 4))"),
    ("randint-high-size-kw", "torch.randint(5, size=(2,))", {}, False, "shape", "randint(0, 5, (2,))"),
    ("randint-low-high-size", "torch.randint(2, 5, (3,))", {}, False, "shape", "randint(2, 5, (3,))"),
    # a size unpacked into torch's *size: a tuple display
    ("zeros-unpacked-shape", "torch.zeros(*x.shape)", {"x": [2, 3]}, False, "values", "(*x.shape,)"),
    ("randn-unpacked-shape", "torch.randn(*x.shape, dtype=torch.float32)", {"x": [2, 3]}, False, "shape", None),
    # nn.RMSNorm where ops.rms_norm has no kernel (CPU): the MsRMSNorm Cell written into the file
    ("rmsnorm-default-eps", "nn.RMSNorm(8)", {"x": [2, 3, 8]}, True, "values", "MsRMSNorm(8)"),
    ("rmsnorm-two-axes", "nn.RMSNorm((3, 8), eps=1e-6, elementwise_affine=False)", {"x": [2, 3, 8]}, True,
     "values", None),
    # an int margin is written as a float (ops.margin_ranking_loss refuses ints)
    ("margin-ranking-int", "F.margin_ranking_loss(a, b, y, 1, reduction='sum')",
     {"a": [5], "b": [5], "y": {"shape": [5], "range": [-1, 1]}}, False, "values", "1.0"),
]


@pytest.fixture(scope="module")
def executed(real_kb, tmp_path_factory):
    """Every call converted per family and run next to torch (one batch of subprocesses)."""
    return convert_and_run(real_kb, tmp_path_factory, lambda family: [
        Case(id=f"{family}/{cid}", source=snippet(expr, list(inputs), layer), inputs=inputs, layer=layer,
             compare=compare) for cid, expr, inputs, layer, compare, _ in CALLS])


@pytest.mark.parametrize("family", ["classic", "mint"])
@pytest.mark.parametrize("cid, expr, inputs, layer, compare, text", CALLS, ids=[c[0] for c in CALLS])
def test_call_converts_and_matches_torch(executed, family, cid, expr, inputs, layer, compare, text):
    case = executed[f"{family}/{cid}"]
    assert_converted_and_matching(case, expr)
    if text and family == "classic":
        assert text in case.converted


def test_several_axes_layernorm_is_left_with_the_reason(classic):
    out = convert_source(classic, "import torch.nn as nn\nn1 = nn.LayerNorm([4, 5])\nn2 = nn.LayerNorm(5)\n").text
    assert "nn.LayerNorm([4, 5])  # msmap: normalized_shape has several axes" in out
    assert "n2 = ms.nn.LayerNorm((5,), epsilon=1e-05)" in out  # one axis: begin axes stay -1 (the default)


def test_explicit_none_kept_where_mindspore_also_defaults_to_none(classic):
    out = convert_source(classic, "import torch\ny = torch.topk(x, 2, dim=None)\n")
    assert "topk_int64(x, 2, dim=None)" in out.text  # ops.topk's dim=None is the last axis, as torch's


def test_refuse_in_a_transform_blocks_a_literal_and_substitutes_an_expression():
    transform = "v if v > 0 else refuse('needs a positive value')"
    assert apply_transform(transform, "3") == "3"
    with pytest.raises(Refused, match="needs a positive value"):
        apply_transform(transform, "-1")


@pytest.mark.parametrize("family", ["classic", "mint"])
@pytest.mark.parametrize("source", ["y = torch.take(x, i)\n", "loss = nn.SoftMarginLoss()\n"])
def test_an_op_without_a_cpu_kernel_in_either_family_is_left_with_the_reason(real_kb, family, source):
    engine = Engine(real_kb, EngineSettings(family=family, device="CPU"))
    out = convert_source(engine, "import torch\nimport torch.nn as nn\n" + source).text
    assert "# msmap:" in out and "kernel" in out


def test_softmin_without_dim_is_left_with_the_reason(classic):
    out = convert_source(classic, "import torch.nn as nn\nimport torch.nn.functional as F\n"
                                  "a = nn.Softmin()\nb = F.softmin(x)\n").text
    assert "a = nn.Softmin()  # msmap: without dim torch picks the axis" in out
    assert "b = F.softmin(x)  # msmap: without dim torch picks the axis" in out


def test_batch_norm_in_training_mode_is_left(classic):
    out = convert_source(classic, "import torch.nn.functional as F\ny = F.batch_norm(x, rm, rv, training=True)\n").text
    assert "y = F.batch_norm(x, rm, rv, training=True)  # msmap:" in out


def test_rms_norm_keeps_the_fused_op_where_it_has_a_kernel(real_kb):
    ascend = Engine(real_kb, EngineSettings(device="Ascend"))
    out = convert_source(ascend, "import torch.nn as nn\nnorm = nn.RMSNorm(8)\n").text
    assert "MsRMSNorm" not in out and "# msmap:" in out  # ops.rms_norm is left for the fused op, by hand
