"""Timing op definitions, recorded rows, the drift check and the worker's sampling (no timed assertions)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kb.probes import timing, timing_worker
from tests.perf.rows import conv_rows, row

ROOT = Path(__file__).resolve().parents[2]
OPS = ROOT / "data" / "timing" / "ops.yaml"


def test_bundled_ops_load_and_cover_both_families():
    ops = timing.load_ops(OPS)
    assert len(ops) >= 50
    assert sum(1 for op in ops if op.get("classic")) >= 50
    assert sum(1 for op in ops if op.get("mint")) >= 40
    cases = timing.cases(ops, "torch")
    assert len({c["id"] for c in cases}) == len(cases) == sum(len(op["shapes"]) for op in ops)


def test_bundled_ops_name_apis_the_kb_knows(real_kb):
    for op in timing.load_ops(OPS):
        for name in op["torch_apis"]:
            assert real_kb.is_torch_api(name), (op["id"], name)


@pytest.mark.parametrize("body, message", [
    ("ops: [{id: a, torch_apis: [torch.relu], shapes: [{S: [2]}]}]", "missing torch"),
    ("ops: [{id: a, torch_apis: [torch.relu], shapes: [{S: [2]}], torch: {api: torch.relu, code: x}}]",
     "needs a 'classic' or 'mint' side"),
    ("ops: [{id: a, torch_apis: [t], shapes: [{S: [2]}], torch: {api: t, code: x}, mint: {api: m}}]",
     "field 'mint': needs 'api' and 'code'"),
    ("nothing: 1", "top level must be a mapping with 'ops:'"),
    ("ops: [{id: a, torch_apis: [t], shapes: [3], torch: {api: t, code: x}, mint: {api: m, code: y}}]",
     "field 'shapes'"),
])
def test_bad_definitions_name_file_and_op(tmp_path, body, message):
    path = tmp_path / "ops.yaml"
    path.write_text(body)
    with pytest.raises(timing.TimingDataError) as err:
        timing.load_ops(path)
    assert str(path) in str(err.value) and message in str(err.value)
    assert "\n" not in str(err.value)


def test_rows_pair_each_family_with_torch_from_the_same_run():
    ops = [{"id": "relu", "torch_apis": ["torch.relu"], "shapes": [{"label": "x[2]", "S": [2]}],
            "torch": {"api": "torch.relu", "code": "torch.relu(x)"},
            "classic": {"api": "mindspore.ops.relu", "code": "ops.relu(x)"},
            "mint": {"api": "mindspore.mint.nn.functional.relu", "code": "F.relu(x)"}}]
    got = {"relu#0@torch": {"result": "timed", "ms": 2.0, "spread": 0.1},
           "relu#0@classic": {"result": "timed", "ms": 5.0, "spread": 0.2},
           "relu#0@mint": {"result": "no_cpu_kernel", "detail": "RuntimeError: The kernel ReLU unregistered."}}
    rows = timing.rows(ops, got, {"mindspore": "2.10.0", "torch": "2.13.0"}, when="2026-11-25", where="m")
    classic, mint = rows
    assert classic["ratio"] == 2.5 and classic["ratio_spread"] == pytest.approx(0.3)
    assert classic["torch_ms"] == 2.0 and classic["shape"] == "x[2]" and classic["device"] == "CPU"
    assert mint["result"] == "no_cpu_kernel" and mint["ratio"] is None and "unregistered" in mint["detail"]


def test_record_merges_a_partial_run_and_load_rows_reads_it_back(tmp_path):
    path = tmp_path / "timing-mindspore-2.10.0-cpu.jsonl"
    timing.record(conv_rows(), path, replace_all=True)
    first = timing.load_rows(path)
    assert len(first) == len(conv_rows())
    changed = [dict(first[0], ratio=99.0)]
    timing.record(changed, path, replace_all=False)
    again = timing.load_rows(path)
    assert len(again) == len(first)
    assert [r["ratio"] for r in again if timing.key(r) == timing.key(first[0])] == [99.0]


def test_load_rows_names_file_and_line(tmp_path):
    from kb.errors import DataError

    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(row("classic", "2.10.0", "s", 1.0)) + "\n{broken\n")
    with pytest.raises(DataError, match=r"t\.jsonl:2: invalid JSON"):
        timing.load_rows(path)
    path.write_text(json.dumps(dict(row("classic", "2.10.0", "s", 1.0), family="both")) + "\n")
    with pytest.raises(DataError, match=r"t\.jsonl:1: entry torch=torch.nn.Conv2d: field 'family'"):
        timing.load_rows(path)


def test_drift_flags_moves_beyond_the_spread_and_changed_results():
    old = [row("classic", "2.10.0", "a", 10.0, spread=0.05), row("classic", "2.10.0", "b", 10.0, spread=0.05),
           row("mint", "2.10.0", "a", None, result="no_cpu_kernel")]
    new = [row("classic", "2.10.0", "a", 10.5, spread=0.05),   # within the floor and the spreads
           row("classic", "2.10.0", "b", 30.0, spread=0.05),   # moved x3
           row("mint", "2.10.0", "a", 1.0)]                     # a kernel appeared
    found = timing.drift(old, new)
    assert [(d["shape"], d["family"]) for d in found] == [("b", "classic"), ("a", "mint")]
    assert found[0]["was"] == 10.0 and found[0]["now"] == 30.0 and "x3.00" in found[0]["why"]
    assert found[1]["why"] == "result changed"
    wide = [row("classic", "2.10.0", "b", 10.0, spread=1.5)]    # a noisy recording allows more
    assert timing.drift(wide, [row("classic", "2.10.0", "b", 30.0, spread=0.05)]) == []


def test_worker_measures_a_plain_callable_and_reports_absent_apis():
    out = timing_worker.measure(lambda: sum(range(200)), lambda r: r, repeats=9, budget=0.5)
    assert out["ms"] > 0 and 5 <= out["samples"] <= 9 and out["inner"] >= 1 and out["spread"] >= 0
    res = timing_worker.run_case({"id": "x#0@classic", "side": "classic", "api": "json.no_such_function",
                                  "code": "1"}, {}, lambda r: r)
    assert res["result"] == "absent" and "does not exist" in res["detail"]


def test_worker_builds_expressions_and_statements_with_shape_variables():
    ns = {"randn": lambda *s: list(range(s[0]))}
    fn = timing_worker.build({"id": "a", "setup": "x = randn(N)", "code": "sum(x)", "vars": {"N": 4}}, ns)
    assert fn() == 6
    fn = timing_worker.build({"id": "b", "setup": "x = randn(N)", "code": "k = 2\nfn = lambda: len(x) * k",
                              "vars": {"N": 5}}, ns)
    assert fn() == 10


def test_worker_classifies_a_failing_case_without_crashing():
    res = timing_worker.run_case({"id": "e#0@mint", "side": "mint", "api": "json.dumps",
                                  "code": "fn = lambda: (_ for _ in ()).throw(RuntimeError('The kernel Foo unregistered.'))"},
                                 {}, lambda r: r)
    assert res["result"] == "no_cpu_kernel" and res["side"] == "mint"
    res = timing_worker.run_case({"id": "e#0@mint", "side": "mint", "api": "json.dumps", "code": "1 / 0"},
                                 {}, lambda r: r)
    assert res["result"] == "error" and "ZeroDivisionError" in res["detail"]
