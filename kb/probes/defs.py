"""Probe definitions (data/probes/defs/*.yaml) and recorded results (data/probes/results-*.jsonl).

A probe is one of:

- a generated call: ``torch`` / ``ms_api`` are called with ``inputs`` (tensor recipes
  ``{tensor: [shape], dtype, range}`` or literals, positional) and ``torch_kwargs`` /
  ``ms_kwargs``; a class is first built from ``init`` and put in inference mode;
- hand-written code: ``torch_code`` / ``ms_code`` each assign ``out``.

``expect: same`` (outputs equal within ``rtol``/``atol``, same dtypes and shapes) or
``expect: differ``; or a ``check`` expression over the two outputs ``t`` and ``m`` that
is true when the documented behaviour holds.  ``kind`` is ``equivalence`` or ``caveat``.
"""
from __future__ import annotations

import fnmatch
import json
from pathlib import Path
from typing import Any

import yaml

REQUIRED = ("id", "torch", "ms_api", "family", "kind")
RECORD_FIELDS = ("probe", "torch", "ms_api", "family", "kind", "caveat", "ms_version", "torch_version", "device",
                 "result", "detail", "max_abs_diff")


def load_defs(folder: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for path in sorted(folder.glob("*.y*ml")):
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for i, p in enumerate(raw.get("probes") or []):
            missing = [k for k in REQUIRED if not p.get(k)]
            if missing:
                raise ValueError(f"{path}: probe #{i} ({p.get('id', '?')}): missing {', '.join(missing)}")
            if not (p.get("torch_code") is not None and p.get("ms_code") is not None) and "inputs" not in p:
                raise ValueError(f"{path}: probe {p['id']}: needs torch_code+ms_code or inputs")
            if p["id"] in seen:
                raise ValueError(f"{path}: probe {p['id']}: duplicate id (first in {seen[p['id']]})")
            seen[p["id"]] = path.name
            out.append(p)
    return out


def select(probes: list[dict], pattern: str | None) -> list[dict]:
    if not pattern:
        return probes
    pat = pattern if any(c in pattern for c in "*?[") else f"*{pattern}*"
    return [p for p in probes if any(fnmatch.fnmatchcase(p.get(k) or "", pat) for k in ("id", "torch", "ms_api"))]


def results_path(folder: Path, ms_version: str, device: str = "cpu") -> Path:
    return folder / f"results-mindspore-{ms_version}-{device}.jsonl"


def full_rows(results: list[dict], probes: list[dict], versions: dict[str, Any], device: str = "cpu") -> list[dict]:
    by_id = {p["id"]: p for p in probes}
    rows = []
    for r in results:
        p = by_id[r["probe"]]
        row = {"probe": p["id"], "torch": p["torch"], "ms_api": p["ms_api"], "family": p["family"],
               "kind": p["kind"], "caveat": p.get("caveat"), "ms_version": versions.get("mindspore"),
               "torch_version": versions.get("torch"), "device": device, "result": r["result"],
               "detail": (r.get("detail") or "")[:500], "max_abs_diff": r.get("max_abs_diff")}
        rows.append(row)
    return sorted(rows, key=lambda r: r["probe"])


OPTIONAL = ("combos",)  # fields written only where a row has them


def record(rows: list[dict], path: Path, replace_all: bool, fields: tuple[str, ...] = RECORD_FIELDS) -> Path:
    """Write rows sorted by probe id; a partial run (``--only``) updates only its own rows."""
    merged: dict[str, dict] = {}
    if path.exists() and not replace_all:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                merged[r["probe"]] = r
    merged.update({r["probe"]: r for r in rows})
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.stem}.partial"  # never matches the build's *.json* glob
    tmp.write_text("".join(json.dumps({k: merged[p].get(k) for k in fields
                                       if k not in OPTIONAL or merged[p].get(k) is not None},
                                      ensure_ascii=False) + "\n" for p in sorted(merged)), encoding="utf-8")
    tmp.replace(path)
    return path
