"""Reading a Python source file: the one reader ``scan``, ``convert`` and the sibling modules they
follow (``from .helper import *``) go through, with its bounds.

- Only regular files are read (``kb.reading``: a FIFO would block forever, a device never end).
- None larger than the size limit (``--max-file-size``, 10 MB by default; ``set_limit`` sets it
  for a worker process, so the modules a file follows get the same bound as the inputs).
- None with more syntax than can be analysed in bounded memory.  Analysis holds syntax trees
  and rewrite plans whose size follows the code's tokens, not its bytes: measured, about 1 KB per
  token and 4 KB per torch use (a 1 MB file of ``torch.abs(x)`` lines peaked at 670 MB; a 1.1 MB
  file of 20,000 string lines at 30 MB).  ``analysis_cost`` estimates that from the bytes (a string
  or a comment, however long, counts as two tokens) in 0.1 s per MB, and a file whose estimate is over
  ``memory_limit(size)`` - 10 times its size, at least 256 MB - is refused with that figure.
  Every file of the installed torch package fits (the largest estimate, 0.24 GB for
  common_methods_invocations.py, measured 0.19 GB).
- UTF-8 only, no NUL bytes; a BOM is removed (``convert`` puts it back).
"""
from __future__ import annotations

import re
from pathlib import Path

from kb.reading import read_file

BOM = b"\xef\xbb\xbf"
MAX_SOURCE_BYTES = 10_000_000  # larger source files are skipped and reported (--max-file-size)
_LIMIT = MAX_SOURCE_BYTES

MEMORY_FLOOR = 256_000_000  # any file may use this much, whatever its size
MEMORY_PER_BYTE = 10  # ... or 10 times its size, when that is more
BYTES_PER_TOKEN = 1_000  # measured peak (RSS) of convert per syntax token ...
BYTES_PER_USE = 4_000  # ... and per torch use on top of its tokens

_STRINGS = re.compile(rb'''"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*(?:"""|\Z)'''
                      rb"""|'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*(?:'''|\Z)"""
                      rb'''|"[^"\\\n]*(?:\\.[^"\\\n]*)*"?'''
                      rb"""|'[^'\\\n]*(?:\\.[^'\\\n]*)*'?"""
                      rb"|#[^\n]*", re.S)  # a string or a comment
_WORD = frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_") | frozenset(range(128, 256))
_SHAPE = bytes(0x61 if byte in _WORD else 0x20 for byte in range(256))  # word byte -> 'a', other -> ' '
_PUNCTUATION = b"()[]{}.,:;=+-*/%<>!&|^~@"


def set_limit(max_bytes: int) -> None:
    """The size limit of every later ``read_source`` in this process (``--max-file-size``)."""
    global _LIMIT
    _LIMIT = max_bytes


def analysis_cost(data: bytes) -> int:
    """An upper estimate of the memory (bytes) analysing and converting ``data`` takes."""
    code = _STRINGS.sub(b" _ _ ", data)  # (a string is a few nodes, whatever its length)
    shape = code.translate(_SHAPE)
    words = shape.count(b" a") + shape.startswith(b"a")
    tokens = words + len(code) - len(code.translate(None, _PUNCTUATION))
    return tokens * BYTES_PER_TOKEN + code.count(b"torch") * BYTES_PER_USE


def memory_limit(size: int) -> int:
    return max(MEMORY_FLOOR, MEMORY_PER_BYTE * size)


def too_costly(data: bytes) -> str | None:
    """Why analysing ``data`` would take more memory than its bound, or None (also for text that
    comes from elsewhere than a file: an editor's buffer)."""
    cost, limit = analysis_cost(data), memory_limit(len(data))
    if cost <= limit:
        return None
    return (f"skipped: too much code to analyse in bounded memory (about {cost / 1e6:,.0f} MB for "
            f"{len(data) / 1e6:.1f} MB of source; the limit is {limit / 1e6:,.0f} MB: 10 times the file's "
            f"size, at least {MEMORY_FLOOR / 1e6:.0f} MB); split the file")


def read_source(path: str | Path, max_bytes: int | None = None) -> tuple[bytes | None, str | None]:
    """(UTF-8 bytes without BOM, None) or (None, why the file cannot be used)."""
    data, why = read_file(path, _LIMIT if max_bytes is None else max_bytes)
    if data is None:
        return None, why
    if b"\x00" in data:
        return None, "binary file (contains NUL bytes)"
    if data.startswith(BOM):
        data = data[len(BOM):]
    try:
        if not data.isascii():  # ASCII (most files) is UTF-8 already: no need to decode it all
            data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})"
    costly = too_costly(data)
    return (None, costly) if costly else (data, None)
