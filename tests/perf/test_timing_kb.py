"""Timings through the knowledge base: build, lookup, hover card, scan summary, docs page."""
from __future__ import annotations

import json
from pathlib import Path

from kb.query import KB
from tests.conftest import ROOT, run_msmap
from tests.perf.rows import row

LINEAR = ["torch.nn.Linear"]


def _with_timings(data: Path, rows: list[dict]) -> Path:
    (data / "timing").mkdir(exist_ok=True)
    (data / "timing" / "timing-mindspore-x-cpu.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return data


def linear_rows() -> list[dict]:
    """Linear made slow on 2.10.0 (a fixture, not a measurement)."""
    return [row("classic", v, s, r, op="linear", apis=LINEAR)
            for v, ratios in (("2.7.1", (1.0, 1.2)), ("2.10.0", (40.0, 48.0))) for s, r in zip(("a", "b"), ratios)]


def test_build_loads_timings_and_query_joins_them_by_torch_api(small_data, tmp_path):
    kb = KB.open(db=tmp_path / "kb.sqlite", data=_with_timings(small_data, linear_rows()))
    rec = kb.mapping("torch.nn.Linear")
    assert len(rec["timings"]) == 4 and {t["ms_version"] for t in rec["timings"]} == {"2.7.1", "2.10.0"}
    assert kb.timings_for("torch.nn.Dropout") == []
    assert len(kb.timings()) == 4
    assert KB(kb.path, results=False).mapping("torch.nn.Linear").get("timings") is None


def test_kb_without_timings_answers_empty(small_kb):
    assert small_kb.timings() == [] and small_kb.mapping("torch.nn.Linear")["timings"] == []


def test_lookup_shows_the_cliff_and_the_version_that_avoids_it(small_data, tmp_path):
    data = _with_timings(small_data, linear_rows())
    out = run_msmap("lookup", "nn.Linear", "--ms-version", "2.10.0", data=data, db=tmp_path / "kb.sqlite")
    assert out.returncode == 0, out.stderr
    perf = out.stdout.split("PERFORMANCE", 1)[1]
    assert "CPU, mindspore 2.10.0 (classic): ~44x slower than torch; ~40x slower than 2.7.1" in perf
    assert "mindspore 2.7.1 avoids it" in perf
    ascend = run_msmap("lookup", "nn.Linear", "--device", "Ascend", data=data, db=tmp_path / "kb.sqlite")
    assert "Ascend, mindspore 2.10.0: performance not measured" in ascend.stdout
    old = run_msmap("lookup", "nn.Linear", "--ms-version", "2.7.1", data=data, db=tmp_path / "kb.sqlite")
    assert "slower" not in old.stdout.split("PERFORMANCE", 1)[1]


def test_hover_card_shows_cliffs_only_and_labels_unmeasured_devices(small_data, tmp_path):
    from lsp.markdown import mapping_card

    kb = KB.open(db=tmp_path / "kb.sqlite", data=_with_timings(small_data, linear_rows()))
    rec = kb.mapping("torch.nn.Linear")
    card = mapping_card(rec, "classic", "2.10.0", "CPU")
    assert "**Performance:** CPU, mindspore 2.10.0 (classic): ~44x slower than torch" in card
    assert "mindspore 2.7.1 avoids it" in card
    assert "Performance" not in mapping_card(rec, "classic", "2.7.1", "CPU")
    ascend = mapping_card(rec, "classic", "2.10.0", "Ascend")
    assert "**Performance:** Ascend: not measured. CPU, mindspore 2.10.0" in ascend


def test_scan_names_the_op_that_dominates(small_data, tmp_path):
    data = _with_timings(small_data, linear_rows())
    project = tmp_path / "model.py"
    project.write_text("import torch\nfrom torch import nn\nfc = nn.Linear(3, 4)\nfc2 = nn.Linear(4, 2)\n")
    out = run_msmap("scan", str(project), "--device", "CPU", data=data, db=tmp_path / "kb.sqlite")
    assert "performance (classic, mindspore 2.10.0, CPU): these ops dominate the slowdown:" in out.stdout
    assert "torch.nn.Linear (2 uses): CPU, mindspore 2.10.0 (classic): ~44x slower than torch" in out.stdout
    js = json.loads(run_msmap("scan", str(project), "--format", "json", "--ms-version", "2.7.1",
                              data=data, db=tmp_path / "kb.sqlite").stdout)
    assert js["summary"]["performance"]["ops"] == []


def test_bad_timing_file_is_a_one_line_data_error(small_data, tmp_path):
    good = row("classic", "2.10.0", "a", 2.0, op="linear", apis=LINEAR)
    path = _with_timings(small_data, []) / "timing" / "timing-mindspore-x-cpu.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(dict(good, ratio=-1.0)) + "\n")
    out = run_msmap("lookup", "nn.Linear", data=small_data, db=tmp_path / "kb.sqlite")
    assert out.returncode == 3 and "Traceback" not in out.stderr
    assert "timing-mindspore-x-cpu.jsonl:2: entry torch=torch.nn.Linear: field 'ratio'" in out.stderr
    path.write_text("{oops\n")
    out = run_msmap("lookup", "nn.Linear", data=small_data, db=tmp_path / "kb.sqlite")
    assert out.returncode == 3 and "timing-mindspore-x-cpu.jsonl:1: invalid JSON" in out.stderr


def test_docs_page_comes_from_the_recorded_rows():
    from kb.docs import performance

    page = performance.render(linear_rows())
    assert "| linear | `torch.nn.Linear` | CPU, mindspore 2.10.0 (classic): ~44x slower than torch" in page
    assert "| linear | `torch.nn.Linear` | a | classic | 1.00x (4 ms) | 40.00x (160 ms) |" in page
    assert "measured on CPU only" in page
    assert "No timings recorded yet." in performance.render([])
    assert (ROOT / "docs" / "performance.md").is_file()


def test_convert_summary_names_the_op_that_dominates(small_data, tmp_path):
    data = _with_timings(small_data, linear_rows())
    project = tmp_path / "model.py"
    project.write_text("import torch\nfrom torch import nn\nfc = nn.Linear(3, 4)\n")
    out = run_msmap("convert", str(project), "--device", "CPU", data=data, db=tmp_path / "kb.sqlite")
    assert out.returncode == 0, out.stderr
    assert "torch.nn.Linear (1 uses): CPU, mindspore 2.10.0 (classic): ~44x slower than torch" in out.stderr
    assert "+fc = ms.nn.Dense(3, 4)" in out.stdout  # the diff itself is as before
    fast = run_msmap("convert", str(project), "--ms-version", "2.7.1", data=data, db=tmp_path / "kb.sqlite")
    assert "dominate" not in fast.stderr
