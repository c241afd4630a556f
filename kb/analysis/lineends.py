"""Line endings: a converted file keeps the ones it had.

The engine places its edits, notes and imports by ``\\n`` line ends, while Python (and tree-sitter)
also end a line at a lone ``\\r``.  So a lone CR is read as LF - the same length, so every offset
stays - and the result is written back with the file's own line ends: a file whose lines all end in
CR (old Mac style) gets CR again, one whose lines all end in CRLF gets CRLF on the lines the
conversion added, and a lone CR among other endings becomes the file's usual line end (Python reads
them the same).
"""
from __future__ import annotations

import re

_LONE_CR = re.compile(rb"\r(?!\n)")


def cr_only(data: bytes) -> bool:
    return b"\r" in data and b"\n" not in data


def for_analysis(data: bytes) -> bytes:
    """``data`` with every lone CR read as LF (offsets unchanged)."""
    return _LONE_CR.sub(b"\n", data) if b"\r" in data else data


def as_original(original: bytes, new: bytes) -> bytes:
    """``new`` (converted from ``for_analysis(original)``) with ``original``'s line ends."""
    if cr_only(original):
        return new.replace(b"\r\n", b"\n").replace(b"\n", b"\r")
    crlf = original.count(b"\r\n")
    if not crlf or crlf != original.count(b"\n") or new.count(b"\r\n") == new.count(b"\n"):
        return new
    return new.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
