"""Write a generated file set into a folder, or compare the folder against it.

Only files whose bytes change are written.  The generated subfolders (``api/``,
``tables/``) belong to the generator: Markdown files in them that it no longer
produces are stale and removed.  Everything else in the folder is left alone.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kb.docs.links import OWNED_DIRS


@dataclass
class Changes:
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0


def _stale(out: Path, files: dict[str, str]) -> list[str]:
    found = []
    for sub in OWNED_DIRS:
        folder = out / sub
        if folder.is_dir():
            found += [f"{sub}/{p.name}" for p in sorted(folder.glob("*.md")) if f"{sub}/{p.name}" not in files]
    return found


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
    return sorted(problems)


def sync(out: Path, files: dict[str, str]) -> Changes:
    changes = Changes()
    for rel, text in files.items():
        path, data = out / rel, text.encode("utf-8")
        if path.is_file() and path.read_bytes() == data:
            changes.unchanged += 1
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        changes.written.append(rel)
    for rel in _stale(out, files):
        (out / rel).unlink()
        changes.removed.append(rel)
    return changes
