"""Write a generated file set into a folder, or compare the folder against it.

A folder msmap generates carries a marker file, ``.msmap-docs``, listing every file it wrote.
``msmap docs`` writes only into a new or empty folder, or one with the marker (``--force``
adopts a folder without it); it rewrites only the files whose bytes change, and removes only
files the marker lists that it no longer generates.  Files it did not write - a hand-written
page beside the generated ones - are never overwritten unless generated under the same name,
and never removed.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from kb.errors import MsmapError
from kb.safepaths import leaves, write_file

MARKER = ".msmap-docs"
MARKER_HEAD = ("# Written by 'msmap docs'. It rewrites and removes only the files listed below;\n"
               "# other files in this folder are left alone. Delete this file to stop msmap writing here.\n")


@dataclass
class Changes:
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0


def listed(out: Path) -> list[str] | None:
    """The files the marker lists (relative paths), or None when the folder has no marker."""
    marker = out / MARKER
    if not os.path.lexists(marker):
        return None
    if not marker.is_file():  # a FIFO would block the read; a folder or a device is not msmap's
        raise MsmapError(f"{marker} is not a regular file: msmap did not write it; remove it, or choose "
                         "another folder with --out")
    try:
        text = marker.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise MsmapError(f"{out / MARKER}: cannot read the marker: {exc}") from None
    names = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    return [n for n in names if not Path(n).is_absolute() and ".." not in Path(n).parts]


def _stale(out: Path, files: dict[str, str]) -> list[str]:
    return sorted(rel for rel in listed(out) or [] if rel not in files and (out / rel).is_file())


def diff(out: Path, files: dict[str, str]) -> list[tuple[str, str]]:
    """(path, 'missing' | 'differs' | 'stale') for every file that is not as generated."""
    problems = []
    for rel, text in files.items():
        path = out / rel
        if not path.is_file():
            problems.append((rel, "missing"))
        elif path.read_bytes() != text.encode("utf-8"):
            problems.append((rel, "differs"))
    problems += [(rel, "stale") for rel in _stale(out, files)]
    if out.is_dir() and listed(out) is None:
        problems.append((MARKER, "missing (msmap did not generate this folder)"))
    return sorted(problems)


def check_writable(out: Path, force: bool = False) -> None:
    """Refuse a folder that holds files and no marker, unless ``force``."""
    if out.exists() and not out.is_dir():
        raise MsmapError(f"{out} exists and is not a folder")
    if force or not out.is_dir() or listed(out) is not None:
        return
    others = sorted(p.name for p in out.iterdir())
    if others:
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        raise MsmapError(f"{out} holds files msmap did not generate ({shown}) and no {MARKER} marker; "
                         "choose a new or empty folder with --out, or pass --force to write the docs "
                         "there anyway (other files are kept)")


def sync(out: Path, files: dict[str, str], force: bool = False) -> Changes:
    """Write ``files`` into ``out``.  The marker is written first, listing what this run may write
    beside what it listed before, so a run that stops half-way (a full disk) leaves a folder the
    next run recognises.  Every file goes through ``kb.safepaths`` (never through a symlink, never
    a read-only file); those it refuses are named in one error at the end, after the others."""
    check_writable(out, force)
    changes = Changes()
    stale = _stale(out, files) if out.is_dir() else []
    problems: list[str] = []
    _write_marker(out, sorted(set(files) | set(stale)), problems)
    if problems:  # (nothing written yet)
        raise MsmapError(f"{out}: {problems[0]}", exit_code=1)
    for rel, text in files.items():
        path, data = out / rel, text.encode("utf-8")
        if path.is_file() and not path.is_symlink() and path.read_bytes() == data:
            changes.unchanged += 1
            continue
        problem = leaves(path, out) or write_file(path, data)
        if problem:
            problems.append(f"{rel}: {problem}")
        else:
            changes.written.append(rel)
    for rel in stale:
        problem = leaves(out / rel, out)
        try:
            if problem is None:
                (out / rel).unlink()
                changes.removed.append(rel)
        except OSError as exc:
            problem = f"not removed: {exc.strerror or exc}"
        if problem:
            problems.append(f"{rel}: {problem}")
    if not problems:
        _write_marker(out, sorted(files), problems)
    if problems:
        shown = "; ".join(problems[:3]) + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")
        raise MsmapError(f"{out}: {len(problems)} file(s) not written: {shown}", exit_code=1)
    return changes


def _write_marker(out: Path, names: list[str], problems: list[str]) -> None:
    text = MARKER_HEAD + "".join(f"{rel}\n" for rel in names)
    try:
        if (out / MARKER).is_file() and (out / MARKER).read_text(encoding="utf-8") == text:
            return
    except (OSError, UnicodeDecodeError):
        pass
    problem = write_file(out / MARKER, text.encode("utf-8"))
    if problem:
        problems.append(f"{MARKER}: {problem}")
