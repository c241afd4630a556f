"""Rewrite probes: calls in four styles, the build's use of their verdicts, and a small real run."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kb.probes import rewrites
from kb.probes.calls import Arg, render_call, snippet

ARGS = [Arg.parse(a) for a in ["in_channels=3", "out_channels=4", "kernel_size=3", "stride=1~", "padding=1",
                               "*bias=False"]]


def test_four_call_styles():
    assert render_call("nn.Conv2d", ARGS, "positional") == "nn.Conv2d(3, 4, 3, 1, 1, bias=False)"
    assert render_call("nn.Conv2d", ARGS, "keyword") == \
        "nn.Conv2d(in_channels=3, out_channels=4, kernel_size=3, stride=1, padding=1, bias=False)"
    # the first argument after an omitted default goes by keyword
    assert render_call("nn.Conv2d", ARGS, "defaults") == "nn.Conv2d(3, 4, 3, padding=1, bias=False)"
    shuffled = render_call("nn.Conv2d", ARGS, "shuffled", seed=1)
    keyword = render_call("nn.Conv2d", ARGS, "keyword")
    assert shuffled != keyword
    assert sorted(shuffled[len("nn.Conv2d("):-1].split(", ")) == sorted(keyword[len("nn.Conv2d("):-1].split(", "))


def test_positional_only_stays_positional_and_markers_parse():
    args = [Arg.parse("/input=x"), Arg.parse("*dtype=torch.float32~")]
    assert (args[0].pos_only, args[1].kw_only, args[1].default) == (True, True, True)
    assert render_call("torch.sum", args, "keyword") == "torch.sum(x, dtype=torch.float32)"
    assert render_call("torch.sum", args, "defaults") == "torch.sum(x)"
    with pytest.raises(ValueError, match="expected name=value"):
        Arg.parse("x")


def test_snippet_imports_only_what_it_uses():
    text = snippet("F.relu(x)", ["x"], False)
    assert text.startswith("import torch.nn.functional as F\n") and "import torch\n" not in text
    assert "def run(x):\n    return F.relu(x)" in text
    assert "def make():\n    return nn.ReLU()" in snippet("nn.ReLU()", [], True)


def test_build_args_from_a_torch_signature():
    params = [["input", "POSITIONAL_OR_KEYWORD", None], ["dim", "POSITIONAL_OR_KEYWORD", None],
              ["out", "KEYWORD_ONLY", "None"], ["keepdim", "KEYWORD_ONLY", "False"]]
    args, inputs = rewrites.build_args(params, [[2, 3], "float32", [-1.0, 1.0]])
    assert [(a.name, a.value, a.kw_only, a.default) for a in args] == [
        ("input", "x", False, False), ("dim", "1", False, False), ("keepdim", "False", True, True)]
    assert inputs == {"x": {"shape": [2, 3], "dtype": "float32", "range": [-1.0, 1.0]}}
    with pytest.raises(rewrites.Unprobed, match="no recipe for the required parameter 'weird'"):
        rewrites.build_args([["weird", "POSITIONAL_OR_KEYWORD", None]], [[2], "float32", [0, 1]])


def _rewrite_row(result: str, detail: str, family: str = "classic", api: str = "mindspore.nn.Dense") -> dict:
    return {"probe": f"rewrite/{family}/torch.nn.Linear", "kind": "rewrite", "torch": "torch.nn.Linear",
            "family": family, "ms_api": api, "ms_version": "2.10.0", "torch_version": "2.13.0", "device": "cpu",
            "result": result, "detail": detail, "passed": ["keyword"] if result == "proven" else [],
            "failed": ["positional"] if result == "failed" else [], "styles": {}}


def _linear(kb, family: str) -> dict:
    return next(t for t in kb.mapping("torch.nn.Linear")["targets"] if t["family"] == family)


def test_failed_rewrite_probe_turns_auto_off_with_the_reason(small_data, tmp_path):
    from kb.query import KB

    (small_data / "probes").mkdir()
    (small_data / "probes" / "rewrites-mindspore-2.10.0-cpu.jsonl").write_text(
        json.dumps(_rewrite_row("failed", "positional call: wrong: shape: out: shape (2, 4) vs (2, 3)")) + "\n")
    kb = KB.open(db=tmp_path / "kb.sqlite", data=small_data)
    t = _linear(kb, "classic")
    assert t["auto"] is False
    assert "Rewrite probe (mindspore 2.10.0, cpu): positional call: wrong: shape" in t["note"]
    assert t["proof"]["result"] == "failed"
    assert kb.stats()["rewrites"]["classic"]["failed"] == 1
    assert not kb.probes_for("torch.nn.Linear", "mindspore.nn.Dense")  # not mixed into equivalence probes


def test_proven_rewrite_replaces_an_equivalence_probe_verdict(small_data, tmp_path):
    from kb.query import KB

    (small_data / "probes").mkdir()
    old = {"probe": "gen/torch.nn.Linear/mindspore.nn.Dense", "torch": "torch.nn.Linear",
           "ms_api": "mindspore.nn.Dense", "family": "classic", "kind": "equivalence", "ms_version": "2.10.0",
           "torch_version": "2.13.0", "device": "cpu", "result": "differs", "detail": "out: values differ"}
    (small_data / "probes" / "results-mindspore-2.10.0-cpu.jsonl").write_text(json.dumps(old) + "\n")
    without = KB.open(db=tmp_path / "a.sqlite", data=small_data)
    assert _linear(without, "classic")["auto"] is False  # the old verdict alone blocks it
    (small_data / "probes" / "rewrites-mindspore-2.10.0-cpu.jsonl").write_text(
        json.dumps(_rewrite_row("unprobed", "no executed rewrite: no_cpu_kernel")) + "\n")
    unprobed = _linear(KB.open(db=tmp_path / "u.sqlite", data=small_data), "classic")
    assert unprobed["auto"] is False and unprobed["proof"]["result"] == "unprobed"  # no evidence: old verdict stays
    (small_data / "probes" / "rewrites-mindspore-2.10.0-cpu.jsonl").write_text(
        json.dumps(_rewrite_row("proven", "1 of 1 call styles ran and matched torch")) + "\n")
    kb = KB.open(db=tmp_path / "b.sqlite", data=small_data)
    t = _linear(kb, "classic")
    assert t["auto"] is True and t["proof"]["result"] == "proven" and t["proof"]["passed"] == ["keyword"]
    counts = kb.stats()["rewrites"]["classic"]
    assert counts["proven"] == 1 and counts["auto"] == counts["proven"] + counts["unprobed"]


def test_rewrite_probes_run_on_a_few_records(small_data):
    """The real pipeline on the small data set: engine rewrite, torch and MindSpore subprocesses."""
    pytest.importorskip("mindspore")
    pytest.importorskip("torch")
    rows = {(r["torch"], r["family"]): r for r in rewrites.run_rewrite_probes(small_data)}
    linear = rows[("torch.nn.Linear", "classic")]
    assert linear["result"] == "proven", linear
    assert set(linear["passed"]) >= {"positional", "keyword", "shuffled", "defaults"}
    assert "ms.nn.Dense(" in linear["styles"]["keyword"]["emitted"]
    assert "in_channels=" in linear["styles"]["keyword"]["emitted"]
    for row in rows.values():
        assert row["result"] in ("proven", "failed", "unprobed")
        assert row["result"] != "unprobed" or row["detail"], row  # unprobed always says why


def test_results_path_is_per_version(tmp_path: Path):
    assert rewrites.results_path(tmp_path, "2.10.0").name == "rewrites-mindspore-2.10.0-cpu.jsonl"
