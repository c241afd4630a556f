"""Is this file committed?  The one answer ``convert --in-place`` asks before it rewrites files.

It fails closed: a file in a git work tree counts as having uncommitted changes - and is refused
without ``--force`` - unless ``git status`` says it has none.  When git cannot answer (a
repository owned by another user, "dubious ownership"; git missing; a timeout), each of its files
is refused with git's own message.  A file outside any work tree has nothing to protect.

One ``git status`` runs per repository for the whole run (not one per file: 6,000 files took
138 s that way), restricted to the paths the user named.  Paths reach git after ``--`` and as
literal pathspecs (``GIT_LITERAL_PATHSPECS``), so a file named ``:colon.py`` or ``*.py`` is that
file, not pathspec magic; ``-z`` output needs no unquoting.
"""
from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable
from pathlib import Path

GIT_TIMEOUT = 120  # seconds for one repository's status
CHANGED = "uncommitted changes"
# variables that would point git elsewhere: the work tree is the one found above the file
_LOCATING = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_NAMESPACE")


def work_tree_of(folder: str, cache: dict[str, str | None]) -> str | None:
    """The work tree holding ``folder`` (the nearest folder above it with a ``.git``), or None."""
    walked = []
    current = folder
    while True:
        if current in cache:
            found = cache[current]
            break
        walked.append(current)
        if os.path.lexists(os.path.join(current, ".git")):
            found = current
            break
        parent = os.path.dirname(current)
        if parent == current:
            found = None
            break
        current = parent
    for name in walked:
        cache[name] = found
    return found


def _pathspecs(tree: str, roots: Iterable[str]) -> list[str] | None:
    """The named paths inside ``tree``, relative to it; None when one names the whole tree."""
    specs = []
    for root in roots:
        if root == tree or tree.startswith(root.rstrip(os.sep) + os.sep):
            return None
        if root.startswith(tree + os.sep):
            specs.append(os.path.relpath(root, tree))
    return specs or None


def _status(tree: str, specs: list[str] | None) -> tuple[set[str] | None, str]:
    """(paths with changes, relative to ``tree``) or (None, why git could not tell)."""
    command = ["git", "--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all",
               "--no-renames", "--"] + (specs or [])
    env = {name: value for name, value in os.environ.items() if name not in _LOCATING}
    env.update(GIT_LITERAL_PATHSPECS="1", LC_ALL="C")
    try:
        done = subprocess.run(command, cwd=tree, capture_output=True, env=env, timeout=GIT_TIMEOUT)
    except FileNotFoundError:
        return None, "git is not installed, so its changes in the work tree cannot be checked"
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"git status did not answer ({exc})"
    if done.returncode != 0:
        message = " ".join(done.stderr.decode("utf-8", "replace").split()) or f"exit {done.returncode}"
        return None, f"git status failed: {message[:300]}"
    changed = set()
    for entry in done.stdout.split(b"\0"):
        if len(entry) > 3:
            changed.add(os.fsdecode(entry[3:]).rstrip("/"))
    return changed, ""


def _real(path: str | Path) -> str:
    """``path`` with its folders' symlinks resolved (a folder linked into a work tree is in it)."""
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(os.path.realpath(folder), name)


def uncommitted(files: Iterable[Path], roots: Iterable[str | Path] = ()) -> dict[Path, str]:
    """The files with uncommitted changes, or whose state git could not tell: path -> why.

    ``roots``: the paths the user named (they narrow each ``git status``); default the files."""
    files = list(files)
    named = [os.path.realpath(r) for r in roots] or [_real(f) for f in files]
    cache: dict[str, str | None] = {}
    by_tree: dict[str, list[Path]] = {}
    for path in files:
        tree = work_tree_of(os.path.dirname(_real(path)), cache)
        if tree is not None:
            by_tree.setdefault(tree, []).append(path)
    refused: dict[Path, str] = {}
    for tree, members in by_tree.items():
        changed, why = _status(tree, _pathspecs(tree, named))
        for path in members:
            relative = os.path.relpath(_real(path), tree)
            if changed is None:
                refused[path] = why
            elif relative in changed:
                refused[path] = CHANGED
    return refused


def report_lines(refused: dict[Path, str]) -> list[str]:
    """What to print for ``uncommitted``'s answer: a changed file per line; a reason git gave for
    many files (its error, once per repository) once, then those files."""
    by_reason: dict[str, list[Path]] = {}
    for path, why in refused.items():
        by_reason.setdefault(why, []).append(path)
    lines = []
    for why, paths in by_reason.items():
        if why == CHANGED or len(paths) == 1:
            lines += [f"  {path}: {why}\n" for path in paths]
        else:
            lines += [f"  {len(paths)} files: {why}\n"] + [f"    {path}\n" for path in paths]
    return lines
