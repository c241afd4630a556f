"""What ``msmap serve`` hands to Datasette: a served copy of the DB and its metadata.

Datasette's search box on a table needs an FTS table whose rowids are that table's
rowids.  The knowledge base's ``search`` index mixes mappings and caveats in one
rowid space, so the served copy adds one index per browsable table:

- ``mappings_fts``: torch name, MindSpore names, notes/advice, linked caveat text
  (rowid = ``mappings.rowid``);
- ``targets_fts`` and ``caveats_fts``: external-content FTS5 over those tables.

The copy lives in the cache and is rebuilt only when the source DB changes.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from kb.dbfile import read_only_uri
from kb.paths import cache_dir as msmap_cache_dir

DB_NAME = "msmap"  # URL path: /msmap/mappings.json
TOKENIZE = "tokenize='porter unicode61'"

FTS_SQL = f"""
CREATE VIRTUAL TABLE mappings_fts USING fts5(torch, mindspore, notes, caveats, {TOKENIZE});
INSERT INTO mappings_fts(rowid, torch, mindspore, notes, caveats)
SELECT m.rowid, m.torch,
  (SELECT group_concat(t.api, ' ') FROM targets t WHERE t.torch = m.torch),
  coalesce(m.advice, '') || ' '
    || coalesce((SELECT group_concat(t.note, ' ') FROM targets t WHERE t.torch = m.torch), ''),
  (SELECT group_concat(c.title || ' ' || c.body, ' ')
     FROM mapping_caveats l JOIN caveats c ON c.id = l.caveat_id WHERE l.torch = m.torch)
FROM mappings m;
CREATE VIRTUAL TABLE targets_fts USING fts5(torch, api, note, content='targets', {TOKENIZE});
INSERT INTO targets_fts(targets_fts) VALUES('rebuild');
CREATE VIRTUAL TABLE caveats_fts USING fts5(id, title, body, topic, applies_to, content='caveats', {TOKENIZE});
INSERT INTO caveats_fts(caveats_fts) VALUES('rebuild');
"""

TABLES: dict[str, dict[str, Any]] = {
    "mappings": {
        "description": "One row per torch API: its namespace bucket, where the entry comes from, and a one-line "
                       "summary of its MindSpore targets.",
        "fts_table": "mappings_fts", "fts_pk": "rowid", "facets": ["namespace", "source", "kind"],
        "label_column": "torch", "sort": "torch",
        "columns": {
            "torch": "fully qualified torch name", "short": "last name part (for short-name lookups)",
            "kind": "class, function, method, attribute ...", "namespace": "torch namespace bucket used in the docs",
            "source": "curated, derived, or curated+derived", "advice": "what to do (Markdown), mainly when "
            "there is no equivalent", "torch_signature": "signature in the newest torch snapshot",
            "provenance": "JSON list of {kind, ref, note}", "summary": "classic and mint targets in one line"},
    },
    "targets": {
        "description": "MindSpore counterparts of each torch API, per family (classic or mint) and MindSpore "
                       "version range [since, until).",
        "fts_table": "targets_fts", "fts_pk": "rowid", "facets": ["family", "relation", "source"],
        "columns": {
            "torch": "the torch API (mappings.torch)", "family": "classic (mindspore.nn/ops) or mint",
            "seq": "order among the entry's targets", "api": "MindSpore API; empty when there is no equivalent",
            "relation": "how the target relates to the torch API (see docs/index.md)",
            "auto": "1 when calls can be rewritten mechanically", "since": "first MindSpore version "
            "(inclusive)", "until": "first MindSpore version it no longer applies to (exclusive)",
            "note": "Markdown note", "params": "JSON parameter table: torch, ms, kind, defaults, transform",
            "provenance": "JSON list of {kind, ref, note}", "example": "JSON {torch, mindspore} code",
            "ms_signature": "signature in the newest MindSpore snapshot", "source": "curated or derived"},
    },
    "caveats": {
        "description": "Behavioural differences worth a person's attention, with severity and version ranges.",
        "fts_table": "caveats_fts", "fts_pk": "rowid", "facets": ["severity", "topic"], "label_column": "title",
        "columns": {
            "id": "stable slug", "title": "one line", "body": "Markdown", "severity": "info, warning or error",
            "topic": "modes, padding, init, autodiff, optimizers ...", "applies_to": "JSON list of API names",
            "ms_since": "MindSpore versions from (inclusive)", "ms_until": "MindSpore versions until (exclusive)",
            "torch_since": "torch versions from (inclusive)", "torch_until": "torch versions until (exclusive)",
            "provenance": "JSON list of {kind, ref, note}", "claims": "JSON list of machine-checkable claims",
            "origin": "data file and line the caveat was read from"},
    },
    "mapping_caveats": {"description": "Which caveats concern which torch API.",
                        "columns": {"torch": "mappings.torch", "caveat_id": "caveats.id",
                                    "seq": "order on the entry"}},
    "apis": {"description": "Every API in the torch and MindSpore signature snapshots.",
             "facets": ["framework", "version", "kind"],
             "columns": {"name": "fully qualified name", "framework": "torch or mindspore",
                         "version": "framework version of the snapshot", "kind": "class, function ...",
                         "signature": "inspect.signature text", "params": "JSON [name, kind, default]",
                         "namespace": "namespace bucket"}},
    "meta": {"description": "Build facts: schema version, data fingerprint, MindSpore versions covered."},
    "origins": {"description": "Where each curated entry was read from.",
                "columns": {"ref": "mapping:<torch name> or caveat:<id>", "origin": "data file and line"}},
    "search": {"description": "The index behind msmap search (mappings and caveats in one FTS5 table)."},
    "checks": {"description": "Results of msmap check: claims verified against installed libraries."},
    "probes": {"description": "Results of msmap probe: executable comparisons of torch and MindSpore."},
}


def cache_dir(db: Path) -> Path:
    return msmap_cache_dir() / f"serve-{hashlib.sha1(str(db.resolve()).encode()).hexdigest()[:12]}"


def _stamp(db: Path) -> str:
    st = db.stat()
    return f"{db.resolve()}\0{st.st_size}\0{st.st_mtime_ns}"


def served_copy(db: Path, folder: Path | None = None) -> Path:
    """``<folder>/msmap.sqlite``: the DB plus the FTS tables above, refreshed when ``db`` changes."""
    folder = folder or cache_dir(db)
    folder.mkdir(parents=True, exist_ok=True)
    dest, stamp_file = folder / f"{DB_NAME}.sqlite", folder / "source.stamp"
    stamp = _stamp(db)
    if dest.is_file() and stamp_file.is_file() and stamp_file.read_text(encoding="utf-8") == stamp:
        return dest
    fd, tmp = tempfile.mkstemp(prefix=".serve-", suffix=".sqlite", dir=folder)
    os.close(fd)
    src, out = sqlite3.connect(read_only_uri(db), uri=True), sqlite3.connect(tmp)
    try:
        src.backup(out)
        out.executescript(FTS_SQL)
        out.commit()
    finally:
        src.close()
        out.close()
    os.replace(tmp, dest)
    stamp_file.write_text(stamp, encoding="utf-8")
    return dest


def metadata(db: Path) -> dict[str, Any]:
    """Datasette metadata for the served copy: titles, descriptions, facets and search set-up."""
    conn = sqlite3.connect(read_only_uri(db), uri=True)
    try:
        present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall()) if "meta" in present else {}
        n = conn.execute("SELECT count(*) FROM mappings").fetchone()[0] if "mappings" in present else 0
    finally:
        conn.close()
    versions = ", ".join(json.loads(meta.get("ms_versions") or "[]")) or "none recorded"
    tables = {name: spec for name, spec in TABLES.items() if name in present}
    for name, spec in tables.items():
        if spec.get("fts_table") and spec["fts_table"] not in present:  # served without the extra indexes
            tables[name] = {k: v for k, v in spec.items() if k not in ("fts_table", "fts_pk")}
    return {
        "title": "msmap: torch → MindSpore API mappings",
        "description": f"{n} torch APIs with their MindSpore counterparts, caveats and parameter tables "
                       f"(torch {meta.get('torch_version') or '?'}; MindSpore {versions}). Read-only. "
                       "Use the search box on mappings, targets or caveats.",
        "databases": {DB_NAME: {"tables": tables}},
    }


def write_metadata(db: Path, folder: Path) -> Path:
    path = folder / "metadata.json"
    text = json.dumps(metadata(db), indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path
