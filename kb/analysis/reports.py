"""Scan reports: totals, and the table / JSON / CSV / SARIF 2.1.0 renderings.

The share of call sites that convert automatically is the sites convert rewrites over those
plus what it leaves for a human (``left``: a use with no fix, and a guessed tensor method it
marks, "if this is a tensor"), rounded down: never 100% while anything is left.  Imports and
the guesses that need nothing are not counted.
"""
from __future__ import annotations

import csv
import io
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kb.analysis.project import FileReport
from kb.analysis.uses import CATEGORIES, CATEGORY_LABELS

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVELS = {"direct": "note", "caveats": "warning", "manual": "warning", "none": "warning", "guess": "note"}
RULE_NAMES = {"direct": "ConvertsDirectly", "caveats": "ConvertsWithCaveats", "manual": "NeedsManualChange",
              "none": "NoEquivalent", "guess": "PossibleTensorMethod"}
AUTOMATIC = ("direct", "caveats")
SITES = ("direct", "caveats", "manual", "none")


@dataclass
class Summary:
    files: int = 0
    files_with_uses: int = 0
    failed: int = 0
    lines: int = 0
    totals: Counter = field(default_factory=Counter)
    per_api: dict[str, Counter] = field(default_factory=dict)
    performance: dict[str, Any] | None = None  # kb.timings.project_costs: the measured ops that will cost most
    left: int = 0  # uses convert leaves for a human, the guesses it marks included
    guesses_left: int = 0

    @property
    def automatic(self) -> int:
        return sum(self.totals[c] for c in AUTOMATIC)

    @property
    def sites(self) -> int:
        return sum(self.totals[c] for c in SITES)

    @property
    def automatic_share(self) -> float | None:
        whole = self.sites + self.guesses_left
        return self.automatic / whole if whole else None


def summarize(reports: list[FileReport]) -> Summary:
    summary = Summary(files=len(reports))
    for report in reports:
        summary.lines += report.lines
        if report.error:
            summary.failed += 1
        if report.uses:
            summary.files_with_uses += 1
        for use in report.uses:
            summary.totals[use["category"]] += 1
            summary.left += bool(use.get("left"))
            summary.guesses_left += bool(use.get("left") and use["guess"])
            summary.per_api.setdefault(use["torch"], Counter())[use["category"]] += 1
    return summary


def _share(summary: Summary) -> str:
    whole = summary.sites + summary.guesses_left
    return "n/a (no call sites)" if not whole else f"{summary.automatic * 100 // whole}%"  # 100%: nothing left


def render_table(reports: list[FileReport], summary: Summary) -> str:
    short = {"direct": "direct", "caveats": "caveats", "manual": "manual", "none": "none", "guess": "guess"}
    out = []
    head = "  ".join(f"{short[c]:>7}" for c in CATEGORIES)
    if summary.per_api:
        width = max(len(n) for n in summary.per_api)
        out.append(f"{'torch API':<{width}}  {head}")
        for name in sorted(summary.per_api, key=lambda n: (-sum(summary.per_api[n].values()), n)):
            counts = summary.per_api[name]
            out.append(f"{name:<{width}}  " + "  ".join(f"{counts[c]:>7}" for c in CATEGORIES))
        out.append("")
    files = [r for r in reports if r.uses]
    if files:
        width = max(len(r.path) for r in files)
        out.append(f"{'file':<{width}}  {head}  {'left':>7}")
        for report in files:
            counts = Counter(u["category"] for u in report.uses)
            out.append(f"{report.path:<{width}}  " + "  ".join(f"{counts[c]:>7}" for c in CATEGORIES)
                       + f"  {sum(bool(u.get('left')) for u in report.uses):>7}")
        out.append("")
    for report in reports:
        if report.error:
            out.append(f"error: {report.path}: {report.error}")
    if summary.failed:
        out.append("")
    out.append(f"{summary.files} files, {summary.lines} lines, {summary.files_with_uses} with torch uses, "
               f"{summary.failed} unreadable")
    for category in CATEGORIES:
        out.append(f"  {CATEGORY_LABELS[category]:<32} {summary.totals[category]:>6}")
    out.append(f"call sites that convert automatically: {_share(summary)} "
               f"({summary.automatic} of {summary.sites + summary.guesses_left}; imports and guesses that need "
               f"nothing not counted)")
    out.append(f"left for a human: {summary.left} ({summary.guesses_left} of them 'if this is a tensor' guesses)")
    if summary.performance:
        from kb.timings import project_lines

        out.extend(project_lines(summary.performance))
    return "\n".join(out) + "\n"


def render_json(reports: list[FileReport], summary: Summary) -> str:
    data = {
        "summary": {
            "files": summary.files, "lines": summary.lines, "files_with_uses": summary.files_with_uses,
            "failed": summary.failed, "totals": {c: summary.totals[c] for c in CATEGORIES},
            "call_sites": summary.sites, "automatic_share": summary.automatic_share,
            "left_for_a_human": summary.left, "guesses_left": summary.guesses_left,
            "performance": summary.performance,
        },
        "apis": {name: {c: counts[c] for c in CATEGORIES} for name, counts in sorted(summary.per_api.items())},
        "files": [{"path": r.path, "error": r.error, "lines": r.lines, "uses": r.uses} for r in reports],
    }
    return json.dumps(data, indent=2) + "\n"


def render_csv(reports: list[FileReport], summary: Summary) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["file", "line", "column", "torch", "kind", "category", "target", "reason", "error"])
    for report in reports:
        if report.error:
            writer.writerow([report.path, "", "", "", "", "", "", "", report.error])
        for use in report.uses:
            writer.writerow([report.path, use["line"], use["column"], use["torch"], use["kind"], use["category"],
                             use["target"] or "", use["reason"], ""])
    return buffer.getvalue()


def _uri(path: str) -> str:
    """A SARIF ``artifactLocation.uri``: a relative reference below the working folder, else a
    ``file://`` URI; percent-encoded (RFC 3986) from the name's bytes, so spaces, newlines, ``#``,
    ``%`` and undecodable bytes stay part of one valid URI."""
    from urllib.parse import quote_from_bytes

    try:
        absolute = os.path.abspath(path)
        relative = os.path.relpath(absolute)
    except ValueError:  # another drive (Windows)
        relative = ".."
    inside = not relative.startswith("..") and not os.path.isabs(relative)
    name = Path(relative if inside else absolute).as_posix()
    try:
        data = os.fsencode(name)
    except UnicodeEncodeError:  # a lone surrogate no file system byte stands for
        data = name.encode("utf-8", "surrogatepass")
    encoded = quote_from_bytes(data, safe="/")  # ':' too: 'a:b.py' must not read as a scheme
    return encoded if inside else "file://" + ("" if encoded.startswith("/") else "/") + encoded


def render_sarif(reports: list[FileReport], summary: Summary, version: str = "0.1.0") -> str:
    rules = [{
        "id": f"msmap/{c}", "name": RULE_NAMES[c], "shortDescription": {"text": CATEGORY_LABELS[c]},
        "defaultConfiguration": {"level": SARIF_LEVELS[c]},
    } for c in CATEGORIES]
    index = {c: i for i, c in enumerate(CATEGORIES)}
    results, notifications = [], []
    for report in reports:
        if report.error:
            notifications.append({"level": "error", "message": {"text": f"{report.path}: {report.error}"},
                                  "locations": [
                                      {"physicalLocation": {"artifactLocation": {"uri": _uri(report.path)}}}]})
        for use in report.uses:
            text = f"{use['torch']}: {CATEGORY_LABELS[use['category']]}"
            if use["target"]:
                text += f" -> {use['target']}"
            if use["reason"]:
                text += f" ({use['reason']})"
            results.append({
                "ruleId": f"msmap/{use['category']}", "ruleIndex": index[use["category"]],
                "level": SARIF_LEVELS[use["category"]], "message": {"text": text},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": _uri(report.path)},
                    "region": {"startLine": use["line"], "startColumn": use["column"],
                               "endLine": use["end_line"], "endColumn": use["end_column"]},
                }}],
                "properties": {"torch": use["torch"], "kind": use["kind"]},
            })
    run = {
        "tool": {"driver": {"name": "msmap", "version": version,
                            "rules": rules}},
        "columnKind": "utf16CodeUnits",
        "results": results,
        "invocations": [{"executionSuccessful": not summary.failed, "toolExecutionNotifications": notifications}],
    }
    return json.dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2) + "\n"


RENDERERS = {"table": render_table, "json": render_json, "csv": render_csv, "sarif": render_sarif}
