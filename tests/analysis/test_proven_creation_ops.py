"""Creation functions, grids, fold/unfold, complex views and the most-used names whose rewrite differed from
torch (std/var's correction, int64 indices, tile's list, one_hot's inferred count, cells without a state) convert
as real model files call them (issue 26): a parameter the call leaves at torch's default (``layout``, ``out``,
``requires_grad=False``) or passes where MindSpore places tensors itself (``device=``) blocks nothing; the
rewrites emitted are the ones the call forms proved (data/probes/callforms.yaml; the rules in
data/curated/creation_grids.yaml, reductions_indices.yaml and layer_calls.yaml). Each call is converted per
family (``--device CPU``) and run next to torch (values, shapes and dtypes); a value MindSpore cannot honour
keeps its marker."""
from __future__ import annotations

import json

import pytest

from kb.analysis.convert import convert_source
from kb.build import _apply_rewrite_proof
from kb.probes.calls import Case, snippet
from tests.analysis.executed import assert_converted_and_matching, convert_and_run

# (id, torch expression, inputs, is a layer, text the classic rewrite must hold)
CALLS = [
    # windows: torch's float32 (MindSpore gives float64), an int length (bartlett/blackman want a Tensor)
    ("hann-symmetric", "torch.hann_window(10, periodic=False)", {}, False, ".astype(ms.float32)"),
    ("hann-device-no-grad", "torch.hann_window(x.shape[-1], device=x.device, requires_grad=False) * x",
     {"x": [2, 5]}, False, None),
    ("bartlett-dtype", "torch.bartlett_window(5, dtype=torch.float64)", {}, False, "ms.Tensor(5)"),
    ("blackman-periodic", "torch.blackman_window(12, True)", {}, False, None),
    ("kaiser-beta", "torch.kaiser_window(6, False, 5.0)", {}, False, None),
    # ranges: logspace's float base and int ends, linspace's dtype, arange and eye on a device
    ("logspace-base", "torch.logspace(0., 2., 5, base=2)", {}, False, "ms_logspace("),
    ("logspace-int-ends", "torch.logspace(-2, 2, 5)", {}, False, None),
    ("linspace-dtype-device", "torch.linspace(0, 3, 4, dtype=torch.float64, device=x.device)", {"x": [1]}, False,
     None),
    ("arange-device-dtype", "torch.arange(1, 7, 2, dtype=torch.float32, device=x.device) + x", {"x": [3]}, False,
     None),
    ("eye-device", "torch.eye(4, device=x.device, requires_grad=False) @ x", {"x": [4, 2]}, False, None),
    ("full-device", "torch.full(x.shape, 0.5, device=x.device) * x", {"x": [2, 3]}, False, None),
    ("empty-device", "torch.empty(3, 2, device=x.device).shape", {"x": [1]}, False, None),
    # meshgrid: torch's 'ij' default, a list of tensors
    ("meshgrid-default", "torch.meshgrid(a, b)", {"a": [2], "b": [3]}, False, "ms_meshgrid(a, b)"),
    ("meshgrid-list-xy", "torch.meshgrid([a, b], indexing='xy')", {"a": [4], "b": [3]}, False, None),
    # F.pad's constant value written as an int or a bool
    ("pad-int-value", "F.pad(x, (2, 1), value=0)", {"x": [2, 3]}, False, None),
    ("pad-bool-value", "F.pad(x < 0, (0, 0, 1, 0), value=True)", {"x": [2, 3, 2]}, False, None),
    # as_tensor with a device, complex views
    ("as-tensor-device", "torch.as_tensor([[1.0], [2.0]], device=x.device) * x", {"x": [2, 3]}, False,
     "ms_as_tensor("),
    ("complex-roundtrip", "torch.view_as_real(torch.view_as_complex(x) * 2)", {"x": [2, 3, 2]}, False, None),
    # im2col / col2im (mint's classes have no CPU kernel: a cell over ops.unfold / ops.fold)
    ("unfold-layer", "nn.Unfold(kernel_size=3, stride=2, padding=1)", {"x": [1, 2, 7, 7]}, True, "MsUnfold("),
    ("fold-layer", "nn.Fold(output_size=4, kernel_size=2, stride=2)", {"x": [2, 8, 4]}, True, "MsFold("),
    ("f-fold", "F.fold(x, (3, 4), (2, 2))", {"x": [1, 8, 6]}, False, "ms_fold("),
    # Transformer stacks with torch's weights (dropout is off in eval mode)
    ("encoder-stack", "nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 4, 12, batch_first=True), 3)",
     {"x": [3, 4, 8]}, True, None),
    ("decoder-stack", "nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 12, activation='gelu'), 2)",
     {"t": [3, 2, 8], "m": [4, 2, 8]}, True, None),
    # reductions with torch's defaults: unbiased std/var (MindSpore divides by n), the median of all values
    ("tensor-var-layernorm", "torch.tanh(x).var(-1, unbiased=False, keepdim=True)", {"x": [2, 5]}, False, "ddof=0"),
    ("tensor-std-default", "torch.tanh(x).std(dim=0)", {"x": [4, 3]}, False, "ddof=1"),
    ("median-all", "torch.median(x)", {"x": [3, 4]}, False, "ms_median("),
    # int64 indices (MindSpore's Tensor methods give int32), repeats as a list, sliding windows
    ("tensor-topk", "torch.tanh(x).topk(2)", {"x": [3, 5]}, False, "topk_int64("),
    ("tensor-sort", "torch.tanh(x).sort(1, descending=True)", {"x": [3, 5]}, False, None),
    ("tensor-tile-list", "torch.tanh(x).tile([2, 1, 1])", {"x": [2, 3]}, False, "ms_tile("),
    ("tensor-unfold-windows", "torch.tanh(x).unfold(0, 2, 1)", {"x": [4, 3]}, False, "ms_unfold_windows("),
    ("one-hot-inferred", "F.one_hot(i)", {"i": {"shape": [5], "dtype": "int64", "range": [0, 3]}}, False,
     "ms_one_hot("),
    # layers: cells started from zeros, torch's cosine similarity, 3-D pools with stride=kernel_size
    ("lstm-cell-no-state", "nn.LSTMCell(3, 4)", {"x": [2, 3]}, True, "MsLSTMCell(3, 4)"),
    ("gru-cell-unbatched", "nn.GRUCell(3, 2)", {"x": [3]}, True, None),
    ("cosine-similarity", "nn.CosineSimilarity(dim=0)", {"a": [4, 2], "b": [4, 2]}, True, None),
    ("maxpool3d-default-stride", "nn.MaxPool3d(2)", {"x": [1, 1, 4, 4, 2]}, True, "stride=2"),
    # sampling with the probabilities input holds (ops.bernoulli's p defaults to 0.5), sorted unique values,
    # int64 buckets, new_full on CPU, upsampling layers MindSpore lacks, avg_pool3d's stride
    ("bernoulli-certain", "torch.bernoulli((x > 0).float())", {"x": [2, 5]}, False, "ms_bernoulli("),
    ("unique-inverse", "torch.unique(i, return_inverse=True)", {"i": {"shape": [7], "dtype": "int64", "range": [0, 3]}},
     False, "ms_unique("),
    ("bucketize", "torch.bucketize(x, torch.tensor([0.0, 0.5]))", {"x": [5]}, False, "int64"),
    ("new-full", "torch.tanh(x).new_full((2,), 3.0)", {"x": [3]}, False, None),
    ("upsampling-bilinear", "nn.UpsamplingBilinear2d(scale_factor=2)", {"x": [1, 1, 3, 4]}, True,
     "MsUpsamplingBilinear2d("),
    ("upsampling-nearest", "nn.UpsamplingNearest2d(size=(5, 8))", {"x": [1, 1, 3, 4]}, True, None),
    ("avg-pool3d", "F.avg_pool3d(x, 2)", {"x": [1, 1, 4, 2, 4]}, False, "stride=2"),
    # a 2-D diagonal (ops.diag builds a 4-D tensor), equality as one bool, int64 indices, unbiased moments, pdist's p
    ("diag-of-matrix", "torch.diag(x, 1)", {"x": [3, 3]}, False, "ms_diag("),
    ("equal-shapes", "torch.equal(x, x.reshape(3, 2))", {"x": [2, 3]}, False, "ms_equal("),
    ("cummin", "torch.cummin(x, 0)", {"x": [4, 2]}, False, "cummin_int64("),
    ("std-mean", "torch.std_mean(x, dim=-1)", {"x": [2, 5]}, False, "ddof=1"),
    ("pdist-int-p", "F.pdist(x, 1)", {"x": [3, 4]}, False, "float(1)"),
]


@pytest.fixture(scope="module")
def executed(real_kb, tmp_path_factory):
    """Every call converted per family and run next to torch (one batch of subprocesses)."""
    return convert_and_run(real_kb, tmp_path_factory, lambda family: [
        Case(id=f"{family}/{cid}", source=snippet(expr, list(inputs), layer), inputs=inputs, layer=layer)
        for cid, expr, inputs, layer, _ in CALLS])


@pytest.mark.parametrize("family", ["classic", "mint"])
@pytest.mark.parametrize("cid, expr, inputs, layer, text", CALLS, ids=[c[0] for c in CALLS])
def test_call_converts_and_matches_torch(executed, family, cid, expr, inputs, layer, text):
    case = executed[f"{family}/{cid}"]
    assert_converted_and_matching(case, expr)
    if text and family == "classic":
        assert text in case.converted


@pytest.mark.parametrize("source, why", [
    ("w = torch.hann_window(8, requires_grad=True)\n", "requires_grad"),
    ("w = torch.logspace(0, 1, 5, out=buffer)\n", "out"),
    ("w = torch.linspace(0, 1, 5, layout=torch.sparse_coo)\n", "layout"),
    ("t = torch.arange(4, requires_grad=True)\n", "requires_grad"),
])
def test_a_parameter_mindspore_cannot_honour_keeps_its_marker(classic, mint, source, why):
    for engine in (classic, mint):
        out = convert_source(engine, "import torch\n" + source).text
        line = next(line for line in out.splitlines() if "# msmap:" in line)
        assert line.startswith(source.rstrip("\n")) and why in line, line


def test_parameters_a_call_leaves_at_torch_s_default_are_not_written(classic):
    out = convert_source(classic, "import torch\nw = torch.hann_window(8, periodic=False, requires_grad=False)\n"
                                  "g = torch.meshgrid(a, b, indexing='ij')\n").text
    assert "w = ms.ops.hann_window(8, periodic=False).astype(ms.float32)" in out
    assert "g = ms_meshgrid(a, b, indexing='ij')" in out
    assert "# msmap:" not in out


def test_a_failed_rewrite_probe_is_the_first_sentence_of_the_note():
    """The marker of a use quotes the note's first sentence: the probe's finding, not a signature comparison
    that blocked nothing (hann_window's layout, which no call passed, was shown as the reason)."""
    row = {"api": "mindspore.ops.hann_window", "auto": 1,
           "note": "Signature comparison: torch-only: layout, requires_grad; dropped: device."}
    probe = {"result": "failed", "ms_version": "2.10.0", "device": "cpu",
             "detail": "positional call: wrong: dtype: out: values equal but dtype float32 (torch) vs float64"}
    _apply_rewrite_proof(row, probe)
    assert row["auto"] == 0
    assert row["note"].startswith("Rewrite probe (mindspore 2.10.0, cpu): positional call: wrong: dtype")
    assert row["note"].endswith("dropped: device.")
    assert json.loads(row["proof"])["result"] == "failed"


def test_an_unbiased_switch_that_is_not_a_literal_stays_for_a_human(classic, mint):
    """ddof is written from a literal unbiased only: a variable could be either, so the call keeps a marker (a
    correction passes on as ddof whatever its value)."""
    source = "import torch\ns = torch.tanh(x).std(0, unbiased=flag)\nv = torch.tanh(x).var(correction=c)\n"
    for engine in (classic, mint):
        lines = convert_source(engine, source).text.splitlines()
        assert "unbiased=flag)  # msmap:" in lines[-2]
        assert lines[-1].endswith(".var(ms.ops.tanh(x), ddof=c)") or lines[-1].endswith(".var(ms.mint.tanh(x), ddof=c)")


def test_what_mindspore_cannot_honour_is_marked_or_raises_when_reached(classic):
    """torch.unique(dim=...) converts now that probes proved dims (tests/analysis/test_value_proofs_more.py), and a
    nearest upsampling by a factor that does not give whole sizes (where MindSpore's mapping may differ from torch's) raises NotImplementedError when
    run, never a different result; whole sizes run."""
    import mindspore as ms
    import numpy as np

    source = ("import torch\nimport torch.nn as nn\n\n\ndef rows(x):\n    return torch.unique(x, dim=0)\n\n\n"
              "def upsample(x):\n    return nn.UpsamplingNearest2d(scale_factor=1.5)(x)\n")
    text = convert_source(classic, source).text
    assert "return ms_unique(x, dim=0)\n" in text
    upsample = text[text.index("class MsUpsamplingNearest2d"):]
    assert "# msmap:" not in upsample
    scope: dict = {}
    exec("import mindspore as ms\n" + upsample, scope)
    with pytest.raises(NotImplementedError, match="not whole"):
        scope["upsample"](ms.Tensor(np.ones((1, 1, 3, 5), np.float32)))
    assert scope["upsample"](ms.Tensor(np.ones((1, 1, 2, 4), np.float32))).shape == (1, 1, 3, 6)
