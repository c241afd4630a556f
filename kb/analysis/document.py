"""One source document, its tree-sitter tree, and incremental re-parsing.

``Document.update(new_text)`` finds the changed middle of the text (common
prefix and suffix, found with C-speed slice comparisons), tells the old tree
about the edit and re-parses with it, so tree-sitter only re-reads what changed.
``Document.apply_change`` does the same for an LSP range edit.  A syntax error
never stops parsing: the tree holds ERROR nodes and the rest stays usable.
"""
from __future__ import annotations

import threading

import tree_sitter
import tree_sitter_python

from kb.analysis.text import LineIndex, Position, decode, encode

LANGUAGE = tree_sitter.Language(tree_sitter_python.language())
_PARSERS = threading.local()


def parser() -> tree_sitter.Parser:
    """One parser per thread (a tree-sitter parser is not thread-safe)."""
    found = getattr(_PARSERS, "parser", None)
    if found is None:
        found = _PARSERS.parser = tree_sitter.Parser(LANGUAGE)
    return found


def _as_bytes(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else encode(text)


def common_prefix(a: bytes | memoryview, b: bytes | memoryview) -> int:
    a, b = memoryview(a), memoryview(b)  # slices without copies
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # invariant: a[:lo] == b[:lo]
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def common_suffix(a: bytes | memoryview, b: bytes | memoryview, limit: int) -> int:
    a, b = memoryview(a), memoryview(b)
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid : len(a) - lo] == b[len(b) - mid : len(b) - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _point(source: bytes, offset: int) -> tuple[int, int]:
    line = source.count(b"\n", 0, offset)
    return line, offset - (source.rfind(b"\n", 0, offset) + 1)


class Document:
    """Source text (kept as UTF-8 bytes) plus its parse tree."""

    def __init__(self, text: str | bytes = b"", uri: str | None = None, version: int = 0,
                 imported_classes: dict | None = None):
        self.uri = uri
        # Torch classes the file imports from sibling files, by bound name (siblingclasses.py).
        self.imported_classes: dict = imported_classes or {}
        self.version = version
        self.source = _as_bytes(text)
        self.tree = parser().parse(self.source)
        self.revision = 0  # bumped on every change; analysis caches key on it
        self._lines: LineIndex | None = None
        self._text: str | None = None if isinstance(text, bytes) else text
        self.cache: dict = {}  # engines keep their last analysis here (see Engine.analyze)
        # Ranges touched since each revision, in current offsets: (revision, start, end).
        self._dirty: list[tuple[int, int, int]] = []
        self._dirty_floor = 0

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = decode(self.source)
        return self._text

    @property
    def lines(self) -> LineIndex:
        if self._lines is None:
            self._lines = LineIndex(self.source)
        return self._lines

    def position(self, offset: int) -> Position:
        return self.lines.position(offset)

    def offset(self, line: int, character: int) -> int:
        return self.lines.offset(line, character)

    def update(self, new_text: str | bytes, version: int | None = None) -> None:
        """Replace the whole text; the tree is re-parsed incrementally."""
        new = _as_bytes(new_text)
        old = self.source
        start = common_prefix(old, new)
        tail = common_suffix(old, new, min(len(old), len(new)) - start)
        self._edit(start, len(old) - tail, new[start : len(new) - tail], new, version)
        self._text = None if isinstance(new_text, bytes) else new_text

    def apply_change(
        self, start: tuple[int, int], end: tuple[int, int], text: str, version: int | None = None
    ) -> None:
        """Apply an LSP content change: replace (line, UTF-16 character) ``start``..``end``."""
        begin, finish = self.offset(*start), self.offset(*end)
        finish = max(begin, finish)
        inserted = encode(text)
        new = self.source[:begin] + inserted + self.source[finish:]
        self._edit(begin, finish, inserted, new, version)

    def _edit(self, start: int, old_end: int, inserted: bytes, new: bytes, version: int | None) -> None:
        if version is not None:
            self.version = version
        if new == self.source:
            return
        old = self.source
        new_end = start + len(inserted)
        self.tree.edit(
            start_byte=start, old_end_byte=old_end, new_end_byte=new_end,
            start_point=_point(old, start), old_end_point=_point(old, old_end),
            new_end_point=_point(new, new_end),
        )
        old_tree = self.tree
        self.source = new
        self.tree = parser().parse(new, old_tree)
        self.revision += 1
        self._lines = None
        self._text = None
        self._note_dirty(start, old_end, new_end, old_tree)

    def _note_dirty(self, start: int, old_end: int, new_end: int, old_tree: tree_sitter.Tree) -> None:
        delta = new_end - old_end
        moved = []
        for revision, a, b in self._dirty:
            if a >= old_end:
                a, b = a + delta, b + delta
            elif b > start:
                a, b = min(a, start), max(new_end, b + delta if b >= old_end else new_end)
            moved.append((revision, a, b))
        moved.append((self.revision, start, new_end))
        try:
            moved.extend((self.revision, r.start_byte, r.end_byte) for r in old_tree.changed_ranges(self.tree))
        except Exception:
            moved.append((self.revision, 0, len(self.source)))
        if len(moved) > 256:
            self._dirty_floor = moved[-256][0] - 1
            moved = moved[-256:]
        self._dirty = moved

    def dirty_since(self, revision: int) -> list[tuple[int, int]] | None:
        """Byte ranges (current offsets) changed since ``revision``; None when no longer known."""
        if revision < self._dirty_floor:
            return None
        return [(a, b) for r, a, b in self._dirty if r > revision]
