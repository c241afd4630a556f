"""einops and torch.einsum: converted by the engine (``--device CPU``, both families) and run next to torch in
isolated subprocesses (kb.probes.calls).  einops has no MindSpore backend and MindSpore 2.10 has no CPU
kernel for einsum, so both become helpers written into the converted file (``MsEinops``, ``ms_einsum``)."""
from __future__ import annotations

import re

import pytest

from kb.analysis import Engine, EngineSettings
from kb.analysis.convert import convert_source
from kb.probes.calls import Case
from tests.analysis.executed import assert_converted_and_matching, convert_and_run

EINOPS = "from einops import rearrange, reduce, repeat\n"
LAYERS = "from einops.layers.torch import Rearrange, Reduce\n"
TORCH = "import torch\n"


def function(imports: str, expression: str, inputs: str) -> str:
    return f"{imports}\n\ndef run({inputs}):\n    return {expression}\n"


def layer(imports: str, expression: str) -> str:
    return f"{imports}\n\ndef make():\n    return {expression}\n"


# (id, torch source, inputs, is a layer, text the classic conversion must hold)
CASES = [
    ("rearrange-split-heads", function(EINOPS, "rearrange(x, 'b n (h d) -> b h n d', h=4)", "x"),
     {"x": [2, 5, 24]}, False, "MsEinops.apply(x, 'b n (h d) -> b h n d', h=4)"),
    ("rearrange-patches", function(EINOPS, "rearrange(x, 'b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=2, p2=2)", "x"),
     {"x": [2, 3, 4, 6]}, False, None),
    ("rearrange-ellipsis", function(EINOPS, "rearrange(x, 'b ... d -> b d ...')", "x"), {"x": [2, 3, 4, 5]}, False,
     None),
    ("repeat-cls-token", function(EINOPS, "repeat(x, '1 n d -> b n d', b=3)", "x"), {"x": [1, 2, 4]}, False, None),
    ("repeat-anonymous", function(EINOPS, "repeat(x, 'h w -> (h 2) (w 3)')", "x"), {"x": [2, 3]}, False, None),
    ("reduce-pool", function(EINOPS, "reduce(x, 'b c (h h2) (w w2) -> b c h w', 'max', h2=2, w2=2)", "x"),
     {"x": [2, 3, 4, 6]}, False, None),
    ("reduce-mean", function(EINOPS, "reduce(x, 'b n d -> b d', 'mean')", "x"), {"x": [2, 5, 3]}, False, None),
    ("layer-rearrange", layer(LAYERS, "Rearrange('b c (h p) (w q) -> b (h w) (p q c)', p=2, q=2)"),
     {"x": [2, 3, 4, 4]}, True, "MsEinops('b c (h p) (w q) -> b (h w) (p q c)', p=2, q=2)"),
    ("layer-reduce", layer(LAYERS, "Reduce('b n d -> b d', 'mean')"), {"x": [2, 5, 3]}, True, None),
    ("rearrange-sizes-from-a-dict", EINOPS + "\n\ndef run(x):\n    sizes = dict(h=2, w=3)\n"
     "    return rearrange(x, 'b (h w) d -> b d h w', **sizes)\n", {"x": [2, 6, 4]}, False,
     "MsEinops.apply(x, 'b (h w) d -> b d h w', **sizes)"),
    ("pack-unpack", "from einops import pack, unpack\n\n\ndef run(a, b):\n    packed, shapes = pack([a, b], 'b * d')\n"
     "    first, second = unpack(packed * 2, shapes, 'b * d')\n    return packed, second\n",
     {"a": [2, 5], "b": [2, 3, 4, 5]}, False, "MsEinops.pack([a, b], 'b * d')"),
    ("einops-einsum-words", function("from einops import einsum\n",
                                     "einsum(q, k, 'batch head i d, batch head j d -> batch head i j')", "q, k"),
     {"q": [2, 3, 4, 5], "k": [2, 3, 6, 5]}, False,
     "ms_einsum(q, k, 'batch head i d, batch head j d -> batch head i j')"),
    ("einsum-attention", function(TORCH, "torch.einsum('b h i d, b h j d -> b h i j', q, k)", "q, k"),
     {"q": [2, 3, 4, 5], "k": [2, 3, 6, 5]}, False, "ms_einsum('b h i d, b h j d -> b h i j', q, k)"),
    ("einsum-ellipsis-implicit", function(TORCH, "torch.einsum('...ij,...jk', a, b)", "a, b"),
     {"a": [2, 2, 3], "b": [2, 3, 4]}, False, None),
    ("einsum-three", function(TORCH, "torch.einsum('bn,anm,bm->ba', a, b, c)", "a, b, c"),
     {"a": [2, 3], "b": [4, 3, 5], "c": [2, 5]}, False, None),
]


@pytest.fixture(scope="module")
def executed(real_kb, tmp_path_factory):
    return convert_and_run(real_kb, tmp_path_factory, lambda family: [
        Case(id=f"{family}/{cid}", source=source, inputs=inputs, layer=is_layer)
        for cid, source, inputs, is_layer, _ in CASES])


@pytest.mark.parametrize("family", ["classic", "mint"])
@pytest.mark.parametrize("cid, source, inputs, is_layer, text", CASES, ids=[c[0] for c in CASES])
def test_converts_and_matches_torch(executed, family, cid, source, inputs, is_layer, text):
    case = executed[f"{family}/{cid}"]
    assert_converted_and_matching(case, cid)
    assert not re.search(r"^(from|import) einops", case.converted, re.M)  # the import went with the last use
    if text and family == "classic":
        assert text in case.converted


def test_einsum_takes_the_proven_composition_where_the_fused_op_is_unproven(real_kb):
    """ops.einsum has no CPU kernel, so no probe here could prove it: on Ascend too the einsum becomes the
    matmul composition the probes proved, not the fused op."""
    ascend = Engine(real_kb, EngineSettings(device="Ascend"))
    out = convert_source(ascend, "import torch\ny = torch.einsum('ij,jk->ik', a, b)\n").text
    assert "ms.ops.einsum(" not in out and "ms_einsum" in out and "# msmap:" not in out


def test_a_helper_is_written_into_every_file_that_needs_it(classic):
    """Plans are cached by the text of a call; a plan that also writes a helper's definition elsewhere in the
    file must not be reused for the next file (it was: the second file's call stayed einops)."""
    call = "import torch\nfrom einops import rearrange\n\n\ndef f(x):\n    return rearrange(x, 'b n d -> b d n')\n"
    first = convert_source(classic, call).text
    second = convert_source(classic, "# another file\n\n" + call).text
    for text in (first, second):
        assert "return MsEinops.apply(x, 'b n d -> b d n')" in text and "class MsEinops(ms.nn.Cell):" in text


def test_torch_and_einops_einsum_write_the_same_helper(real_kb):
    """The helper is in two data files (torch.einsum's and einops.einsum's records): they must not drift apart."""
    helpers = {t["helper"] for name in ("torch.einsum", "einops.einsum") for t in real_kb.mapping(name)["targets"]
               if t.get("helper")}
    assert len(helpers) == 1 and next(iter(helpers)).startswith("def ms_einsum(*args):")
