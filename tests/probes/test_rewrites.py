"""Rewrite probes: calls in four styles, the build's use of their verdicts, and a small real run."""
from __future__ import annotations

import json
import re
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


SOFTMAX = [["input", "POSITIONAL_OR_KEYWORD", None], ["dim", "POSITIONAL_OR_KEYWORD", "None"],
           ["_stacklevel", "POSITIONAL_OR_KEYWORD", "3"], ["dtype", "POSITIONAL_OR_KEYWORD", "None"]]
AVG_POOL2D = [["input", "POSITIONAL_OR_KEYWORD", None], ["kernel_size", "POSITIONAL_OR_KEYWORD", None],
              ["stride", "POSITIONAL_OR_KEYWORD", "None"], ["padding", "POSITIONAL_OR_KEYWORD", "0"],
              ["ceil_mode", "POSITIONAL_OR_KEYWORD", "False"], ["count_include_pad", "POSITIONAL_OR_KEYWORD", "True"],
              ["divisor_override", "POSITIONAL_OR_KEYWORD", "None"]]


def _calls(cases) -> list[str]:
    return [line.strip()[len("return "):] for c in cases for line in c.source.splitlines()
            if line.strip().startswith("return ")]


def test_none_defaults_are_left_out_and_later_arguments_go_by_keyword():
    args, _ = rewrites.build_args(AVG_POOL2D, [[2, 3, 6, 6], "float32", [-1.0, 1.0]])
    assert [a.name for a in args] == ["input", "kernel_size", "padding", "ceil_mode", "count_include_pad"]
    assert all(a.value != "None" for a in args)
    assert render_call("F.avg_pool2d", args, "positional") == \
        "F.avg_pool2d(x, 3, padding=0, ceil_mode=False, count_include_pad=True)"
    filled, _ = rewrites.build_args(SOFTMAX, [[2, 3], "float32", [-1.0, 1.0]], fill=("dim",))
    assert [(a.name, a.value, a.default) for a in filled] == [("input", "x", False), ("dim", "1", False)]


def test_torch_only_parameters_are_never_passed_even_when_an_overload_requires_them():
    params = [["input", "POSITIONAL_OR_KEYWORD", None], ["out", "KEYWORD_ONLY", None]]
    args, inputs = rewrites.build_args(params, [[2, 3], "float32", [-1.0, 1.0]])
    assert [a.name for a in args] == ["input"] and list(inputs) == ["x"]


def test_index_and_mask_tensors_have_their_dtype():
    params = [["dim", "POSITIONAL_OR_KEYWORD", None], ["index", "POSITIONAL_OR_KEYWORD", None],
              ["mask", "POSITIONAL_OR_KEYWORD", None]]
    _, inputs = rewrites.build_args(params, [[2, 3, 4], "float32", [-2.0, 2.0]], receiver=True)
    assert [spec["dtype"] for spec in inputs.values()] == ["float32", "int64", "bool"]


def test_generated_calls_are_calls_a_user_writes():
    """torch's own answers decide: F.softmax without dim warns (implicit choice), so dim is
    passed; avg_pool2d gets a batched 2-D input and no stride=None; no call passes None."""
    pytest.importorskip("torch")
    softmax, why = rewrites.plan_calls("torch.nn.functional.softmax", "function", SOFTMAX, None)
    assert softmax, why
    assert _calls([c for c in softmax if not c.varied]) == \
        ["F.softmax(x, 1)", "F.softmax(input=x, dim=1)", "F.softmax(dim=1, input=x)"]
    assert _calls([c for c in softmax if c.varied]) == ["F.softmax(input=x, dim=0)", "F.softmax(input=x, dim=-1)"]
    pool, why = rewrites.plan_calls("torch.nn.functional.avg_pool2d", "function", AVG_POOL2D, None)
    assert pool and all(c.inputs["x"]["shape"] == [2, 3, 6, 6] for c in pool), why
    assert "F.avg_pool2d(x, 3)" in _calls(pool)
    for call in _calls(softmax) + _calls(pool):
        assert "None" not in call, call
    assert all(c.source.splitlines()[-2].startswith("def run(x: torch.Tensor)") for c in softmax)


def test_an_input_outside_the_domain_gives_way_to_the_next_variant():
    pytest.importorskip("torch")
    params = [["input", "POSITIONAL_OR_KEYWORD", None]]
    cases, why = rewrites.plan_calls("torch.special.bessel_y0", "function", params, None)
    assert cases, why
    assert all(c.inputs["x"]["range"][0] > 0 for c in cases)  # y0 is NaN for negative x in torch
    # a function defined everywhere keeps the first variant
    cases, _ = rewrites.plan_calls("torch.abs", "function", params, None)
    assert cases[0].inputs["x"]["range"] == [-2.0, 2.0]


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
    assert counts["proven"] == 1 and counts["auto"] == counts["proven"] + counts["not_call_probed"]
    assert counts["unprobed"] == 0  # not proven is not automatic


def test_an_auto_target_without_a_proof_is_not_automatic(small_data, tmp_path):
    """The gate: a rewrite no probe executed becomes a marker naming the target."""
    from kb.query import KB

    (small_data / "probes").mkdir()
    (small_data / "probes" / "rewrites-mindspore-2.10.0-cpu.jsonl").write_text(
        json.dumps(_rewrite_row("unprobed", "no recipe for the required parameter 'x'")) + "\n")
    t = _linear(KB.open(db=tmp_path / "kb.sqlite", data=small_data), "classic")
    assert t["auto"] is False
    assert t["note"].startswith("Unproven rewrite: mindspore.nn.Dense: no probe ran the rewrite")
    assert "no recipe for the required parameter 'x'" in t["note"]
    proven = {**_rewrite_row("proven", "4 of 4 call styles ran and matched torch"),
              "values": {"bias": {"proven": ["bool:True"], "failed": ["bool:False"]}}}
    (small_data / "probes" / "rewrites-mindspore-2.10.0-cpu.jsonl").write_text(json.dumps(proven) + "\n")
    kb = KB.open(db=tmp_path / "b.sqlite", data=small_data)
    t = _linear(kb, "classic")
    assert t["auto"] is True and t["proof"]["values"]["bias"]["failed"] == ["bool:False"]
    counts = kb.stats()["rewrites"]["classic"]
    assert (counts["values_targets"], counts["values_proven"], counts["values_failed"]) == (1, 1, 1)


def test_rewrite_probes_run_on_a_few_records(small_data, tmp_path):
    """The real pipeline on the small data set: engine rewrite, torch and MindSpore subprocesses;
    a second run with the same emitted code takes every result from the store."""
    pytest.importorskip("mindspore")
    pytest.importorskip("torch")
    said: list[str] = []
    first = rewrites.run_rewrite_probes(small_data, cache=tmp_path / "store")
    again = rewrites.run_rewrite_probes(small_data, cache=tmp_path / "store", tick=said.append)
    assert again == first
    assert any(re.search(r"calls: 0 executed, [1-9]\d* unchanged since a stored run", s) for s in said), said
    assert not any(re.search(r"calls: [1-9]\d* executed", s) for s in said), said
    rows = {(r["torch"], r["family"]): r for r in first}
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


def test_convert_applies_a_proven_rewrite_only_at_proven_values(small_data, tmp_path):
    """A literal whose value class the probe proved converts; one the probe found different, or never
    ran, gets a marker naming the parameter; a name (not a literal) goes through an adapter that refuses, when
    the call runs, any value the probe did not prove."""
    from kb.analysis import Engine, EngineSettings
    from kb.analysis.convert import convert_source
    from kb.query import KB

    (small_data / "probes").mkdir()
    row = {**_rewrite_row("proven", "4 of 4 call styles ran and matched torch"),
           "values": {"bias": {"proven": ["bool:True"], "failed": ["bool:False"]}}}
    (small_data / "probes" / "rewrites-mindspore-2.10.0-cpu.jsonl").write_text(json.dumps(row) + "\n")
    engine = Engine(KB.open(db=tmp_path / "kb.sqlite", data=small_data), EngineSettings())

    def convert(call: str) -> str:
        return convert_source(engine, f"import torch.nn as nn\n\nlayer = {call}\n".encode()).source.decode()

    assert "ms.nn.Dense(3, 4)" in convert("nn.Linear(3, 4)")
    assert "ms.nn.Dense(3, 4, has_bias=True)" in convert("nn.Linear(3, 4, bias=True)")
    left = convert("nn.Linear(3, 4, bias=False)")
    assert "nn.Linear(3, 4, bias=False)" in left and "rewrite differs from torch at bias=False" in left
    named = convert("nn.Linear(3, 4, bias=flag)")  # a name: the adapter checks its value when the call runs
    assert "ms_Dense(3, 4, bias=flag)" in named
    assert "if not (bias is True):" in named and "is not a value msmap proved" in named
