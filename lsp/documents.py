"""Open documents: the editor's latest text, the engine's ``Document``, and the edits between them.

Two threads share this store, each with its own part:

- the event loop keeps the *latest text* of each document (``open``, ``change``, ``close``):
  a change is spliced into plain bytes at once (no parse), and its version and the lines it
  touched are recorded (``LineEdit``);
- the analysis worker (``lsp.publisher``) brings the engine ``Document`` up to a text it was
  given (``synced``): one incremental re-parse for the whole run of changes since its last
  analysis.  Only the worker touches a ``Document``.

The latest text and its version are one tuple, replaced whole, so the worker always reads a
version together with its text.  The edits (lines and the columns where each starts and ends) let a
request about the latest text be answered from an older analysis: a line no edit touched since is
the same line, moved by the edits' line counts (``line_before``/``line_after``), and so is a place
on an edited line before the change or after it, moved by its columns (``position_before``,
``range_after``).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from kb.analysis import Document
from kb.analysis.text import LineIndex, encode

PYTHON_SUFFIXES = (".py", ".pyi")
MAX_LINE_EDITS = 10_000  # per document; older ones are forgotten (every line counts as changed then)
EVERYTHING = 1 << 62  # a line number past any document


@lru_cache(maxsize=2)  # (asked before each analysis and by its document; bytes keep their hash)
def too_large(text: bytes) -> str | None:
    """Why a document is not analysed (None: it is): the bounds ``scan`` and ``convert`` put on a
    source file (``kb.analysis.sourcefile``: its size, and the memory its syntax would take)."""
    from kb.analysis.sourcefile import BYTES_PER_TOKEN, BYTES_PER_USE, MAX_SOURCE_BYTES, analysis_cost, memory_limit

    if len(text) > MAX_SOURCE_BYTES:
        return (f"msmap: this file is too large to analyse ({len(text) / 1e6:.1f} MB; the limit is "
                f"{MAX_SOURCE_BYTES / 1e6:g} MB): no diagnostics, hovers or fixes for it")
    # a byte is at most one token, and 'torch' five bytes: a small file fits without counting
    if len(text) * (BYTES_PER_TOKEN + BYTES_PER_USE // 5) <= memory_limit(len(text)):
        return None
    cost, limit = analysis_cost(text), memory_limit(len(text))
    if cost <= limit:
        return None
    return (f"msmap: this file has too much code to analyse in bounded memory (about {cost / 1e6:,.0f} MB "
            f"for {len(text) / 1e6:.1f} MB; the limit is {limit / 1e6:,.0f} MB): no diagnostics, hovers or "
            "fixes for it; split the file")


def too_large_diagnostic(why: str) -> dict[str, Any]:
    """The one diagnostic a document too large to analyse gets (on its first line)."""
    at = {"line": 0, "character": 0}
    return {"range": {"start": at, "end": at}, "severity": 2, "code": "too_large", "source": "msmap",
            "message": why}


def is_python(language_id: object, uri: object) -> bool:
    """Whether an opened document is one the server analyses."""
    return language_id == "python" or (isinstance(uri, str) and uri.endswith(PYTHON_SUFFIXES))


@dataclass(frozen=True)
class LineEdit:
    """One change by lines: it replaced lines ``first..old_last`` with ``first..new_last`` and
    turned ``version - 1`` (or an older version) into ``version``."""

    version: int
    first: int
    old_last: int
    new_last: int
    # the columns (UTF-16) where it starts on ``first`` and where the text it replaced, and the text it put,
    # end on ``old_last`` and ``new_last`` (EVERYTHING: unknown, as for a whole new text)
    start: int = 0
    old_end: int = EVERYTHING
    new_end: int = EVERYTHING


def line_before(edits: list[LineEdit], since: int, line: int) -> int | None:
    """``line`` of the latest text, in the text of version ``since``; None when an edit made since
    touched it."""
    for edit in reversed(edits):
        if edit.version <= since:
            break
        if line > edit.new_last:
            line -= edit.new_last - edit.old_last
        elif line >= edit.first:
            return None
    return line


def line_after(edits: list[LineEdit], since: int, line: int) -> int | None:
    """``line`` of the text of version ``since``, in the latest text; None when an edit touched it."""
    for edit in edits:
        if edit.version <= since:
            continue
        if line > edit.old_last:
            line += edit.new_last - edit.old_last
        elif line >= edit.first:
            return None
    return line


def position_before(edits: list[LineEdit], since: int, line: int, character: int) -> tuple[int, int] | None:
    """(line, character) of the latest text, in the text of version ``since``; None inside a change made
    since (what is there now the older text did not have)."""
    for edit in reversed(edits):
        if edit.version <= since:
            break
        if (line, character) < (edit.first, edit.start):
            continue
        if (line, character) < (edit.new_last, edit.new_end):
            return None
        if line == edit.new_last:
            line, character = edit.old_last, character - edit.new_end + edit.old_end
        else:
            line -= edit.new_last - edit.old_last
    return line, character


def range_after(edits: list[LineEdit], since: int, span: Any) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """((line, character), (line, character)) of ``span`` (a range of the text of version ``since``) in the
    latest text; None when a change made since touched it or its ends (a name typed on grows another name)."""
    start, end = (span.start.line, span.start.character), (span.end.line, span.end.character)
    for edit in edits:
        if edit.version <= since:
            continue
        if end < (edit.first, edit.start):
            continue
        if start <= (edit.old_last, edit.old_end):
            return None
        start, end = _after(edit, *start), _after(edit, *end)
    return start, end


def _after(edit: LineEdit, line: int, character: int) -> tuple[int, int]:
    """A place after ``edit`` in the text before it, in the text after it."""
    if line == edit.old_last:
        return edit.new_last, character - edit.old_end + edit.new_end
    return line + edit.new_last - edit.old_last, character


class DocumentStore:
    def __init__(self) -> None:
        self._latest: dict[str, tuple[int, bytes]] = {}  # uri -> (version, text): the event loop's
        self._lines: dict[str, LineIndex] = {}  # uri -> the line index of its latest text
        self._edits: dict[str, list[LineEdit]] = {}  # uri -> the changes by lines, oldest first
        self._docs: dict[str, Document] = {}  # uri -> the engine's document: the analysis worker's

    def __contains__(self, uri: str) -> bool:
        return uri in self._latest

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._latest))

    # -- the event loop's side ------------------------------------------------------------
    def version(self, uri: str) -> int | None:
        entry = self._latest.get(uri)
        return None if entry is None else entry[0]

    def latest(self, uri: str) -> tuple[int, bytes] | None:
        """(version, text) of the editor's latest text."""
        return self._latest.get(uri)

    def edits(self, uri: str) -> list[LineEdit]:
        return self._edits.get(uri, [])

    def open(self, uri: str, text: str, version: int) -> None:
        self._latest[uri] = (version, encode(text))
        self._lines.pop(uri, None)
        self._edits[uri] = [LineEdit(version, 0, EVERYTHING, EVERYTHING)]  # (re)opened: nothing is known

    def change(self, uri: str, version: int, changes: Iterable[Any]) -> bool:
        """Take the editor's changes; False if the document is not open."""
        entry = self._latest.get(uri)
        if entry is None:
            return False
        edits = self._edits.setdefault(uri, [])
        lines = self._lines.get(uri)
        if lines is None or lines.source is not entry[1]:
            lines = LineIndex(entry[1])
        for change in changes:
            span = getattr(change, "range", None)
            new = encode(getattr(change, "text", ""))
            if span is None:
                lines = LineIndex(new)
                edits.append(LineEdit(version, 0, EVERYTHING, EVERYTHING))
                continue
            start = lines.offset(span.start.line, span.start.character)
            end = max(start, lines.offset(span.end.line, span.end.character))
            (first, column), (last, old_end) = lines.position(start)[:2], lines.position(end)[:2]
            lines = lines.spliced(start, end, new)  # (no scan of the whole text per keystroke)
            new_last, new_end = lines.position(start + len(new))[:2]
            edits.append(LineEdit(version, first, last, new_last, column, old_end, new_end))
        text = lines.source
        self._lines[uri] = lines
        if len(edits) > MAX_LINE_EDITS:
            del edits[: len(edits) - MAX_LINE_EDITS]
            edits[0] = LineEdit(edits[0].version, 0, EVERYTHING, EVERYTHING)
        self._latest[uri] = (version, text)
        return True

    def forget_edits(self, uri: str, version: int) -> None:
        """Drop the line edits up to ``version`` (no older analysis is asked about any more)."""
        edits = self._edits.get(uri)
        if edits and edits[0].version <= version:
            self._edits[uri] = [e for e in edits if e.version > version]

    def close(self, uri: str) -> None:
        self._latest.pop(uri, None)
        self._lines.pop(uri, None)
        self._edits.pop(uri, None)
        self._docs.pop(uri, None)

    # -- the analysis worker's side -------------------------------------------------------
    def synced(self, uri: str, version: int, text: bytes) -> Document | None:
        """The engine document of ``uri`` at ``text`` (re-parsed incrementally from its last text);
        None when the document is closed or too large to analyse (``too_large``)."""
        if too_large(text):
            self._docs.pop(uri, None)  # (an earlier, smaller version's tree is not kept either)
            return None
        doc = self._docs.get(uri)
        if doc is None:
            doc = Document(text, uri=uri, version=version)
            if uri not in self._latest:
                return None
            self._docs[uri] = doc
        elif doc.source is not text:
            doc.update(text, version)
        doc.version = version
        return doc
