"""The text form of a verify verdict."""
from __future__ import annotations

from kb.verify.run import Verdict


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.2e}"


def verdict_text(v: Verdict) -> str:
    if v.verdict == "error":
        side = f" ({v.side})" if v.side else ""
        return f"error: {v.stage}{side}" + (f" at {v.where}" if v.where else "") + f": {v.message}"
    lines = []
    for r in v.outputs + v.grads:
        mark = "ok " if r["ok"] else "BAD"
        lines.append(f"  {mark} {r['name']}: shape {tuple(r['ms_shape'])} {r['ms_dtype']}, "
                     f"max abs {_num(r['max_abs'])}, max rel {_num(r['max_rel'])}")
    w = v.weights
    lines.append(f"  weights: {len(w.get('matched', []))} matched, {len(w.get('tied', []))} tied, "
                 f"{len(w.get('dropped', []))} dropped, {len(w.get('unused_torch', []))} unused torch keys")
    head = "match" if v.verdict == "match" else f"mismatch ({v.stage}): {v.message}"
    return "\n".join([head, *lines])
