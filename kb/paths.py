"""Where the curated data and the built SQLite DB live.

- data: ``$MSMAP_DATA``, else ``data/`` beside the ``kb`` package (a checkout or an
  editable install), else ``<prefix>/share/msmap/data`` (a regular ``pip install .``).
- DB: ``$MSMAP_DB``, else ``$XDG_CACHE_HOME/msmap/kb-<hash of the data dir>.sqlite``,
  so several checkouts never share (or clobber) one DB.  An installed msmap carries the DB built
  from its data when the wheel was built (``bundled_db``): the first run copies it instead of
  building (about 20 s).
"""
from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path

DATA_SUBDIRS = ("curated", "derived", "snapshots", "checks", "probes", "timing", "usage")
DATA_SUFFIXES = (".yaml", ".yml", ".jsonl", ".json")


def data_dir() -> Path:
    env = os.environ.get("MSMAP_DATA")
    if env:
        return Path(env)
    beside = Path(__file__).resolve().parent.parent / "data"
    if (beside / "curated").is_dir():
        return beside
    return Path(sys.prefix) / "share" / "msmap" / "data"


def cache_dir() -> Path:
    """msmap's own cache directory: ``$XDG_CACHE_HOME/msmap`` (default ``~/.cache/msmap``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "msmap"


TEMPORARY = re.compile(r"^\.(?P<name>.+)\.[a-z0-9_]{8}\.tmp$")  # write_atomically's: .NAME.XXXXXXXX.tmp


def write_atomically(path: Path, data: bytes | Path, mode: int | None = None,
                     owner: tuple[int, int] | None = None) -> None:
    """Write ``data`` (bytes, or the content of another file, streamed) to ``path`` through a
    temporary file beside it and a rename: a reader - or a run killed half-way - sees the old
    content or the new, never half of it, and a symlink at ``path`` is replaced, not written
    through.  ``mode``: the new file's permission bits; ``owner``: its (uid, gid), when they must
    be kept (a refused ``chown`` raises PermissionError).  Raises OSError; the temporary file is
    removed on any failure, an interrupt (Ctrl-C) included.

    The temporary file (``.NAME.XXXXXXXX.tmp``) is locked while it is written, so that a later run
    can tell one left by a killed run (``kill -9`` skips every clean-up) from one being written now:
    ``remove_stale_temporaries``."""
    import shutil
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = None
    try:
        with _interrupts_held():  # a Ctrl-C between creating the file and knowing its name would leave it
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        locked = _lock(fd, blocking=True) and sys.platform != "win32"
        with os.fdopen(fd, "wb") as handle:
            if isinstance(data, Path):
                with open(data, "rb") as source:
                    shutil.copyfileobj(source, handle)
            else:
                handle.write(data)
            handle.flush()
            if owner is not None:
                _keep_owner(handle.fileno(), owner)
            if mode is not None:
                os.chmod(tmp, mode)  # (after chown, which clears the set-id bits)
            if locked:
                os.replace(tmp, path)  # (renamed while still locked: never seen unlocked under its name)
        if not locked:  # (Windows renames no open file)
            os.replace(tmp, path)
    except BaseException:
        with _interrupts_held():  # (a second Ctrl-C must not stop the clean-up)
            try:
                if tmp is not None:
                    os.unlink(tmp)
            except OSError:
                pass
        raise


def _keep_owner(fd: int, owner: tuple[int, int]) -> None:
    info = os.fstat(fd)
    uid, gid = owner
    if (info.st_uid, info.st_gid) != (uid, gid) and hasattr(os, "fchown"):
        os.fchown(fd, uid if uid != info.st_uid else -1, gid if gid != info.st_gid else -1)


class _interrupts_held:
    """Hold SIGINT (delivered on leaving) while a few statements must run as one."""

    def __enter__(self) -> None:
        import signal
        import threading

        self.before = None
        if hasattr(signal, "pthread_sigmask") and threading.current_thread() is threading.main_thread():
            self.before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})

    def __exit__(self, *exc: object) -> None:
        if self.before is not None:
            import signal

            signal.pthread_sigmask(signal.SIG_SETMASK, self.before)


def _lock(fd: int, blocking: bool) -> bool:
    """An exclusive advisory lock on ``fd`` (released when the process ends, however it ends);
    False when another process holds it.  Without ``fcntl`` (Windows) nothing is locked: True."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    return True


def remove_stale_temporaries(folders: Iterable[Path]) -> list[Path]:
    """Remove the temporary files ``write_atomically`` left in ``folders`` when its process was
    killed (no process holds their lock); returns the files removed.  Only regular files named like
    its temporaries are looked at; one another msmap is writing right now is locked, and kept."""
    removed: list[Path] = []
    for folder in dict.fromkeys(folders):
        try:
            entries = [e for e in os.scandir(folder) if TEMPORARY.match(e.name)]
        except OSError:
            continue
        for entry in entries:
            try:
                if not entry.is_file(follow_symlinks=False):
                    continue
                fd = os.open(entry.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            except OSError:
                continue
            try:
                if sys.platform != "win32" and _lock(fd, blocking=False):
                    os.unlink(entry.path)
                    removed.append(Path(entry.path))
            except OSError:
                pass
            finally:
                os.close(fd)
    return removed


def db_path(data: Path | None = None) -> Path:
    env = os.environ.get("MSMAP_DB")
    if env:
        return Path(env)
    data = data or data_dir()
    digest = hashlib.sha1(str(data.resolve()).encode()).hexdigest()[:12]
    return cache_dir() / f"kb-{digest}.sqlite"


def source_files(data: Path) -> list[Path]:
    """Every data file the DB is built from, sorted (stable fingerprints)."""
    files: list[Path] = []
    for sub in DATA_SUBDIRS:
        folder = data / sub
        if not folder.is_dir():
            continue
        for root, dirs, names in os.walk(folder):
            dirs.sort()
            files.extend(Path(root) / n for n in sorted(names) if n.endswith(DATA_SUFFIXES))
    return files


def content_fingerprint(data: Path) -> str:
    """Staleness key that survives a copy (``pip install`` sets new mtimes): names and bytes of
    the source files.  Stored in the DB built into the wheel (``bundled_db``)."""
    h = hashlib.sha1()
    for f in source_files(data):
        h.update(f"{f.relative_to(data).as_posix()}\0".encode())
        h.update(hashlib.sha1(f.read_bytes()).digest())
    return h.hexdigest()


def bundled_db() -> Path:
    """The DB built from the bundled data when the wheel was built (setup.py); absent in a checkout."""
    return Path(__file__).resolve().parent / "prebuilt" / "kb.sqlite"


def fingerprint(data: Path) -> str:
    """Cheap staleness key: names, sizes and mtimes of the source files (no reads)."""
    h = hashlib.sha1()
    for f in source_files(data):
        st = f.stat()
        h.update(f"{f.relative_to(data)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()
