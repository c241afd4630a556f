"""Where generated pages live, how they link to each other, and Markdown escaping.

Anchors follow the forge convention (GitHub's slugger): lower-case the heading's
text, drop punctuation other than ``-`` and ``_``, turn each space into ``-``, and
number repeated headings ``-1``, ``-2`` ... in page order.  The same function is
used to make links and (in the tests) to check them, so both agree by construction.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from kb.phrases import range_text

INDEX = "index.md"
CAVEATS = "caveats.md"
HTML = "mapping.html"
PERFORMANCE = "performance.md"
API_DIR = "api"
TABLES_DIR = "tables"

_INLINE_MARKUP = re.compile(r"[`*]|\[([^\]]*)\]\([^)]*\)")


def heading_text(md: str) -> str:
    """The text a forge renders for a Markdown heading (code ticks, emphasis, link targets gone)."""
    return _INLINE_MARKUP.sub(lambda m: m.group(1) or "", md).strip()


def slug(heading: str) -> str:
    out = []
    for ch in heading_text(heading).lower():
        if ch == " ":
            out.append("-")
        elif ch in "-_" or ch.isalnum() or unicodedata.category(ch).startswith("M"):
            out.append(ch)
    return "".join(out)


class Anchors:
    """Anchors of one page's headings, numbered like a forge numbers duplicates."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def add(self, heading: str) -> str:
        base = slug(heading)
        n = self.seen.get(base)
        if n is None:
            self.seen[base] = 0
            return base
        while True:
            n += 1
            cand = f"{base}-{n}"
            if cand not in self.seen:
                self.seen[base] = n
                self.seen[cand] = 0
                return cand


def headings(markdown: str) -> Iterable[str]:
    """The text of each ATX heading, in order (fenced code skipped)."""
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        m = None if fenced else re.match(r"^ {0,3}#{1,6} +(.*?)\s*#*\s*$", line)
        if m:
            yield m.group(1)


def page_anchors(markdown: str) -> set[str]:
    """Every anchor a Markdown page defines through its headings."""
    anchors = Anchors()
    return {anchors.add(h) for h in headings(markdown)}


def api_filenames(names: Iterable[str]) -> dict[str, str]:
    """Detail-page file name per torch name: ``<name>.md``, unless names differ only by case
    (``torch.Tensor.T`` / ``torch.Tensor.t``), which would clash on case-insensitive file systems;
    then the one with the fewest capitals keeps ``<name>.md`` and the others get a stable hash suffix."""
    names = sorted(names)
    folded: dict[str, list[str]] = {}
    for n in names:
        folded.setdefault(n.casefold(), []).append(n)
    out = {}
    for group in folded.values():
        keep = min(group, key=lambda n: (sum(c.isupper() for c in n), n))
        for n in group:
            out[n] = f"{n}.md" if n == keep else f"{n}~{hashlib.sha1(n.encode()).hexdigest()[:6]}.md"
    return dict(sorted(out.items()))


def api_path(filename: str) -> str:
    return f"{API_DIR}/{filename}"


def table_path(namespace: str) -> str:
    return f"{TABLES_DIR}/{namespace}.md"


def rel(from_page: str, to_page: str, anchor: str | None = None) -> str:
    """Relative link from one generated page to another (paths relative to the docs root)."""
    if to_page == from_page:
        target = ""
    else:  # pure string work: generated paths are clean, relative and '/'-separated
        src, dst = from_page.split("/")[:-1], to_page.split("/")
        common = 0
        while common < min(len(src), len(dst) - 1) and src[common] == dst[common]:
            common += 1
        target = "/".join([".."] * (len(src) - common) + dst[common:])
    return target + (f"#{anchor}" if anchor else "")


_TAG_START = re.compile(r"(?<!\\)<(?=[A-Za-z/!?])(?!(?:https?|mailto):)")
_CODE_SPAN = re.compile(r"(`+)(?:.+?)\1")


def prose(md: str | None) -> str:
    """Markdown from the data with tag-like ``<`` escaped outside code, so a forge shows
    ``<backend>`` instead of swallowing it as HTML.  Autolinks and code are left alone."""
    if not md or "<" not in md:
        return md or ""
    out, fenced = [], False
    for line in md.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced:
            parts, last = [], 0
            for m in _CODE_SPAN.finditer(line):
                parts += [_TAG_START.sub(r"\\<", line[last:m.start()]), m.group(0)]
                last = m.end()
            line = "".join(parts) + _TAG_START.sub(r"\\<", line[last:])
        out.append(line)
    return "\n".join(out)


def link_text(text: str) -> str:
    """Prose usable between ``[`` and ``]``."""
    return re.sub(r"(?<!\\)([\[\]])", r"\\\1", prose(" ".join(text.split())))


def cell(text: str | None) -> str:
    """Text safe inside a Markdown table cell: one line, pipes and tag-like ``<`` escaped."""
    if not text:
        return ""
    return prose(" ".join(text.split())).replace("|", "\\|")


def code(text: str) -> str:
    """Inline code, with enough backticks to hold backticks in the text."""
    if "`" not in text:
        return f"`{text}`"
    ticks = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fence(text: str, lang: str = "python") -> str:
    ticks = "`" * max(3, max((len(m) + 1 for m in re.findall(r"`{3,}", text)), default=3))
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def versions(rng: dict[str, Any] | None, framework: str = "MindSpore") -> str:
    return range_text(rng, framework, "≥", f"all {framework} versions")


def bounded(rng: dict[str, Any] | None) -> bool:
    return bool(rng and (rng.get("since") or rng.get("until")))


def short_text(md: str | None, limit: int = 140) -> str:
    """First sentence of a Markdown paragraph, cut at a word boundary, code spans kept whole."""
    if not md:
        return ""
    text = " ".join(md.strip().split("\n\n")[0].split())
    m = re.search(r"(?<=[.!?])\s+(?=[A-Z`])", text)
    if m:
        text = text[: m.start()]
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " …"
    if text.count("`") % 2:
        text = text[: text.rfind("`")].rstrip() + " …"
    return text
