"""Reading a file a user named: the one bounded reader (``kb.analysis.sourcefile`` builds on it).

Only a regular file is read - opened without blocking, so a FIFO never waits for a writer and a
device never streams forever - and no more than ``max_bytes`` of it (a file that grows while it
is read is caught too).  Every failure is a phrase for a message, never an exception.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from kb.safepaths import kind


def read_file(path: str | Path, max_bytes: int, what: str = "--max-file-size") -> tuple[bytes | None, str | None]:
    """(bytes, None) or (None, why the file cannot be read); ``what`` names the limit in messages."""
    try:  # O_NONBLOCK: opening a FIFO does not wait for a writer
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with open(fd, "rb", closefd=True) as handle:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                return None, "is a directory"
            if not stat.S_ISREG(info.st_mode):
                return None, f"skipped: not a regular file ({kind(info.st_mode)})"
            if info.st_size > max_bytes:
                return None, (f"skipped: {info.st_size / 1e6:.1f} MB is larger than the "
                              f"{max_bytes / 1e6:g} MB limit ({what})")
            data = handle.read(max_bytes + 1)
        if len(data) > max_bytes:  # it grew while being read
            return None, f"skipped: larger than the {max_bytes / 1e6:g} MB limit ({what})"
    except IsADirectoryError:
        return None, "is a directory"
    except FileNotFoundError:
        return None, "cannot read: no such file (dangling symlink?)"
    except PermissionError:
        return None, "cannot read: permission denied"
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or exc}"
    return data, None


def read_text(path: str | Path, max_bytes: int, what: str) -> tuple[str | None, str | None]:
    """(UTF-8 text, None) or (None, why not)."""
    data, why = read_file(path, max_bytes, what)
    if data is None:
        return None, why
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})"
