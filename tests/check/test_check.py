"""msmap check: wrong entries are caught and reported precisely; clean data passes."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.conftest import run_msmap

needs_mindspore = pytest.mark.skipif(importlib.util.find_spec("mindspore") is None, reason="mindspore not installed")

BROKEN = """\
mappings:
  - torch: torch.nn.ReLU
    targets:
      - family: classic
        api: mindspore.nn.NoSuchReLU
        relation: renamed
        provenance: [{kind: curator, ref: test}]
  - torch: torch.nn.Flatten
    targets:
      - family: classic
        api: mindspore.nn.Flatten
        relation: param_names_differ
        params:
          - {torch: start_dim, ms: start_dim, kind: same, torch_default: "1", ms_default: "5"}
          - {torch: end_dim, ms: last_dim, kind: renamed, torch_default: "-1", ms_default: "-1"}
        provenance: [{kind: curator, ref: test}]
caveats:
  - id: dense-false-claims
    title: Deliberately false claims
    body: Every claim below is wrong on purpose, except the has_param one.
    severity: info
    topic: test
    applies_to: [torch.nn.Linear, mindspore.nn.Dense]
    provenance: [{kind: curator, ref: test}]
    claims:
      - {kind: default, api: mindspore.nn.Dense, param: has_bias, value: "False"}
      - {kind: lacks_param, api: mindspore.nn.Dense, param: activation}
      - {kind: absent, api: mindspore.nn.Dense}
      - {kind: exists, api: mindspore.nn.Densest}
      - {kind: has_param, api: mindspore.nn.Dense, param: has_bias}
      - {kind: default, api: torch.nn.Linear, param: bias, value: "True"}
"""


def _clean(data: Path) -> Path:
    """tests/kbdata minus its fictional torch.nn.Unfoldable, with derived relations as derive would write them.

    The fixture's derived rows are hand-written; here each target's relation and parameter table are
    recomputed with ``compare_params`` from the installed libraries, as ``msmap derive`` would.
    """
    from kb.check.run import introspect
    from kb.derive import compare_params

    files = sorted((data / "derived").glob("*.jsonl"))
    rows = {f: [json.loads(l) for l in f.read_text().splitlines() if l.strip() and "Unfoldable" not in l]
            for f in files}
    targets = [(m, t) for rs in rows.values() for m in rs for t in m["targets"] if t.get("api")]
    _, ms = introspect("mindspore", sorted({t["api"] for _, t in targets}))
    _, th = introspect("torch", sorted({m["torch"] for m, _ in targets}))
    for m, t in targets:
        t["relation"], t["params"] = compare_params(th[m["torch"]], ms[t["api"]])
    for f, rs in rows.items():
        f.write_text("".join(json.dumps(r) + "\n" for r in rs))
    return data


@needs_mindspore
def test_clean_data_passes(small_data, tmp_path):
    data = _clean(small_data)
    r = run_msmap("check", "--json", "--data", str(data), "--db", str(tmp_path / "kb.sqlite"))
    assert r.returncode == 0, r.stdout + r.stderr
    out = json.loads(r.stdout)
    assert out["totals"]["drift"] == 0
    assert out["totals"]["pass"] >= 15
    assert out["versions"]["mindspore"] == "2.10.0"
    assert out["totals"]["skipped_out_of_range"] >= 1  # the keep_prob target and caveat are for mindspore < 2.0


@needs_mindspore
def test_wrong_entries_are_caught_precisely(small_data, tmp_path):
    data = _clean(small_data)
    (data / "curated" / "broken.yaml").write_text(BROKEN)
    r = run_msmap("check", "--json", "--data", str(data), "--db", str(tmp_path / "kb.sqlite"))
    assert r.returncode == 1, r.stderr
    failures = {(f["subject"], f["claim"]): f for f in json.loads(r.stdout)["failures"]}

    fake = failures[("mindspore.nn.NoSuchReLU", "mindspore.nn.NoSuchReLU exists")]
    assert "not found in mindspore 2.10.0" in fake["detail"]
    assert any("broken.yaml:2" in e for e in fake["entries"])  # file:line of the curated mapping

    wrong_default = failures[("mindspore.nn.Flatten", "mindspore.nn.Flatten has parameter start_dim with default 5")]
    assert wrong_default["detail"] == "default of start_dim is 1 in mindspore 2.10.0, not 5"

    renamed = failures[("mindspore.nn.Flatten", "mindspore.nn.Flatten has parameter last_dim with default -1")]
    assert "has no parameter last_dim: (start_dim=1, end_dim=-1)" in renamed["detail"]

    claims = {claim: f for (subject, claim), f in failures.items() if subject == "dense-false-claims"}
    assert claims["default of mindspore.nn.Dense.has_bias is False"]["detail"] == \
        "default of has_bias is True in mindspore 2.10.0, not False"
    assert "has parameter activation" in claims["mindspore.nn.Dense has no parameter activation"]["detail"]
    assert "exists in mindspore 2.10.0" in claims["mindspore.nn.Dense does not exist"]["detail"]
    assert "not found" in claims["mindspore.nn.Densest exists"]["detail"]
    assert "mindspore.nn.Dense accepts parameter has_bias" not in claims  # a true claim passes
    assert "default of torch.nn.Linear.bias is True" not in claims
    entry = claims["mindspore.nn.Dense does not exist"]["entries"][0]
    assert entry.startswith("caveat dense-false-claims (") and "broken.yaml:" in entry


@needs_mindspore
def test_text_report_names_entry_claim_and_library(small_data, tmp_path):
    data = _clean(small_data)
    (data / "curated" / "broken.yaml").write_text(BROKEN)
    r = run_msmap("check", "--data", str(data), "--db", str(tmp_path / "kb.sqlite"))
    assert r.returncode == 1
    assert "namespace" in r.stdout and "TOTAL" in r.stdout and "DRIFT (" in r.stdout
    assert "claim:     mindspore.nn.Flatten has parameter start_dim with default 5" in r.stdout
    assert "installed: default of start_dim is 1 in mindspore 2.10.0, not 5" in r.stdout
    assert "\r" not in r.stderr  # no progress bar when stderr is not a terminal


@needs_mindspore
def test_record_is_sorted_and_shown_by_lookup(small_data, tmp_path):
    data = _clean(small_data)
    db = tmp_path / "kb.sqlite"
    r = run_msmap("check", "--record", "--data", str(data), "--db", str(db))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = (data / "checks" / "mindspore-2.10.0.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    assert rows == sorted(rows, key=lambda r: (r["subject"], r["kind"], r["claim"]))
    assert set(rows[0]) == {"subject", "claim", "kind", "ms_version", "torch_version", "result", "detail",
                            "checked_on"}
    out = run_msmap("lookup", "torch.nn.Linear", data=data, db=tmp_path / "kb2.sqlite").stdout
    assert "verified on mindspore 2.10.0:" in out and "claims pass" in out


def test_missing_mindspore_exits_2_with_install_hint(monkeypatch, small_data, tmp_path, capsys):
    import argparse

    from kb.check import run as check_run
    from kb.commands import check

    monkeypatch.setattr(check_run, "installed_version", lambda dist: None)
    args = argparse.Namespace(data=str(small_data), db=str(tmp_path / "kb.sqlite"), json=False, record=False,
                              verbose=False)
    assert check.run(args) == 2
    assert 'pip install "msmap[check]"' in capsys.readouterr().err
