"""``msmap verify``'s processes and folders end with it, however it ends.

- A framework child dies with its parent: on Linux the kernel kills it when the parent dies
  (``prctl(PR_SET_PDEATHSIG, SIGKILL)``, libc's public call), elsewhere a watchdog thread that
  sees the parent pid change ends it; so a killed ``msmap verify`` leaves no model running.
- The parent turns SIGTERM and SIGHUP into ``KeyboardInterrupt`` while it runs, so its
  ``finally`` blocks kill the children and remove the work folder (``msmap: interrupted``, 130).
- A work folder holds ``owner.pid``; a SIGKILL leaves the folder behind, and the next run removes
  every ``msmap-verify-*`` folder whose owner is gone (``sweep``).
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

PREFIX = "msmap-verify-"
OWNER = "owner.pid"
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
WATCH_EVERY = 0.5  # seconds between the watchdog's looks at the parent pid


def die_with_parent(parent: int) -> None:
    """End this process when ``parent`` ends (call first thing in a child)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it died before the call above
        os._exit(1)
    threading.Thread(target=_watch, args=(parent,), name="msmap-parent-watch", daemon=True).start()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_EVERY)
    os._exit(1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def sweep(folder: Path | None = None) -> list[Path]:
    """Remove the work folders of earlier runs that were killed outright; returns them."""
    base = Path(folder or tempfile.gettempdir())
    removed = []
    for work in base.glob(PREFIX + "*"):
        try:
            if work.is_symlink() or not work.is_dir() or work.stat().st_uid != os.getuid():
                continue
            owner = int((work / OWNER).read_text().strip() or "0")
        except (OSError, ValueError):
            continue
        if owner > 0 and owner != os.getpid() and not _alive(owner):
            shutil.rmtree(work, ignore_errors=True)
            removed.append(work)
    return removed


@contextlib.contextmanager
def work_folder() -> Iterator[Path]:
    """A fresh work folder (marked with this pid), removed on the way out."""
    sweep()
    with tempfile.TemporaryDirectory(prefix=PREFIX) as tmp:
        (Path(tmp) / OWNER).write_text(str(os.getpid()))
        yield Path(tmp)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """SIGTERM and SIGHUP raise KeyboardInterrupt inside (main thread only; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    wanted = [s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None]
    before = {s: signal.signal(s, _interrupt) for s in wanted}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler if handler is not None else signal.SIG_DFL)
