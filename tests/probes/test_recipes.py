"""Generated calls for APIs whose inputs must fit each other: each is one torch accepts (no probe run)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kb.probes import rewrites


def _calls(cases) -> list[str]:
    return [c.source.splitlines()[-1].strip().removeprefix("return ") for c in cases if not c.varied]


@pytest.mark.parametrize(("name", "kind", "params", "call", "shapes"), [
    pytest.param("torch.Tensor.view", "method", [["shape", "VAR_POSITIONAL", None]], "x.view(6, 4)",
                 {"x": [2, 3, 4]}, id="view"),
    pytest.param("torch.Tensor.expand", "method", [["size", "VAR_POSITIONAL", None]], "x.expand(2, 3, 4)",
                 {"x": [3, 1]}, id="expand"),
    pytest.param("torch.einsum", "function", [["args", "VAR_POSITIONAL", None]],
                 "torch.einsum('bij,bjk->bik', x, y)", {"x": [2, 3, 4], "y": [2, 4, 5]}, id="einsum"),
    pytest.param("torch.meshgrid", "function",
                 [["tensors", "VAR_POSITIONAL", None], ["indexing", "KEYWORD_ONLY", "None"]],
                 "torch.meshgrid(x, y)", {"x": [3], "y": [3]}, id="meshgrid"),
    pytest.param("torch.Tensor.index_select", "method",
                 [["dim", "POSITIONAL_OR_KEYWORD", None], ["index", "POSITIONAL_OR_KEYWORD", None]],
                 "x.index_select(1, y)", {"x": [2, 3, 4], "y": [2]}, id="index_select"),
    pytest.param("torch.finfo", "class", [], "torch.finfo(torch.float32).eps", {}, id="finfo"),
])
def test_generated_call_fits_and_torch_accepts_it(name, kind, params, call, shapes):
    pytest.importorskip("torch")
    cases, why = rewrites.plan_calls(name, kind, params, None)  # keeps only calls torch runs
    assert cases, why
    assert call in _calls(cases)
    assert {k: v["shape"] for k, v in cases[0].inputs.items()} == shapes
    assert not cases[0].layer


def test_index_vectors_are_in_range():
    pytest.importorskip("torch")
    params = [["dim", "POSITIONAL_OR_KEYWORD", None], ["index", "POSITIONAL_OR_KEYWORD", None],
              ["source", "POSITIONAL_OR_KEYWORD", None], ["alpha", "KEYWORD_ONLY", "1"]]
    cases, why = rewrites.plan_calls("torch.Tensor.index_add", "method", params, None)
    assert cases, why
    index = cases[0].inputs["y"]
    assert (index["dtype"], index["shape"], index["range"]) == ("int64", [2], [0, 2])  # dim 1 has size 3
    assert cases[0].inputs["z"]["shape"] == [2, 2, 4]


def test_star_parameter_without_recipe_says_so():
    with pytest.raises(rewrites.Unprobed, match=r"no recipe for \*weird"):
        rewrites.build_args([["weird", "VAR_POSITIONAL", None]], [[2], "float32", [0, 1]])


def _cand(api: str, family: str = "classic") -> dict:
    return {"torch": "torch.einsum", "family": family, "api": api}


def test_each_target_of_a_family_has_its_own_row():
    """torch.einsum: mindspore.ops.einsum (no CPU kernel) and, on CPU, a matmul composition; one row
    each, or the second overwrites the first and the build finds no proof for it."""
    cands = [_cand("mindspore.ops.einsum"), _cand("mindspore.ops.matmul"), _cand("mindspore.mint.einsum", "mint")]
    ids = [rewrites.probe_id(c, cands) for c in cands]
    assert ids == ["rewrite/classic/torch.einsum", "rewrite/classic/torch.einsum@mindspore.ops.matmul",
                   "rewrite/mint/torch.einsum"]


def test_a_missing_kernel_is_remembered_only_for_the_target_it_was_recorded_for(tmp_path: Path):
    versions = {"mindspore": "2.10.0", "torch": "2.13.0"}
    row = {"probe": "rewrite/classic/torch.einsum", "torch": "torch.einsum", "family": "classic",
           "ms_api": "mindspore.ops.matmul", "result": "unprobed", "ms_version": "2.10.0", "torch_version": "2.13.0",
           "detail": "no executed rewrite: no_cpu_kernel: Unsupported op [Einsum] on CPU"}
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    known = rewrites._no_kernel_rows(path, versions)
    # recorded under the first target's id for the composition: it matches neither target
    assert ("rewrite/classic/torch.einsum@mindspore.ops.matmul", "mindspore.ops.matmul") not in known
    assert ("rewrite/classic/torch.einsum", "mindspore.ops.einsum") not in known
