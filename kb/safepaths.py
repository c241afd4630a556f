"""May msmap write this path?  The one decision every write of msmap goes through.

``convert --in-place`` and ``--out``, ``weights --out``, ``docs`` and the knowledge base all ask
``why_not_writable`` before they put a file anywhere, and write with ``write_file``:

- only a regular file is ever replaced (a FIFO, a device, a socket or a folder never is: a size-0
  ``/dev/null`` is not an "empty file");
- never through a symlink, and never the symlink itself; a file msmap puts in a folder of its own
  (``convert --out``, ``docs``) never lands outside it through a symlinked folder (``leaves``);
- never a file the run reads as its input (the same inode, whatever the path says);
- never a file with other hard links: replacing it would split them (the other names would keep
  the old content), and writing through the inode would not be atomic - so it is refused and the
  message says so;
- never a read-only file, or a file in a read-only folder: root is treated like the file's owner
  (a 0444 file, or any file in a 0555 folder, is refused even though root could write it);
- a replaced file keeps its owner, group and mode (or is not replaced, when they cannot be kept).

Files are written through a temporary file beside them and a rename (``kb.paths.write_atomically``),
which removes the temporary file on any failure (a full disk, an interrupt).
"""
from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from kb.errors import MsmapError
from kb.paths import write_atomically


def kind(mode: int) -> str:
    """What a non-regular file is, for a message."""
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symlink"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _writable(path: Path | str, info: os.stat_result, access: int = os.W_OK) -> bool:
    """Writable by this process, root counting as the owner: a file or folder whose owner has no
    write bit is read-only for root too."""
    if os.geteuid() == 0 and not info.st_mode & stat.S_IWUSR:
        return False
    return os.access(path, access)


def _folder_problem(folder: Path) -> str | None:
    """Why no file can be created or replaced in ``folder`` (or the nearest folder that exists)."""
    for candidate in (folder, *folder.absolute().parents):
        try:
            info = os.stat(candidate)
        except FileNotFoundError:
            continue  # it will be created in its parent
        except OSError as exc:
            return f"cannot look at its folder {candidate}: {exc.strerror or exc}"
        if not stat.S_ISDIR(info.st_mode):
            return f"{candidate} is not a folder"
        if not _writable(candidate, info, os.W_OK | os.X_OK):
            return f"its folder {candidate} is read-only"
        return None
    return None


def why_not_writable(path: Path, inputs: Iterable[Path] = ()) -> str | None:
    """None when msmap may create ``path`` or replace the regular file there; else why not (a phrase
    that follows the path in a message: ``model.py: read-only: not rewritten``)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        return f"cannot look at it: {exc.strerror or exc}"
    if info is not None:
        if stat.S_ISLNK(info.st_mode):
            return "is a symlink: not written through (name the file it points to)"
        if not stat.S_ISREG(info.st_mode):
            return f"is {kind(info.st_mode)}, not a regular file: never replaced"
        for given in inputs:
            try:
                source = os.stat(given)
            except OSError:
                continue
            if (source.st_dev, source.st_ino) == (info.st_dev, info.st_ino):
                return f"is the input {given}: not overwritten (choose another output path)"
        if info.st_nlink > 1:
            return (f"has {info.st_nlink} hard links: not rewritten (replacing it would split them; "
                    "copy it to a file of its own first)")
        if not _writable(path, info):
            return "read-only: not rewritten (make it writable, or write elsewhere)"
    return _folder_problem(path.parent)


def leaves(path: Path, folder: Path) -> str | None:
    """Why writing ``path`` would land outside ``folder`` (a symlinked folder on the way), or None."""
    real_folder = os.path.realpath(folder)
    real = os.path.realpath(path.parent)
    if real != real_folder and not real.startswith(real_folder.rstrip(os.sep) + os.sep):
        return f"not written: {path.parent} leads out of {folder} through a symlink"
    return None


def refuse_unless_writable(path: Path, what: str, inputs: Iterable[Path] = ()) -> None:
    """Raise MsmapError (exit 2) naming ``what`` unless msmap may write ``path``."""
    problem = why_not_writable(path, inputs)
    if problem:
        raise MsmapError(f"{what} {path}: {problem}")


_UMASK: int | None = None


def default_mode() -> int:
    """The mode a new file gets (0o666 less the umask), as ``open()`` would give it."""
    global _UMASK
    if _UMASK is None:
        _UMASK = os.umask(0o022)
        os.umask(_UMASK)
    return 0o666 & ~_UMASK


def write_file(path: Path, data: bytes | Path, like: Path | None = None, inputs: Iterable[Path] = ()) -> str | None:
    """Write ``data`` at ``path`` if ``why_not_writable`` allows it; None, or why it was not written.

    The mode is ``like``'s (the source of a copy) or else the replaced file's (new files: the
    umask's); a replaced file keeps its owner and group.  A regular file that already holds
    ``data`` with that mode is left as it is (a second ``convert --out`` over a read-only copy
    has nothing to write, so nothing to refuse)."""
    try:
        current: os.stat_result | None = os.lstat(path)
    except OSError:
        current = None
    mode = default_mode()
    for source in (like, path if current is not None else None):
        if source is not None:
            try:
                mode = stat.S_IMODE(os.stat(source).st_mode)
                break
            except OSError:
                continue
    if current is not None and _holds(path, current, data, mode):
        return None
    problem = why_not_writable(path, inputs)
    if problem:
        return problem
    owner = (current.st_uid, current.st_gid) if current is not None else None
    try:
        write_atomically(path, data, mode, owner)
    except PermissionError as exc:
        if owner is not None and exc.filename is None:  # fchown refused
            return f"cannot keep its owner ({owner[0]}:{owner[1]}): not rewritten"
        return f"cannot write: {exc.strerror or exc}"
    except OSError as exc:
        return f"cannot write: {exc.strerror or exc}"
    return None


def _holds(path: Path, info: os.stat_result, data: bytes | Path, mode: int) -> bool:
    """True when the regular file at ``path`` (``info``: its lstat) already is ``data`` with ``mode``."""
    if not stat.S_ISREG(info.st_mode) or stat.S_IMODE(info.st_mode) != mode:
        return False
    try:
        if isinstance(data, Path):
            import filecmp

            return os.stat(data).st_size == info.st_size and filecmp.cmp(data, path, shallow=False)
        return info.st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False
