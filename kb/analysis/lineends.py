"""Line endings: a converted file keeps the ones it had.

The engine reads ``\\n`` line ends (tree-sitter and Python also take a lone ``\\r`` as one, but
the text edits, notes and imports are placed by ``\\n``).  A file whose lines all end in CR (old
Mac style) is analysed with LF and written back with CR; a file whose lines all end in CRLF gets
CRLF on the lines the conversion added.  A file mixing them is left mixed.
"""
from __future__ import annotations


def cr_only(data: bytes) -> bool:
    return b"\r" in data and b"\n" not in data


def for_analysis(data: bytes) -> bytes:
    """``data`` with the line ends the engine places edits by (Python reads a lone CR as LF)."""
    return data.replace(b"\r", b"\n") if cr_only(data) else data


def as_original(original: bytes, new: bytes) -> bytes:
    """``new`` (converted from ``for_analysis(original)``) with ``original``'s line ends."""
    if cr_only(original):
        return new.replace(b"\r\n", b"\n").replace(b"\n", b"\r")
    crlf = original.count(b"\r\n")
    if not crlf or crlf != original.count(b"\n") or new.count(b"\r\n") == new.count(b"\n"):
        return new
    return new.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
