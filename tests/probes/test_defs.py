"""Probe definitions load, validate and select; results record deterministically."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kb.probes import defs

ROOT = Path(__file__).resolve().parent.parent.parent


def test_bundled_definitions_load_and_have_unique_ids():
    probes = defs.load_defs(ROOT / "data" / "probes" / "defs")
    assert len({p["id"] for p in probes}) == len(probes)
    assert sum(p["kind"] == "caveat" for p in probes) >= 30


def test_missing_fields_are_reported(tmp_path):
    (tmp_path / "bad.yaml").write_text("probes:\n  - id: x\n    torch: torch.abs\n")
    with pytest.raises(ValueError, match="bad.yaml: probe #0 \\(x\\): missing ms_api, family, kind"):
        defs.load_defs(tmp_path)


def test_select_by_substring_or_glob():
    ps = [{"id": "gen/torch.abs/mindspore.ops.abs", "torch": "torch.abs", "ms_api": "mindspore.ops.abs"},
          {"id": "caveat/x", "torch": "torch.nn.ReLU", "ms_api": "mindspore.nn.ReLU"}]
    assert [p["id"] for p in defs.select(ps, "ReLU")] == ["caveat/x"]
    assert [p["id"] for p in defs.select(ps, "gen/*")] == ["gen/torch.abs/mindspore.ops.abs"]


def test_partial_record_updates_only_its_rows(tmp_path):
    path = tmp_path / "results-mindspore-2.10.0-cpu.jsonl"
    defs.record([{"probe": "b", "result": "holds"}, {"probe": "a", "result": "differs"}], path, replace_all=True)
    defs.record([{"probe": "b", "result": "error"}], path, replace_all=False)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(r["probe"], r["result"]) for r in rows] == [("a", "differs"), ("b", "error")]
    assert set(rows[0]) == set(defs.RECORD_FIELDS)
