"""Load and validate everything under data/ (build time only).

Every problem is reported as ``file:line: entry <id>: field <path>: message`` so a
curator can jump straight to it.  Nothing here is imported on the lookup path.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from kb.errors import DataError
from kb.model import Caveat, CuratedFile, DerivedMapping, Mapping, TimingRow, WeightRule


@dataclass
class Sources:
    curated: dict[str, Mapping] = field(default_factory=dict)  # torch name -> mapping
    derived: dict[str, DerivedMapping] = field(default_factory=dict)
    caveats: dict[str, Caveat] = field(default_factory=dict)
    snapshots: list[dict] = field(default_factory=list)  # parsed snapshot JSON
    origin: dict[str, str] = field(default_factory=dict)  # "caveat:<id>"/"mapping:<torch>" -> file:line
    extra: dict[str, list[Any]] = field(default_factory=dict)  # checks/probes JSON(L), by subdir
    weight_rules: list[tuple[WeightRule, str]] = field(default_factory=list)  # (rule, file:line)


def _entry_label(raw: Any) -> str:
    if isinstance(raw, dict):
        for key in ("torch", "id", "api", "name"):
            if isinstance(raw.get(key), str):
                return f"{key}={raw[key]}"
    return "?"


def _node_at(node: yaml.Node | None, loc: tuple) -> yaml.Node | None:
    """Follow a pydantic error location through a composed YAML node tree."""
    for part in loc:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            node = next((v for k, v in node.value if k.value == part), node)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            break
    return node


def _format_errors(path: Path, exc: ValidationError, raw: Any, root: yaml.Node | None, line0: int | None) -> str:
    lines = []
    for err in exc.errors()[:10]:
        loc = tuple(err["loc"])
        entry = "?"
        if line0 is not None:  # one JSON Lines record: the record is the entry
            entry = _entry_label(raw)
        elif len(loc) >= 2 and isinstance(loc[1], int) and isinstance(raw, dict):
            items = raw.get(loc[0]) or []
            if loc[1] < len(items):
                entry = f"{loc[0]}[{loc[1]}] ({_entry_label(items[loc[1]])})"
        node = _node_at(root, loc) if root is not None else None
        line = node.start_mark.line + 1 if node is not None else line0
        where = f"{path}:{line}" if line else str(path)
        fieldpath = ".".join(str(p) for p in loc) or "(top level)"
        lines.append(f"{where}: entry {entry}: field '{fieldpath}': {err['msg']}")
    more = len(exc.errors()) - 10
    if more > 0:
        lines.append(f"... and {more} more error(s) in {path}")
    return "\n".join(lines)


def load_curated_file(path: Path) -> tuple[CuratedFile, yaml.Node | None]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read: {exc}") from None
    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)  # libyaml when available
        try:
            root = loader.get_single_node()
            raw = (loader.construct_document(root) if root is not None else None) or {}
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise DataError(f"{where}: invalid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(raw, dict):
        raise DataError(f"{path}:1: top level must be a mapping with 'mappings:' and/or 'caveats:'")
    try:
        return CuratedFile.model_validate(raw), root
    except ValidationError as exc:
        raise DataError(_format_errors(path, exc, raw, root, None)) from None


def _line_of(root: yaml.Node | None, section: str, index: int) -> int | None:
    node = _node_at(root, (section, index))
    return node.start_mark.line + 1 if node is not None and node is not root else None


# Recorded results (data/checks, data/probes): the fields the build and the queries read.
RECORD_FIELDS = {"checks": ("subject", "result", "ms_version"), "probes": ("torch", "ms_api", "result", "ms_version")}


def _record_problem(raw: Any, required: tuple[str, ...]) -> str | None:
    if not isinstance(raw, dict):
        return f"a record must be a JSON object, got {type(raw).__name__}"
    for name in required:
        if name not in raw:
            return f"field '{name}': missing"
        if not isinstance(raw[name], str):
            return f"field '{name}': must be a string, got {type(raw[name]).__name__}"
    return None


def load_jsonl(path: Path, model: type[BaseModel] | None = None, required: tuple[str, ...] | None = None) -> list[Any]:
    """One record per line; ``model`` validates each, or ``required``: a JSON object with these
    string fields.  A malformed record stops the build with its file and line."""
    out = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read: {exc}") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}:{n}: invalid JSON: {exc.msg} (column {exc.colno})") from None
        if model is None:
            problem = _record_problem(raw, required) if required is not None else None
            if problem:
                raise DataError(f"{path}:{n}: entry {_entry_label(raw)}: {problem}")
            out.append(raw)
            continue
        try:
            out.append(model.model_validate(raw))
        except ValidationError as exc:
            raise DataError(_format_errors(path, exc, raw, None, n)) from None
    return out


def load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})") from None


def _shown(path: Path, data: Path) -> str:
    """'data/curated/x.yaml': stable across machines (origins are stored in the DB and docs)."""
    try:
        return str(path.resolve().relative_to(data.resolve().parent))
    except ValueError:
        return str(path)


def load_sources(data: Path) -> Sources:
    src = Sources()
    for path in sorted((data / "curated").glob("*.y*ml")):
        cf, root = load_curated_file(path)
        for i, m in enumerate(cf.mappings):
            where = f"{_shown(path, data)}:{_line_of(root, 'mappings', i) or '?'}"
            if m.torch in src.curated:
                raise DataError(
                    f"{where}: entry torch={m.torch}: duplicate mapping (first at {src.origin['mapping:' + m.torch]})"
                )
            src.curated[m.torch] = m
            src.origin["mapping:" + m.torch] = where
        for i, c in enumerate(cf.caveats):
            where = f"{_shown(path, data)}:{_line_of(root, 'caveats', i) or '?'}"
            if c.id in src.caveats:
                raise DataError(
                    f"{where}: entry id={c.id}: duplicate caveat id (first at {src.origin['caveat:' + c.id]})")
            src.caveats[c.id] = c
            src.origin["caveat:" + c.id] = where
        for i, r in enumerate(cf.weight_rules):
            src.weight_rules.append((r, f"{_shown(path, data)}:{_line_of(root, 'weight_rules', i) or '?'}"))
    for path in sorted((data / "derived").glob("*.jsonl")):
        for m in load_jsonl(path, DerivedMapping):
            src.derived[m.torch] = m
    for path in sorted((data / "snapshots").glob("*.json")):
        snap = load_json(path)
        if not isinstance(snap, dict) or not {"framework", "version", "apis"} <= set(snap):
            raise DataError(f"{path}:1: a snapshot needs 'framework', 'version' and 'apis'")
        src.snapshots.append(snap)
    for sub in ("checks", "probes"):
        items: list[Any] = []
        for path in sorted((data / sub).glob("*.json*")):
            items.extend(load_jsonl(path, required=RECORD_FIELDS[sub]) if path.suffix == ".jsonl"
                         else [load_json(path)])
        src.extra[sub] = items
    src.extra["timing"] = [t.model_dump() for path in sorted((data / "timing").glob("*.jsonl"))
                           for t in load_jsonl(path, TimingRow)]  # msmap probe --timing
    usage: dict[str, int] = {}  # data/usage/*.json: use sites per API in real code (benchmarks/census.py)
    for path in sorted((data / "usage").glob("*.json")):
        raw = load_json(path)
        counts = raw.get("counts") if isinstance(raw, dict) else None
        if not isinstance(counts, dict) or not all(isinstance(v, int) for v in counts.values()):
            raise DataError(f"{path}:1: a usage file needs 'counts': {{API name: use sites}}")
        for name, sites in counts.items():
            usage[name] = usage.get(name, 0) + sites
    src.extra["usage"] = [{"torch": name, "sites": sites} for name, sites in sorted(usage.items())]
    _check_references(src)
    return src


def _check_references(src: Sources) -> None:
    for name, m in src.curated.items():
        for cid in m.caveats:
            if cid not in src.caveats:
                raise DataError(
                    f"{src.origin['mapping:' + name]}: entry torch={name}: field 'caveats': unknown caveat id '{cid}'"
                )
