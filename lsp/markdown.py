"""Markdown cards for hovers and ``msmap.lookup``: pure functions over query records.

``mapping_card`` describes a torch API (its MindSpore equivalents, the configured family
first), ``reverse_card`` a MindSpore API (the torch APIs that map to it).  Nothing here
touches the DB or the editor; the inputs are the records documented in DESIGN.md.
"""
from __future__ import annotations

from typing import Any

from kb import views
from kb.phrases import range_text
from kb.versions import in_span

FAMILY_LABEL = {"classic": "MindSpore (classic)", "mint": "MindSpore (mint)"}
SEVERITY_ICON = {"error": "⛔", "warning": "⚠️", "info": "ℹ️"}
PASSED = {"pass", "passed"}  # kb.check results: pass | drift | not_checkable


def code(text: str | None) -> str:
    """Inline code that survives backticks and table pipes in the text."""
    if not text:
        return "—"
    text = str(text).replace("|", "\\|")
    fence = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def version_range(rng: dict[str, Any] | None) -> str:
    return range_text(rng, "mindspore", "≥", "")

def applies(rng: dict[str, Any] | None, version: str | None) -> bool:
    return version is None or in_span(version, rng)


def family_order(targets: list[dict[str, Any]], family: str) -> list[dict[str, Any]]:
    """Targets of the configured family first; stable otherwise."""
    return sorted(targets, key=lambda t: t["family"] != family)


def primary_target(rec: dict[str, Any], family: str, version: str | None) -> dict[str, Any] | None:
    """The target an editor should suggest: configured family, valid for the version."""
    ranked = family_order(rec.get("targets") or [], family)
    for t in ranked:
        if applies(t.get("ms_versions"), version):
            return t
    return ranked[0] if ranked else None


def check_notes(checks: list[dict[str, Any]]) -> list[str]:
    out = []
    for chk in checks or []:
        version = chk.get("ms_version") or chk.get("version") or "?"
        result = str(chk.get("result", chk.get("status", ""))).lower()
        if result in PASSED:
            out.append(f"✓ verified on mindspore {version}")
        elif result and result != "not_checkable":
            claim = chk.get("claim") or chk.get("detail") or ""
            out.append(f"✗ check {result or 'failed'} on mindspore {version}" + (f": {claim}" if claim else ""))
    return list(dict.fromkeys(out))


def target_line(t: dict[str, Any], version: str | None) -> str:
    label = FAMILY_LABEL.get(t["family"], t["family"])
    api = code(t.get("api")) if t.get("api") else "*no equivalent*"
    parts = [f"**{label}:** {api} — `{t['relation']}`"]
    rng = version_range(t.get("ms_versions"))
    if rng:
        parts.append(rng)
    if not applies(t.get("ms_versions"), version):
        parts.append(f"*not for mindspore {version}*")
    parts.extend(check_notes(t.get("checks") or []))
    return " · ".join(parts)


def param_table(rows: list[views.ParamRow]) -> list[str]:
    out = ["| " + " | ".join(views.PARAM_COLUMNS) + " |", "|---|---|---|---|---|"]
    for r in rows:
        change = r.kind + (f": {code(r.assignment)}" if r.assignment else "")
        if r.note:
            change += " — " + r.note.replace("|", "\\|").replace("\n", " ")
        out.append("| " + " | ".join(code(v) for v in r.values) + f" | {change} |")
    return out


def caveat_lines(caveats: list[dict[str, Any]], version: str | None) -> list[str]:
    out = []
    for c in caveats:
        head = f"- {SEVERITY_ICON.get(c['severity'], '')} **{c['severity']}** — **{c['title']}**"
        rng = version_range(c.get("ms_versions"))
        if rng:
            head += f" ({rng}" + ("" if applies(c.get("ms_versions"), version) else f"; not for {version}") + ")"
        body = " ".join((c.get("body") or "").split())
        out.append(head + (f": {body}" if body else ""))
    return out


def mapping_card(rec: dict[str, Any], family: str = "classic", version: str | None = None,
                 device: str | None = None) -> str:
    """The hover card of a torch API record."""
    lines = [f"**{rec['torch']}** · {rec.get('kind') or 'api'} · {rec.get('namespace') or ''}".rstrip(" ·"), ""]
    targets = family_order(rec.get("targets") or [], family)
    if not targets:
        lines.append("*No MindSpore mapping recorded.*")
    lines.extend(target_line(t, version) + "  " for t in targets)
    perf = performance_line(rec.get("timings") or [], family, version, device)
    if perf:
        lines += ["", perf]
    if rec.get("advice"):
        lines += ["", f"**Advice:** {rec['advice']}"]
    for api, rows in _tables_for(rec, family, version):
        lines += ["", f"**Parameters** → {code(api)}", ""] + param_table(rows)
    notes = [t["note"] for t in targets if t.get("note") and applies(t.get("ms_versions"), version)]
    for note in dict.fromkeys(notes):
        lines += ["", note.strip()]
    caveats = rec.get("caveats") or []
    if caveats:
        lines += ["", "**Caveats**", ""] + caveat_lines(caveats, version)
    sigs = _signatures(rec, targets, version)
    if sigs:
        lines += ["", "```python"] + sigs + ["```"]
    return "\n".join(lines).strip() + "\n"


def performance_line(rows: list[dict[str, Any]], family: str, version: str | None,
                     device: str | None) -> str | None:
    """A measured cliff for the configured family, version and device; on a device without timings,
    "not measured" beside the CPU cliff (never an estimate).  None when nothing crosses a threshold."""
    from kb import timings

    if not rows:
        return None
    version = version or timings.versions(rows)[-1]
    v = timings.verdict(rows, family, version, device or "CPU")
    if v and v["cliff"]:
        return f"**Performance:** {v['line']}."
    if v and v["status"] == "not_measured" and (device or "CPU") != "CPU":
        cpu = timings.verdict(rows, family, version, "CPU")
        if cpu and cpu["cliff"]:
            return f"**Performance:** {device}: not measured. {cpu['line']}."
    return None


def _tables_for(rec: dict[str, Any], family: str, version: str | None) -> list[tuple[str, list[views.ParamRow]]]:
    """(api, rows) of each family's first valid target with parameters that differ."""
    shown: dict[str, tuple[str, list[views.ParamRow]]] = {}
    for t in family_order(rec.get("targets") or [], family):
        if t["family"] in shown or not t.get("api") or not applies(t.get("ms_versions"), version):
            continue
        rows = views.param_rows(t.get("params"), differing_only=True)
        if rows:
            shown[t["family"]] = (t["api"], rows)
    return list(shown.values())


def _signatures(rec: dict[str, Any], targets: list[dict[str, Any]], version: str | None) -> list[str]:
    out = []
    if rec.get("torch_signature"):
        out.append(f"{rec['torch']}{rec['torch_signature']}")
    for t in targets:
        if t.get("api") and t.get("ms_signature") and applies(t.get("ms_versions"), version):
            out.append(f"{t['api']}{t['ms_signature']}")
    return list(dict.fromkeys(out))


def reverse_card(rec: dict[str, Any], version: str | None = None) -> str:
    """The hover card of a MindSpore API: the torch APIs that map to it."""
    lines = [f"**{rec['mindspore']}** · MindSpore API", ""]
    present = rec.get("ms_versions_present") or []
    if present:
        lines.append("present in mindspore " + ", ".join(present) + "  ")
    lines.extend(check_notes(rec.get("checks") or []))
    if rec.get("torch"):
        lines += ["", "| torch | family | relation |", "|---|---|---|"]
        rows: dict[tuple[str, str], list[str]] = {}
        for r in rec["torch"]:  # one row per (torch API, family); version-split relations joined
            rows.setdefault((r["torch"], r["family"]), []).append(f"`{r['relation']}`")
        lines += [f"| {code(t)} | {f} | {' / '.join(dict.fromkeys(rel))} |" for (t, f), rel in rows.items()]
    else:
        lines += ["", "*No torch API in the knowledge base maps to this name.*"]
    if rec.get("caveats"):
        lines += ["", "**Caveats**", ""] + caveat_lines(rec["caveats"], version)
    if rec.get("ms_signature"):
        lines += ["", "```python", f"{rec['mindspore']}{rec['ms_signature']}", "```"]
    return "\n".join(lines).strip() + "\n"
