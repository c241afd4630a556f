"""Terminal rendering of query records (plain text; ANSI colour only on a TTY)."""
from __future__ import annotations

import os
import re
import shutil
import sys
import textwrap
from typing import Any

SEV_COLOUR = {"error": "31", "warning": "33", "info": "36"}


class Style:
    def __init__(self, colour: bool | None = None) -> None:
        if colour is None:
            colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        self.colour = colour

    def __call__(self, text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.colour else text

    def bold(self, text: str) -> str:
        return self(text, "1")

    def dim(self, text: str) -> str:
        return self(text, "2")


def version_text(rng: dict[str, Any] | None, prefix: str = "mindspore") -> str:
    rng = rng or {}
    since, until = rng.get("since"), rng.get("until")
    if since and until:
        return f"{prefix} >={since},<{until}"
    if since:
        return f"{prefix} >={since}"
    if until:
        return f"{prefix} <{until}"
    return f"{prefix}: all versions"


def provenance_text(provs: list[dict[str, Any]]) -> str:
    return "; ".join(f"{p['kind']}: {p['ref']}" + (f" ({p['note']})" if p.get("note") else "") for p in provs)


def _wrap(text: str, indent: int, width: int) -> list[str]:
    """Wrap Markdown-ish text: paragraphs are re-flowed, code and list lines kept."""
    out: list[str] = []
    para: list[str] = []
    in_code = False

    def flush() -> None:
        if para:
            out.extend(textwrap.wrap(" ".join(para), width=max(40, width - indent),
                                     initial_indent=" " * indent, subsequent_indent=" " * indent))
            para.clear()

    for line in (text or "").strip().split("\n"):
        if line.strip().startswith("```"):
            flush()
            in_code = not in_code
            continue
        if in_code or line.startswith("    "):
            flush()
            out.append(" " * (indent + 2) + line)
        elif not line.strip():
            flush()
        elif line.lstrip().startswith(("- ", "* ", "1. ")):
            flush()
            para.append(line.strip())
        else:
            para.append(line.strip())
    flush()
    return out


def _table(rows: list[list[str]], indent: int) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, r in enumerate(rows):
        lines.append(" " * indent + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if n == 0:
            lines.append(" " * indent + "  ".join("-" * w for w in widths))
    return lines


def param_rows(params: list[dict[str, Any]]) -> list[list[str]]:
    rows = [["torch", "mindspore", "torch default", "ms default", "change"]]
    for p in params:
        change = p["kind"]
        if p.get("transform"):
            expr = re.sub(r"\bv\b", p.get("torch") or "v", p["transform"])
            change += f": {p.get('ms') or '?'} = {expr}"
        if p.get("note"):
            change += f" — {p['note']}"
        rows.append([p.get("torch") or "—", p.get("ms") or "—", str(p.get("torch_default") or ""),
                     str(p.get("ms_default") or ""), change])
    return rows


def render_mapping(rec: dict[str, Any], style: Style | None = None, ms_version: str | None = None) -> str:
    st = style or Style()
    width = min(shutil.get_terminal_size((100, 20)).columns, 120)
    lines = [st.bold(rec["torch"]) + st.dim(f"  ({rec.get('kind') or '?'} · {rec['namespace']} · {rec['source']})")]
    if rec.get("torch_signature"):
        lines.append(f"  torch signature: {rec['torch'].rsplit('.', 1)[-1]}{rec['torch_signature']}")
    if rec.get("advice"):
        lines.append("")
        lines.extend(_wrap("Advice: " + rec["advice"], 2, width))
    for fam in ("classic", "mint"):
        targets = [t for t in rec["targets"] if t["family"] == fam]
        if not targets:
            continue
        lines.append("")
        lines.append(st.bold(f"{fam.upper()}") + st.dim("  (mindspore.nn / mindspore.ops)" if fam == "classic"
                                                       else "  (mindspore.mint, torch-aligned)"))
        for t in targets:
            lines.extend(_render_target(t, st, width, ms_version))
    caveats = rec.get("caveats") or []
    if caveats:
        lines.append("")
        lines.append(st.bold(f"CAVEATS ({len(caveats)})"))
        for c in caveats:
            lines.extend(render_caveat(c, st, width))
    return "\n".join(lines)


def _render_target(t: dict[str, Any], st: Style, width: int, ms_version: str | None) -> list[str]:
    from kb.query import in_range

    rng = t.get("ms_versions") or {}
    applies = "" if ms_version is None or in_range(ms_version, rng.get("since"), rng.get("until")) else \
        st.dim(f"  (not for mindspore {ms_version})")
    auto = "auto-convertible" if t.get("auto") else "manual"
    head = f"  → {st.bold(t['api'] or 'no equivalent')}  [{t['relation']}]  {version_text(rng)}  · {auto}{applies}"
    lines = [head]
    if t.get("ms_signature"):
        lines.append(f"    signature: {(t['api'] or '').rsplit('.', 1)[-1]}{t['ms_signature']}")
    if t.get("note"):
        lines.extend(_wrap(t["note"], 4, width))
    interesting = [p for p in t.get("params", []) if p["kind"] != "same" or p.get("torch_default") != p.get("ms_default")]
    if t.get("params"):
        same = len(t["params"]) - len(interesting)
        if interesting:
            lines.append("    parameters:" + (st.dim(f"  (+{same} identical not shown)") if same else ""))
            lines.extend(_table(param_rows(interesting), 6))
        else:
            lines.append(f"    parameters: all {same} identical (names and defaults)")
    if t.get("example"):
        lines.append("    example:")
        lines.append("      torch:     " + t["example"]["torch"].strip().replace("\n", "\n                 "))
        lines.append("      mindspore: " + t["example"]["mindspore"].strip().replace("\n", "\n                 "))
    for chk in t.get("checks") or []:
        lines.append(st.dim(f"    verified: {chk.get('result')} on mindspore {chk.get('version')} — {chk.get('claim', '')}"))
    if t.get("provenance"):
        lines.extend(st.dim(x) for x in _wrap("source: " + provenance_text(t["provenance"]), 4, width))
    return lines


def render_caveat(c: dict[str, Any], st: Style | None = None, width: int = 100) -> list[str]:
    st = st or Style()
    sev = st(f"[{c['severity']}]", SEV_COLOUR.get(c["severity"], "0"))
    lines = [f"  {sev} {st.bold(c['title'])}  " + st.dim(f"{version_text(c.get('ms_versions'))} · topic: {c['topic']} · id: {c['id']}")]
    lines.extend(_wrap(c["body"], 6, width))
    if c.get("claims"):
        lines.extend(st.dim(x) for x in _wrap("checkable: " + "; ".join(claim_text(cl) for cl in c["claims"]), 6, width))
    lines.extend(st.dim(x) for x in _wrap("source: " + provenance_text(c.get("provenance", [])), 6, width))
    return lines


def claim_text(cl: dict[str, Any]) -> str:
    kind = cl["kind"]
    if kind == "default":
        return f"default of {cl['api']}.{cl['param']} is {cl['value']}"
    if kind in ("has_param", "lacks_param"):
        return f"{cl['api']} {'accepts' if kind == 'has_param' else 'has no'} parameter {cl['param']}"
    return f"{cl['api']} {'exists' if kind == 'exists' else 'does not exist'}"


def render_reverse(rec: dict[str, Any], style: Style | None = None) -> str:
    st = style or Style()
    width = min(shutil.get_terminal_size((100, 20)).columns, 120)
    lines = [st.bold(rec["mindspore"]) + st.dim("  (MindSpore API — reverse lookup)")]
    if rec.get("ms_signature"):
        lines.append(f"  signature: {rec['mindspore'].rsplit('.', 1)[-1]}{rec['ms_signature']}")
    if rec.get("ms_versions_present"):
        lines.append(f"  present in snapshots of mindspore: {', '.join(rec['ms_versions_present'])}")
    lines.append("")
    if rec["torch"]:
        lines.append(st.bold(f"TORCH APIS MAPPING HERE ({len(rec['torch'])})"))
        lines.extend(_table([["torch", "family", "relation"]] + [[r["torch"], r["family"], r["relation"]] for r in rec["torch"]], 2))
    else:
        lines.append("  No torch API in the knowledge base maps to this name.")
    if rec.get("caveats"):
        lines.append("")
        lines.append(st.bold(f"CAVEATS ({len(rec['caveats'])})"))
        for c in rec["caveats"]:
            lines.extend(render_caveat(c, st, width))
    return "\n".join(lines)
