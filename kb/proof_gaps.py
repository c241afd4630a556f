"""Targets that are not automatic for want of a proof, and why (``msmap stats --unproven``).

A target the engine would rewrite by its relation and parameter map is automatic only when a rewrite
probe ran the emitted code next to torch and it matched (``kb.build._gate_unproven``,
``_apply_rewrite_proof``). This lists the others per family, each with the class of reason its recorded
probe row gives, so the gaps can be worked on by kind:

- ``no kernel``: the emitted op has no kernel on the probing machine's CPU (it cannot run here);
- ``wrong``: the emitted code ran and gave other values, shapes or dtypes than torch;
- ``crash``: the emitted code raised where torch did not;
- ``no recipe``: no input could be generated for a required parameter (no recipe, no signature);
- ``torch fails``: torch itself refused every generated call;
- ``left``: the engine left every generated call for a human (a parameter with no equivalent);
- ``other``: no probe row, or one that ran nothing for another reason.
"""
from __future__ import annotations

import json
import sqlite3
from typing import Any

REASONS = ("no kernel", "wrong", "crash", "no recipe", "torch fails", "left", "other")


def reason_class(proof: dict[str, Any]) -> str:
    """The class (``REASONS``) of why a target's recorded rewrite probe did not prove it."""
    detail = str(proof.get("detail") or "")
    if proof.get("result") == "failed":
        return "crash" if ": crash: " in detail[:200] else "wrong"
    if "no_cpu_kernel" in detail:
        return "no kernel"
    if detail.startswith(("no recipe", "no recorded torch signature")):
        return "no recipe"
    if detail.startswith("torch fails on the generated call"):
        return "torch fails"
    if detail.startswith("no executed rewrite: left"):
        return "left"
    return "other"


def gaps(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """One row per target that is not automatic because no probe proved it (gated off) or a probe found
    other results (failed): ``{family, torch, api, status: gated|failed, reason, detail}``, by family and
    torch name. Targets turned off for another reason (a curator's choice, no equivalent) are not listed."""
    columns = {r[1] for r in conn.execute("PRAGMA table_info(targets)")}
    if "proof" not in columns:
        return []
    out = []
    for torch, family, api, note, text in conn.execute(
            "SELECT torch, family, api, note, proof FROM targets WHERE api IS NOT NULL AND auto = 0 "
            "ORDER BY family, torch, seq"):
        proof = json.loads(text) if text else {}
        if proof.get("result") == "failed":
            status = "failed"
        elif str(note or "").startswith("Unproven rewrite:"):
            status = "gated"
        else:
            continue
        out.append({"family": family, "torch": torch, "api": api, "status": status, "reason": reason_class(proof),
                    "detail": str(proof.get("detail") or "")[:300]})
    return out


def summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per family, how many gaps each reason class holds."""
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        counts = out.setdefault(r["family"], dict.fromkeys(REASONS, 0))
        counts[r["reason"]] += 1
    return dict(sorted(out.items()))
