"""Where ``msmap convert`` writes, and only there.

- ``--out DIR``: the inputs are mirrored under DIR (a folder ``src`` becomes ``DIR/src``) as
  they were - file modes, symlinks as symlinks (never followed), hidden files and folders -
  apart from the converted files.  Virtual environments, ``__pycache__``, ``node_modules`` and
  ``site-packages`` are not copied.  DIR may not overlap an input (inside it, or the folder that
  holds it, where the "copy" would be the originals): that is ``--in-place``'s job.
- ``--in-place``: a file is replaced only when ``kb.safepaths`` allows it: a regular file, not
  a symlink (its target is converted where it lies, if it is in the tree), not read-only (for
  root either), no other hard link; it keeps its owner and mode.
- Every file is written to a temporary file beside it and renamed over it, so a run that is
  killed leaves each file either as it was or converted, never half-written; nothing is
  written through a symlink out of DIR.  A run killed with ``kill -9`` cannot remove its
  temporary file (``.NAME.XXXXXXXX.tmp``): the next run over the same tree removes and reports
  it (``remove_stale_temporaries``: one that another run is writing is locked, and kept).
"""
from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from kb.errors import MsmapError
from kb.paths import remove_stale_temporaries as remove_stale_temporaries  # re-exported for msmap convert
from kb.safepaths import leaves, write_file

NOT_COPIED = frozenset({"__pycache__", "node_modules", "site-packages"})


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def check_out(roots: list[Path], out: Path) -> None:
    """Refuse an ``--out`` folder that overlaps an input (exit 2)."""
    real_out = Path(os.path.realpath(out))
    for root in roots:
        real = Path(os.path.realpath(root))
        dest = Path(os.path.realpath(destination(root, [root], out)))
        if _within(dest, real) or _within(real, dest) or (root.is_dir() and _within(real_out, real)):
            raise MsmapError(f"--out {out} overlaps the input {root}: the copy would "
                             f"{'replace the originals' if dest == real else 'land inside the input'}; "
                             "choose a folder outside it (or use --in-place to rewrite the files themselves)")


def destination(path: Path, roots: list[Path], out: Path) -> Path:
    """Where ``path`` (one of ``roots`` or below one) goes under ``out``."""
    for root in roots:
        if root.is_dir() and not root.is_symlink():
            try:
                return out / Path(os.path.abspath(root)).name / Path(os.path.abspath(path)).relative_to(
                    os.path.abspath(root))
            except ValueError:
                continue
    return out / path.name


def folders_written(files: list[Path], roots: list[Path], out: Path | None) -> list[Path]:
    """The folders a run writes into: those of the input files (``--in-place``), or every folder of
    ``out`` (its copy of the inputs)."""
    if out is None:
        return [path.parent for path in files]
    return [Path(folder) for folder, _, _ in os.walk(out, followlinks=False, onerror=lambda exc: None)]


def write_copy(target: Path, data: bytes, like: Path, out: Path) -> str | None:
    """Write ``data`` at ``target`` under ``out`` with the mode of ``like``; None or why not."""
    problem = leaves(target, out)
    if problem:
        return problem
    problem = write_file(target, data, like=like, inputs=[like])
    return f"not written: {target} {problem}" if problem else None


def write_in_place(path: Path, data: bytes) -> str | None:
    """Rewrite ``path`` with ``data``; None, or why the file was left as it is."""
    return write_file(path, data)


def copy_rest(roots: list[Path], out: Path, excluded, written: set[str]) -> Iterator[tuple[str, str]]:
    """Mirror the input folders under ``out``, except the files in ``written`` (already converted
    or copied): yields (path, problem) for each entry that could not be copied or was skipped."""
    for root in roots:
        if not root.is_dir() or root.is_symlink():
            continue
        for folder, dirs, files in os.walk(root, followlinks=False, onerror=lambda exc: None):
            here = Path(folder)
            keep = []
            for name in sorted(dirs):
                source = here / name
                if name in NOT_COPIED or name in ("venv", ".venv") or os.path.exists(source / "pyvenv.cfg") \
                        or excluded(source, root):
                    continue
                if source.is_symlink():
                    problem = copy_entry(source, destination(source, roots, out), out)
                    if problem:
                        yield str(source), problem
                    continue
                target = destination(source, roots, out)
                problem = leaves(target, out) or _make_folder(target)  # empty folders are part of the tree too
                if problem:
                    yield str(source), problem
                    continue
                keep.append(name)
            dirs[:] = keep
            for name in sorted(files):
                source = here / name
                if str(source) in written or excluded(source, root):
                    continue
                problem = copy_entry(source, destination(source, roots, out), out)
                if problem:
                    yield str(source), problem


def _make_folder(folder: Path) -> str | None:
    """Make ``folder`` (and its parents); None, or why its files are not copied."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        return f"not copied: {folder} exists and is not a folder"
    except OSError as exc:
        return f"not copied: cannot make {folder}: {exc.strerror or exc}"
    return None


def copy_entry(source: Path, target: Path, out: Path) -> str | None:
    """Copy one file or symlink as it is (a symlink stays a symlink); None or why not."""
    problem = leaves(target, out)
    if problem:
        return problem
    try:
        info = os.lstat(source)
        if stat.S_ISLNK(info.st_mode):
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink() or target.exists():
                if target.is_dir() and not target.is_symlink():
                    return f"not copied: {target} is a folder"
                target.unlink()
            os.symlink(os.readlink(source), target)
            return None
        if not stat.S_ISREG(info.st_mode):
            return "skipped: not a regular file (FIFO, device or socket)"
    except OSError as exc:
        return f"cannot copy: {exc.strerror or exc}"
    problem = write_file(target, source, like=source, inputs=[source])
    return f"not copied: {target} {problem}" if problem else None
