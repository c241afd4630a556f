"""Present check results: summary table per namespace, failures, JSON, and recorded rows."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kb.check.verify import NEEDS

RESULTS = ("pass", "drift", "not_checkable")
RECORD_FIELDS = ("subject", "claim", "kind", "ms_version", "torch_version", "result", "detail", "checked_on")
MS_BUCKETS = ("mindspore.mint.nn.functional", "mindspore.mint.nn", "mindspore.mint", "mindspore.nn",
              "mindspore.ops", "mindspore.Tensor", "mindspore.dataset", "mindspore.train")


def namespace(row: dict[str, Any]) -> str:
    subject = row["subject"]
    if row["kind"].startswith("claim:"):
        return "caveats"
    if subject.startswith("mindspore"):
        return next((b for b in MS_BUCKETS if subject.startswith(b + ".")), "mindspore")
    from kb.build import namespace_of

    return namespace_of(subject)


def summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        ns = out.setdefault(namespace(r), {"checked": 0, **{k: 0 for k in RESULTS}})
        ns["checked"] += 1
        ns[r["result"]] += 1
    return dict(sorted(out.items()))


def as_json(outcome: dict[str, Any]) -> dict[str, Any]:
    rows = outcome["rows"]
    totals = {"checked": len(rows), **{k: sum(r["result"] == k for r in rows) for k in RESULTS},
              "skipped_out_of_range": outcome["skipped"]}
    return {"versions": outcome["versions"], "totals": totals, "namespaces": summary(rows),
            "failures": [dict(r, namespace=namespace(r)) for r in rows if r["result"] == "drift"],
            "results": rows}


def render(outcome: dict[str, Any], verbose: bool = False) -> str:
    rows, v = outcome["rows"], outcome["versions"]
    lines = [f"msmap check against mindspore {v['mindspore']}"
             + (f" and torch {v['torch']}" if v.get("torch") else " (torch not installed: torch facts not checkable)")]
    table = [["namespace", "checked", "passed", "drifted", "not checkable"]]
    for ns, c in summary(rows).items():
        table.append([ns, str(c["checked"]), str(c["pass"]), str(c["drift"]), str(c["not_checkable"])])
    total = [sum(r["result"] == k for r in rows) for k in RESULTS]
    table.append(["TOTAL", str(len(rows))] + [str(n) for n in total])
    widths = [max(len(r[i]) for r in table) for i in range(5)]
    for n, r in enumerate(table):
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)]
        if n == len(table) - 1:
            lines.append("  ".join("-" * w for w in widths))
        lines.append("  ".join(cells))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    if outcome["skipped"]:
        lines.append(f"({outcome['skipped']} entries skipped: their version range excludes mindspore {v['mindspore']})")
    needs = sorted({r["detail"][len(NEEDS):].split(",", 1)[0] for r in rows
                    if r["result"] == "not_checkable" and r["detail"].startswith(NEEDS)})
    if needs:
        count = sum(r["result"] == "not_checkable" and r["detail"].startswith(NEEDS) for r in rows)
        lines.append(f"({count} claims not checkable here: their torch names need packages that are not installed,"
                     f" optional dependencies or device plugins: {', '.join(needs)})")
    drift = [r for r in rows if r["result"] == "drift"]
    if drift:
        lines.append("")
        lines.append(f"DRIFT ({len(drift)})")
        for r in drift:
            lines.extend(_failure(r))
    if verbose:
        nc = [r for r in rows if r["result"] == "not_checkable"]
        if nc:
            lines.append("")
            lines.append(f"NOT CHECKABLE ({len(nc)})")
            lines.extend(f"  {r['subject']}: {r['claim']} — {r['detail']}" for r in nc)
    lines.append("")
    lines.append("clean: every checkable claim holds" if not drift else f"{len(drift)} claim(s) drifted")
    return "\n".join(lines)


def _failure(r: dict[str, Any]) -> list[str]:
    out = [f"  {r['subject']}  [{r['kind']}]", f"    claim:     {r['claim']}", f"    installed: {r['detail']}"]
    entries = r.get("entries") or []
    for e in entries[:5]:
        out.append(f"    entry:     {e}")
    if len(entries) > 5:
        out.append(f"    ... and {len(entries) - 5} more entries")
    return out


def record(outcome: dict[str, Any], checks_dir: Path) -> Path:
    """Write ``checks_dir/mindspore-<version>.jsonl``: one sorted row per checked fact."""
    checks_dir.mkdir(parents=True, exist_ok=True)
    path = checks_dir / f"mindspore-{outcome['versions']['mindspore']}.jsonl"
    rows = sorted(({k: r[k] for k in RECORD_FIELDS} for r in outcome["rows"]),
                  key=lambda r: (r["subject"], r["kind"], r["claim"]))
    tmp = path.parent / f".{path.stem}.partial"  # never matches the build's *.json* glob
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows), encoding="utf-8")
    tmp.replace(path)
    return path
