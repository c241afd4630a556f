"""Terminal rendering of query records (plain text; ANSI colour only on a TTY)."""
from __future__ import annotations

import os
import shutil
import sys
import textwrap
from typing import Any

from kb import views
from kb.phrases import claim_text, range_text
from kb.versions import in_span, version_key

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
    return range_text(rng, prefix, ">=", f"{prefix}: all versions")


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
        lines.append(" " * indent + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
        if n == 0:
            lines.append(" " * indent + "  ".join("-" * w for w in widths))
    return lines


def param_table(rows: list[views.ParamRow]) -> list[list[str]]:
    table = [list(views.PARAM_COLUMNS)]
    for r in rows:
        change = r.kind + (f": {r.assignment}" if r.assignment else "") + (f" — {r.note}" if r.note else "")
        table.append([r.torch or "—", r.ms or "—", r.torch_default or "", r.ms_default or "", change])
    return table


def render_mapping(rec: dict[str, Any], style: Style | None = None, ms_version: str | None = None,
                   device: str | None = None) -> str:
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
    perf = timing_lines(rec.get("timings") or [], st, ms_version, device)
    if perf:
        lines += ["", st.bold("PERFORMANCE") + st.dim("  (msmap probe --timing; ratios to torch from the same run)")]
        lines += perf
    caveats = rec.get("caveats") or []
    if caveats:
        lines.append("")
        lines.append(st.bold(f"CAVEATS ({len(caveats)})"))
        for c in caveats:
            lines.extend(render_caveat(c, st, width))
    return "\n".join(lines)


def _render_target(t: dict[str, Any], st: Style, width: int, ms_version: str | None) -> list[str]:
    rng = t.get("ms_versions") or {}
    applies = "" if ms_version is None or in_span(ms_version, rng) else \
        st.dim(f"  (not for mindspore {ms_version})")
    auto = "auto-convertible" if t.get("auto") else "manual"
    head = f"  → {st.bold(t['api'] or 'no equivalent')}  [{t['relation']}]  {version_text(rng)}  · {auto}{applies}"
    lines = [head]
    if t.get("ms_signature"):
        lines.append(f"    signature: {(t['api'] or '').rsplit('.', 1)[-1]}{t['ms_signature']}")
    if t.get("note"):
        lines.extend(_wrap(t["note"], 4, width))
    differing = views.param_rows(t.get("params"), differing_only=True)
    if t.get("params"):
        same = len(t["params"]) - len(differing)
        if differing:
            lines.append("    parameters:" + (st.dim(f"  (+{same} identical not shown)") if same else ""))
            lines.extend(_table(param_table(differing), 6))
        else:
            lines.append(f"    parameters: all {same} identical (names and defaults)")
    if t.get("example"):
        lines.append("    example:")
        lines.append("      torch:     " + t["example"]["torch"].strip().replace("\n", "\n                 "))
        lines.append("      mindspore: " + t["example"]["mindspore"].strip().replace("\n", "\n                 "))
    lines.extend(verification_lines(t.get("checks") or [], st, ms_version, rng))
    lines.extend(probe_lines(t.get("probes") or [], st, ms_version, rng))
    if t.get("provenance"):
        lines.extend(st.dim(x) for x in _wrap("source: " + provenance_text(t["provenance"]), 4, width))
    return lines


def render_caveat(c: dict[str, Any], st: Style | None = None, width: int = 100) -> list[str]:
    st = st or Style()
    sev = st(f"[{c['severity']}]", SEV_COLOUR.get(c["severity"], "0"))
    lines = [f"  {sev} {st.bold(c['title'])}  "
             + st.dim(f"{version_text(c.get('ms_versions'))} · topic: {c['topic']} · id: {c['id']}")]
    lines.extend(_wrap(c["body"], 6, width))
    if c.get("claims"):
        checkable = "checkable: " + "; ".join(claim_text(cl) for cl in c["claims"])
        lines.extend(st.dim(x) for x in _wrap(checkable, 6, width))
    lines.extend(st.dim(x) for x in _wrap("source: " + provenance_text(c.get("provenance", [])), 6, width))
    return lines


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
        lines.extend(_table([["torch", "family", "relation"]]
                            + [[r["torch"], r["family"], r["relation"]] for r in rec["torch"]], 2))
    else:
        lines.append("  No torch API in the knowledge base maps to this name.")
    if rec.get("caveats"):
        lines.append("")
        lines.append(st.bold(f"CAVEATS ({len(rec['caveats'])})"))
        for c in rec["caveats"]:
            lines.extend(render_caveat(c, st, width))
    return "\n".join(lines)


# --- recorded verification (msmap check / msmap probe) ------------------------------------------

def _pick_version(rows: list[dict[str, Any]], ms_version: str | None, rng: dict | None = None) -> str | None:
    """The MindSpore version to summarise: the one asked for if recorded, else the newest recorded
    inside the target's version range (None: nothing recorded applies to this target)."""
    versions = sorted({r["ms_version"] for r in rows if r.get("ms_version") and in_span(r["ms_version"], rng)},
                      key=version_key)
    if not versions:
        return None
    return ms_version if ms_version in versions else versions[-1]


def verification_lines(checks: list[dict[str, Any]], st: Style, ms_version: str | None = None,
                       rng: dict | None = None) -> list[str]:
    """One line, "verified on mindspore 2.10.0: 7/7 claims pass", plus one line per drifted claim."""
    version = _pick_version(checks, ms_version, rng)
    if version is None:
        return []
    rows = [c for c in checks if c.get("ms_version") == version]
    judged = [c for c in rows if c.get("result") in ("pass", "drift")]
    passed = sum(c["result"] == "pass" for c in judged)
    unchecked = len(rows) - len(judged)
    text = f"    verified on mindspore {version}: {passed}/{len(judged)} claims pass"
    text += f" ({unchecked} not checkable)" if unchecked else ""
    text += f" · checked {rows[0].get('checked_on')}" if rows and rows[0].get("checked_on") else ""
    lines = [st.dim(text) if passed == len(judged) else st(text, "33")]
    for c in judged:
        if c["result"] == "drift":
            lines.append(st("      drift: ", "31") + f"{c.get('claim')} — installed: {c.get('detail')}")
    return lines


def probe_lines(probes: list[dict[str, Any]], st: Style, ms_version: str | None = None,
                rng: dict | None = None) -> list[str]:
    """A compact probe line per device, plus what users must know (no CPU kernel, differences)."""
    version = _pick_version(probes, ms_version, rng)
    if version is None:
        return []
    rows = [p for p in probes if p.get("ms_version") == version]
    lines = []
    for device in sorted({p.get("device") or "cpu" for p in rows}):
        sub = [p for p in rows if (p.get("device") or "cpu") == device]
        counts: dict[str, int] = {}
        for p in sub:
            counts[p["result"]] = counts.get(p["result"], 0) + 1
        summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        lines.append(st.dim(f"    probed on mindspore {version} ({device}): {summary}"))
        kernels = dict.fromkeys((p.get("detail") or "").removeprefix("mindspore: ") for p in sub
                                if p["result"] == "no_cpu_kernel")
        for detail in kernels:
            lines.append(st("      no CPU kernel: ", "33") + detail)
        for p in sub:
            if p["result"] == "no_cpu_kernel":
                continue
            elif p.get("kind") == "caveat" and p["result"] in ("holds", "differs"):
                what = "caveat confirmed" if p["result"] == "holds" else "caveat not reproduced"
                lines.append(st.dim(f"      {what}: {p.get('probe')}: {p.get('detail')}"))
            elif p["result"] == "differs":
                lines.append(st("      differs: ", "33") + f"{p.get('detail')} ({p.get('probe')})")
    return lines


def timing_lines(rows: list[dict[str, Any]], st: Style, ms_version: str | None = None,
                 device: str | None = None) -> list[str]:
    """One line per family: the op's cost on the device and MindSpore version asked for (default: the
    CPU and the newest version measured); a cliff in colour; then where the numbers come from."""
    from kb import timings

    if not rows:
        return []
    measured = timings.versions(rows, "CPU") or sorted({r["ms_version"] for r in rows})
    version = ms_version or measured[-1]
    lines = []
    for fam in ("classic", "mint"):
        v = timings.verdict(rows, fam, version, device or "CPU")
        if v:
            lines.append(st("  " + v["line"], "33") if v["cliff"] else st.dim("  " + v["line"]))
    first = rows[0]
    lines.append(st.dim(f"  measured: mindspore {', '.join(measured)} against torch {first.get('torch_version')} "
                        f"on {first.get('machine')}, {first.get('date')}"))
    return lines
