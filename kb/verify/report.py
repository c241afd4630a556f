"""The text form of a verify verdict."""
from __future__ import annotations

from kb.verify.run import Verdict


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.2e}"


def _row(r: dict) -> str:
    mark = "ok " if r["ok"] else "BAD"
    if r.get("ms_shape") is not None and r.get("torch_shape") is not None:
        return (f"  {mark} {r['name']}: shape {tuple(r['ms_shape'])} {r['ms_dtype']}, "
                f"max abs {_num(r['max_abs'])}, max rel {_num(r['max_rel'])}")
    what = r.get("note") or (r["ms"] if r["ok"] else r.get("why", ""))
    return f"  {mark} {r['name']}: {what}"


MAX_ROWS = 30  # output lines shown; a model returning a list of thousands of numbers gets a summary


def _output_lines(rows: list[dict]) -> list[str]:
    if len(rows) <= MAX_ROWS:
        return [_row(r) for r in rows]
    bad = [r for r in rows if not r["ok"]]
    shown = bad[:MAX_ROWS] if bad else rows[:MAX_ROWS]
    rest = len(rows) - len(shown)
    return [_row(r) for r in shown] + [f"  ... and {rest} more outputs ({len(bad) - len(shown) if bad else 0} of "
                                       f"them differ; --json lists all)"]


def verdict_text(v: Verdict) -> str:
    if v.verdict == "error":
        side = f" ({v.side})" if v.side else ""
        return f"error: {v.stage}{side}" + (f" at {v.where}" if v.where else "") + f": {v.message}"
    lines = _output_lines(v.outputs)
    if v.grads:  # one line per gradient only when it differs (a model has hundreds)
        bad = [r for r in v.grads if not r["ok"]]
        worst = max((r["max_abs"] or 0.0 for r in v.grads), default=0.0)
        lines.append(f"  gradients: {len(v.grads)} parameters compared, {len(bad)} differ, max abs {_num(worst)}")
        lines += [_row(r) for r in bad[:10]]
    w = v.weights
    lines.append(f"  weights: {len(w.get('matched', []))} matched, {len(w.get('tied', []))} tied, "
                 f"{len(w.get('dropped', []))} dropped, {len(w.get('unused_torch', []))} unused torch keys")
    head = "match" if v.verdict == "match" else f"mismatch ({v.stage}): {v.message}"
    return "\n".join([head, *lines])
