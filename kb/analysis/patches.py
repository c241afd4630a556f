"""The unified diff ``msmap convert`` prints: a patch ``git apply`` (and ``patch -p1``) accepts.

- Lines are split at ``\\n`` only, as git does (``str.splitlines`` would also split at ``\\r``,
  form feeds and U+2028, none of which end a line in a patch).
- A last line without a newline is followed by ``\\ No newline at end of file``.
- A file name holding a control character, a quote, a backslash or a non-ASCII byte is quoted as
  git quotes it (``"a/new\\nline.py"``, octal escapes for other bytes), so a newline in a name
  cannot break the headers.
"""
from __future__ import annotations

import difflib
import os
from pathlib import Path

_ESCAPES = {0x07: "\\a", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0B: "\\v", 0x0C: "\\f", 0x0D: "\\r",
            0x22: '\\"', 0x5C: "\\\\"}
NO_NEWLINE = "\\ No newline at end of file\n"


def quote_name(name: str) -> str:
    """``name`` as git writes it in a patch header: as it is, or C-quoted when it must be."""
    try:
        data = os.fsencode(name)
    except UnicodeEncodeError:  # a lone surrogate that no file system byte stands for
        data = name.encode("utf-8", "surrogatepass")
    if all(0x20 <= byte < 0x7F and byte not in (0x22, 0x5C) for byte in data):
        return data.decode("ascii")
    return '"' + "".join(_ESCAPES.get(byte) or (chr(byte) if 0x20 <= byte < 0x7F else f"\\{byte:03o}")
                         for byte in data) + '"'


def _split_lf(data: bytes) -> list[str]:
    parts = data.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    return [line.decode("utf-8", "surrogateescape") for line in lines]


def unified_diff(path: Path, old: bytes, new: bytes) -> str:
    """The patch turning ``old`` into ``new`` for ``path`` (a relative path gives a/ and b/ names)."""
    name = path.as_posix().lstrip("/")  # a/tmp/x.py, as git diff --no-index names an absolute path
    out = []
    for line in difflib.unified_diff(_split_lf(old), _split_lf(new), quote_name(f"a/{name}"),
                                     quote_name(f"b/{name}")):
        out.append(line if line.endswith("\n") else line + "\n" + NO_NEWLINE)
    return "".join(out)
