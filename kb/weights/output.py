"""Where ``msmap weights`` writes its ``.ckpt``, and only there.

``--out`` is checked before any work (``check_out``): it must end in ``.ckpt`` (MindSpore would
append the suffix and write another name), and ``kb.safepaths`` must allow it - never the input
checkpoint, a symlink, a device, a read-only file or one with other hard links.

``save`` lets MindSpore write into a private folder beside ``--out`` (MindSpore follows symlinks,
removes the old file first and leaves its own ``NAME.tmp`` behind on a full disk) and renames the
result over ``--out``; the folder is removed whatever happens, so a full disk or an interrupt
leaves ``--out`` as it was and no temporary file.  A replaced file keeps its owner and mode; a
new one gets the umask's mode (MindSpore's own 0400 would make the next run refuse it).
"""
from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from kb.errors import MsmapError
from kb.safepaths import default_mode, refuse_unless_writable

SUFFIX = ".ckpt"


def check_out(checkpoint: Path, out: Path) -> None:
    """Refuse (exit 2) an ``--out`` msmap may not write, before anything is loaded."""
    if out.suffix != SUFFIX:
        raise MsmapError(f"--out {out}: a MindSpore checkpoint's name ends in {SUFFIX} (MindSpore would write "
                         f"{out}{SUFFIX} instead); choose a name such as {out.with_suffix(SUFFIX)}")
    refuse_unless_writable(out, "--out", inputs=[checkpoint])


def save(out: Path, write: Callable[[str], None]) -> None:
    """Run ``write(path)`` (``mindspore.save_checkpoint``) on a private path, then put the file at
    ``out``; raises MsmapError naming ``out`` when anything fails (nothing is left behind)."""
    refuse_unless_writable(out, "--out")  # (again: the model code ran in between)
    try:
        previous: os.stat_result | None = os.lstat(out)
    except OSError:
        previous = None
    folder = None
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        folder = tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.")
        written = os.path.join(folder, out.name)
        write(written)
        os.chmod(written, stat.S_IMODE(previous.st_mode) if previous else default_mode())
        if previous is not None and hasattr(os, "chown"):
            os.chown(written, previous.st_uid, previous.st_gid)
            os.chmod(written, stat.S_IMODE(previous.st_mode))  # (chown clears set-id bits)
        os.replace(written, out)
    except Exception as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else f"{type(exc).__name__}: {exc}"
        raise MsmapError(f"{out}: write: cannot write the checkpoint ({why}); nothing was written") from None
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
