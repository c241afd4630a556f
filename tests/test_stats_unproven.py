"""`msmap stats --unproven`: the targets that are not automatic for want of a proof, with the class of
reason; and, on the bundled data, that no automatic target lacks a proof."""
from __future__ import annotations

import json

from kb.proof_gaps import REASONS, reason_class
from tests.conftest import run_msmap


def _row(family: str, api: str, result: str, detail: str) -> dict:
    return {"probe": f"rewrite/{family}/torch.nn.Linear", "kind": "rewrite", "torch": "torch.nn.Linear",
            "family": family, "ms_api": api, "ms_version": "2.10.0", "torch_version": "2.13.0", "device": "cpu",
            "result": result, "detail": detail, "passed": [], "failed": [], "styles": {}}


def test_reason_classes():
    assert reason_class({"result": "failed", "detail": "positional call: crash: TypeError: int32"}) == "crash"
    assert reason_class({"result": "failed", "detail": "keyword call: wrong: dtype: out"}) == "wrong"
    assert reason_class({"result": "unprobed",
                         "detail": "no executed rewrite: no_cpu_kernel: RuntimeError: The kernel X"}) == "no kernel"
    assert reason_class({"result": "unprobed", "detail": "no recipe for the required parameter 'tau'"}) == "no recipe"
    assert reason_class({"result": "unprobed", "detail": "torch fails on the generated call: E"}) == "torch fails"
    assert reason_class({"result": "unprobed", "detail": "no executed rewrite: left: no equivalent"}) == "left"
    assert reason_class({}) == "other"


def test_stats_unproven_lists_gated_and_failed_targets(small_data, tmp_path):
    (small_data / "probes").mkdir()
    rows = [_row("classic", "mindspore.nn.Dense", "failed", "positional call: wrong: shape: out: (2, 4) vs (2, 3)"),
            _row("mint", "mindspore.mint.nn.Linear", "unprobed",
                 "no executed rewrite: no_cpu_kernel: RuntimeError: The kernel Dense unregistered.")]
    (small_data / "probes" / "rewrites-mindspore-2.10.0-cpu.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows))
    done = run_msmap("stats", "--unproven", "--json", data=small_data, db=tmp_path / "kb.sqlite")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    linear = {(t["family"], t["status"], t["reason"]) for t in out["targets"] if t["torch"] == "torch.nn.Linear"}
    assert ("classic", "failed", "wrong") in linear
    assert ("mint", "gated", "no kernel") in linear
    assert out["summary"]["classic"]["wrong"] >= 1 and set(out["summary"]["mint"]) == set(REASONS)
    text = run_msmap("stats", "--unproven", data=small_data, db=tmp_path / "kb.sqlite").stdout
    assert "classic  failed  wrong        torch.nn.Linear -> mindspore.nn.Dense" in text
    assert "mint     gated   no kernel    torch.nn.Linear -> mindspore.mint.nn.Linear" in text
    assert text.splitlines()[-4].split() == ["family", *" ".join(REASONS).split()]


def test_no_automatic_target_lacks_a_proof(real_kb):
    """Automatic means proven: every automatic target of the built KB has a rewrite proof that ran and
    matched, or is outside what a call probe can run (not a tensor computation); none is neither."""
    counts = real_kb.rewrite_proofs()
    assert set(counts) == {"classic", "mint"}
    for family, d in counts.items():
        assert d["unprobed"] == 0, family
        assert d["auto"] == d["proven"] + d["not_call_probed"], family
