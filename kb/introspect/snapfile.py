"""Read and write ``data/snapshots/<framework>-<version>.json``.

The file is plain JSON laid out for reviewable diffs: sorted keys, one API per
line, no timestamps, so two snapshots of the same installation are
byte-identical and an upgrade shows up as a line-per-API diff.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from kb.versions import version_key

FRAMEWORKS = ("torch", "mindspore")
NAME_RE = re.compile(r"^(?P<framework>torch|mindspore)-(?P<version>\d+(?:\.\d+)*)\.json$")


def file_name(framework: str, version: str) -> str:
    return f"{framework}-{version}.json"


def dumps(snapshot: dict) -> str:
    """The canonical text of a snapshot (ends with a newline)."""
    apis = snapshot["apis"]
    lines = [f"{json.dumps(name)}: {_compact(apis[name])}" for name in sorted(apis)]
    body = ",\n".join(lines)
    head = {k: v for k, v in snapshot.items() if k != "apis"}
    tail = "".join(f",\n{json.dumps(k)}: {_block(head[k])}" for k in sorted(head))
    return "{\"apis\": {\n" + body + "\n}" + tail + "\n}\n"


def _block(value) -> str:
    """A table (``spellings``, ``members``: a dict of dicts or lists) one entry per line; else compact."""
    if isinstance(value, dict) and value and all(isinstance(v, (dict, list)) for v in value.values()):
        return "{\n" + ",\n".join(f"{json.dumps(k)}: {_compact(value[k])}" for k in sorted(value)) + "\n}"
    return _compact(value)


def _compact(value) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def write(snapshot: dict, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / file_name(snapshot["framework"], snapshot["version"])
    path.write_text(dumps(snapshot), encoding="utf-8")
    return path


def load(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def find(snap_dir: Path, framework: str) -> list[Path]:
    """Snapshot files of ``framework`` in ``snap_dir``, oldest version first."""
    found = []
    for path in Path(snap_dir).glob(f"{framework}-*.json"):
        match = NAME_RE.match(path.name)
        if match:
            found.append((version_key(match.group("version")), path))
    return [path for _, path in sorted(found)]


