"""Positions, ranges and text edits.

Offsets are UTF-8 byte offsets into the document's bytes (tree-sitter's unit);
``Position.character`` counts UTF-16 code units, as the Language Server Protocol
does.  ``LineIndex`` converts between the two.  Edits are applied back to front,
so the offsets of the edits still to apply stay valid.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from itertools import pairwise
from typing import Any, NamedTuple

_NEWLINE = re.compile(rb"\n")


def utf16_len(data: bytes) -> int:
    """Number of UTF-16 code units in UTF-8 ``data`` (invalid bytes count as one each)."""
    if data.isascii():
        return len(data)
    return len(decode(data).encode("utf-16-le", "surrogatepass")) // 2


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def decode(data: bytes) -> str:
    """Inverse of ``encode``; bytes that are not UTF-8 at all become U+FFFD."""
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace")


# Named tuples, not dataclasses: a large file has thousands of them and they are
# built on every analysis (a frozen dataclass is several times slower to create).
class Position(NamedTuple):
    line: int  # 0-based
    character: int  # UTF-16 code units from the start of the line
    offset: int  # UTF-8 bytes from the start of the document

    def as_lsp(self) -> dict[str, int]:
        return {"line": self.line, "character": self.character}


class Range(NamedTuple):
    start: Position
    end: Position

    def as_lsp(self) -> dict[str, dict[str, int]]:
        return {"start": self.start.as_lsp(), "end": self.end.as_lsp()}


class TextEdit(NamedTuple):
    """Replace bytes ``[start, end)`` with ``new_text`` (an insertion when start == end)."""

    start: int
    end: int
    new_text: str
    range: Range | None = None  # filled by ``LineIndex.edit`` for the editor

    def overlaps(self, other: TextEdit) -> bool:
        """True when the two edits cannot both apply unambiguously."""
        if self.start == self.end and other.start == other.end:
            return self.start == other.start
        return self.start < other.end and other.start < self.end


class LineIndex:
    """Line starts of one document version: byte offset <-> (line, UTF-16 column)."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.starts = [0] + [m.end() for m in _NEWLINE.finditer(source)]

    def position(self, offset: int) -> Position:
        offset = max(0, min(offset, len(self.source)))
        line = bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        return Position(line, utf16_len(self.source[start:offset]), offset)

    def range(self, start: int, end: int) -> Range:
        return Range(self.position(start), self.position(end))

    def offset(self, line: int, character: int) -> int:
        """Byte offset of an LSP position; clamps past-the-end lines and columns."""
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.source)
        start = self.starts[line]
        end = self.starts[line + 1] - 1 if line + 1 < len(self.starts) else len(self.source)
        raw = self.source[start:end]
        if raw.isascii():
            return start + max(0, min(character, len(raw)))
        text, units = decode(raw), 0
        for index, char in enumerate(text):
            if units >= character:
                return start + len(encode(text[:index]))
            units += 2 if ord(char) > 0xFFFF else 1
        return end

    def spliced(self, start: int, end: int, new: bytes) -> LineIndex:
        """The index of this text with bytes ``start..end`` replaced by ``new``, without scanning the
        whole new text again (an editor's change to a long file)."""
        first, last = bisect_right(self.starts, start), bisect_right(self.starts, end)
        delta = len(new) - (end - start)
        found = LineIndex.__new__(LineIndex)
        found.source = self.source[:start] + new + self.source[end:]
        found.starts = (self.starts[:first] + [start + m.end() for m in _NEWLINE.finditer(new)]
                        + [s + delta for s in self.starts[last:]])
        return found

    def edit(self, edit: TextEdit) -> TextEdit:
        """The same edit with its LSP range filled in."""
        return TextEdit(edit.start, edit.end, edit.new_text, self.range(edit.start, edit.end))


def apply_edits(source: bytes, edits: Iterable[TextEdit]) -> bytes:
    """Apply non-overlapping edits; raise ValueError on an overlap.

    Offsets always refer to ``source``: the result is the same as applying the
    edits back to front, built in one pass.  An insertion at the start of a
    replaced span lands before the replacement, one at its end after it.
    """
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    for earlier, later in pairwise(ordered):
        if later.overlaps(earlier):
            raise ValueError(f"overlapping edits at bytes {earlier.start}-{earlier.end}")
    pieces, cursor = [], 0
    for edit in ordered:
        pieces.append(source[cursor : edit.start])
        pieces.append(encode(edit.new_text))
        cursor = max(cursor, edit.end)
    pieces.append(source[cursor:])
    return b"".join(pieces)


def shift_offset(offset: int, edits: Iterable[TextEdit]) -> int:
    """Where ``offset`` lands after ``edits`` (edits at or after it do not move it)."""
    delta = 0
    for edit in edits:
        if edit.end <= offset and not (edit.start == edit.end == offset):
            delta += len(encode(edit.new_text)) - (edit.end - edit.start)
    return offset + delta


def byte_range(source: bytes, start: int, end: int, start_point: Any = None, end_point: Any = None) -> Range:
    """The ``Range`` of bytes ``start..end`` of ``source`` (tree-sitter points, when given, save the counting)."""
    return Range(_position(source, start, start_point), _position(source, end, end_point))


def _position(source: bytes, offset: int, point: Any = None) -> Position:
    if point is not None:
        line, column = point[0], point[1]
    else:
        line = source.count(b"\n", 0, offset)
        column = offset - (source.rfind(b"\n", 0, offset) + 1)
    return Position(line, utf16_len(source[offset - column : offset]), offset)
