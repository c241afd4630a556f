"""Is a SQLite file msmap's knowledge base, may it be replaced, and is it intact?

msmap marks the databases it builds with an application id in the SQLite header
(``PRAGMA application_id``; bytes 68-71 of the file), which can be read without
opening the database, even when its pages are damaged.  A file without the mark
is replaced only when it is empty or when the user says ``--force``: ``--db``
naming another program's database must never lose that program's tables.
Databases built before the mark existed are recognised by their ``meta`` table.

Integrity: ``PRAGMA quick_check`` (about 20 ms on the bundled 11 MB database)
runs when the file's size or modification time differs from the last time it
was found intact; those are remembered in msmap's cache folder, so an unchanged
database is never checked twice.
"""
from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
from pathlib import Path

from kb import paths
from kb.errors import MsmapError
from kb.safepaths import kind, why_not_writable

APPLICATION_ID = 0x6D736D70  # "msmp"
HEADER = b"SQLite format 3\x00"


def read_only_uri(path: Path | str) -> str:
    """The SQLite URI opening ``path`` read-only: the path percent-encoded, so a ``?``, ``#`` or
    ``%`` in it stays part of the name (unquoted, ``kb?x/kb.sqlite`` opens - and creates - ``kb``)."""
    from urllib.parse import quote

    return f"file:{quote(os.path.abspath(path))}?mode=ro"


def application_id(path: Path) -> int | None:
    """The header's application id, or None when the file is not a SQLite database."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(100)
    except OSError:
        return None
    if len(head) < 100 or not head.startswith(HEADER):
        return None
    return int.from_bytes(head[68:72], "big")


def is_msmap(path: Path) -> bool:
    """True for a database msmap built (the header's mark, or an older build's ``meta`` table)."""
    found = application_id(path)
    if found == APPLICATION_ID:
        return True
    if found != 0:  # not SQLite, or another program's mark
        return False
    try:
        with sqlite3.connect(read_only_uri(path), uri=True) as conn:
            keys = {r[0] for r in conn.execute("SELECT key FROM meta WHERE key IN ('fingerprint', 'schema')")}
    except sqlite3.Error:
        return False
    return keys == {"fingerprint", "schema"}


def check_usable(path: Path) -> None:
    """Raise unless ``path`` is missing or (through any symlink) a regular file: a FIFO would block
    every read, and a device (``/dev/null``) is not an empty file to build into."""
    try:
        info = os.stat(path)
    except OSError:
        return  # missing (or unreadable: opening it says why)
    if not stat.S_ISREG(info.st_mode):
        raise MsmapError(f"the knowledge base path {path} is {kind(info.st_mode)}, not a regular file; "
                         "msmap never replaces it (set --db or MSMAP_DB to a file path)")


def check_replaceable(path: Path, force: bool = False, explicit: bool = True) -> None:
    """Raise unless msmap may (re)build the knowledge base at ``path``: a path ``kb.safepaths``
    allows (never a device, FIFO, symlink or read-only file), missing, an empty regular file,
    msmap's own database, or ``force`` given.  ``explicit=False``: msmap's own cache location,
    where any regular file is msmap's."""
    check_usable(path)
    problem = why_not_writable(path)
    if problem:
        raise MsmapError(f"knowledge base {path}: {problem} (set MSMAP_DB, or --db, to another path)")
    if force or not explicit or not path.exists() or path.stat().st_size == 0 or is_msmap(path):
        return
    raise MsmapError(f"{path} is not an msmap knowledge base; refusing to replace it "
                     f"(choose another path, or run 'msmap build --db {path} --force' to overwrite it)")


def _stamp_file(path: Path) -> Path:
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:16]
    return paths.cache_dir() / "checked" / digest


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size} {st.st_mtime_ns}\n"


def remember_intact(path: Path) -> None:
    """Note the file's size and time: it needs no check until they change (best effort)."""
    try:
        paths.write_atomically(_stamp_file(path), _stamp(path).encode())
    except OSError:
        pass  # an unwritable cache only costs a check on the next start


def damage(path: Path) -> str | None:
    """None when the database is intact (or known intact since it last changed), else why not."""
    try:
        if _stamp_file(path).read_text() == _stamp(path):
            return None
    except OSError:
        pass
    try:
        with sqlite3.connect(read_only_uri(path), uri=True) as conn:
            rows = conn.execute("PRAGMA quick_check(3)").fetchall()
    except sqlite3.Error as exc:
        return str(exc)
    if rows != [("ok",)]:
        found = "; ".join(line.strip() for r in rows for line in str(r[0]).splitlines() if line.strip())
        return found if len(found) <= 160 else found[:157] + "..."
    remember_intact(path)
    return None
