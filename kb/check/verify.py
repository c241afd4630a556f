"""Judge each ``Item`` against the live report: ``pass``, ``drift`` or ``not_checkable``.

Defaults are compared by what they mean (``kb.defaults``: ``0.5`` == ``5e-1``, but
``True`` != ``1``).
"""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kb.check.claims import Item
from kb.defaults import same_default
from kb.derive import compare_params
from kb.introspect.describe import format_signature
from kb.versions import version_key

Live = dict[str, dict[str, Any]]  # framework -> {api name -> live entry}


def _params(entry: dict) -> dict[str, list] | None:
    if entry.get("sig_source", "none") == "none" and not entry.get("params"):
        return None
    return {row[0]: row for row in entry.get("params") or []}


def _has_var_keyword(params: dict[str, list]) -> bool:
    return any(row[1] == "VAR_KEYWORD" for row in params.values())


class Verifier:
    """Holds the live reports and the versions; ``judge(item)`` gives (result, detail)."""

    def __init__(self, live: Live, versions: dict[str, str | None],
                 baseline: Callable[[str, str], tuple | None] | None = None) -> None:
        self.live = live
        self.versions = versions
        self.baseline = baseline  # (torch api, ms api) -> (relation, params) from the snapshots
        self.compare_params = compare_params  # replaceable in tests

    def _lib(self, api: str) -> str:
        fw = api.split(".")[0]
        return f"{fw} {self.versions.get(fw)}"

    def _entry(self, api: str) -> dict | None:
        fw = api.split(".")[0]
        if self.versions.get(fw) is None:
            return None
        return self.live.get(fw, {}).get(api, {"exists": False})

    def judge(self, item: Item) -> tuple[str, str]:
        entry = self._entry(item.api)
        if entry is None:
            return "not_checkable", f"{item.api.split('.')[0]} is not installed"
        lib = self._lib(item.api)
        if item.expect == "absent":
            return ("pass", f"not found in {lib}") if not entry["exists"] else (
                "drift", f"{item.api} exists in {lib} ({entry.get('kind')}{entry.get('signature') or ''})")
        if not entry["exists"]:
            return _unavailable(item.api, entry, item.requires, lib) or ("drift", f"{item.api} not found in {lib}")
        if item.expect == "exists":
            return "pass", f"found in {lib} ({entry.get('kind')})"
        if item.expect == "relation":
            return self._relation(item, entry)
        params = _params(entry)
        if params is None:
            return "not_checkable", f"{item.api} has no readable signature in {lib}"
        row = params.get(item.param or "")
        where, signature = "", entry.get("signature")
        overloads = entry.get("overloads") or []
        if row is None:  # an overloaded builtin: the parameter may live in another overload
            for rows in overloads:
                row = next((r for r in rows if r[0] == item.param), None)
                if row is not None:
                    where, signature = " (in another overload)", format_signature(rows)
                    break
        omittable = any(all(r[0] != item.param for r in rows) for rows in overloads)
        if item.expect == "lacks_param":
            if row is None:
                return "pass", f"no parameter {item.param} in {lib}: {entry.get('signature')}"
            return "drift", f"{lib} has parameter {item.param}: {entry.get('signature')}"
        if row is None:
            if _has_var_keyword(params):
                return ("not_checkable",
                        f"{item.param} not named, but {item.api} takes **kwargs: {entry.get('signature')}")
            return "drift", f"{lib} has no parameter {item.param}: {entry.get('signature')}"
        if item.value is None:
            return "pass", f"found in {lib}{where}" + (f" (default {row[2]})" if row[2] is not None else "")
        if row[2] is None and omittable and same_default(item.value, "None"):
            return "pass", f"{item.param} is optional in {lib}: an overload omits it"
        if row[2] is None:
            return "drift", f"{item.param} is required (no default) in {lib}: {signature}"
        if same_default(item.value, row[2]):
            return "pass", f"default {row[2]} in {lib}{where}"
        return "drift", f"default of {item.param} is {row[2]} in {lib}, not {item.value}"

    def _relation(self, item: Item, ms_entry: dict) -> tuple[str, str]:
        torch_entry = self._entry(item.torch_api or "")
        if torch_entry is None:
            return "not_checkable", f"{(item.torch_api or 'torch').split('.')[0]} is not installed"
        if not torch_entry["exists"]:
            lib = self._lib(item.torch_api or "torch")
            return (_unavailable(item.torch_api or "", torch_entry, item.requires, lib)
                    or ("drift", f"{item.torch_api} not found in {lib}"))
        if _params(torch_entry) is None or _params(ms_entry) is None:
            return "not_checkable", "no readable signature on one side"
        rel, params = self.compare_params(torch_entry, ms_entry)
        rel, params = _plain(rel), [_plain(p) for p in params]
        stored = item.stored
        if stored.get("source") == "derived":
            base_rel, base_params = stored["relation"], stored.get("params") or None
        else:
            base = self.baseline(item.torch_api or "", item.api) if self.baseline else None
            if base is None:
                return "not_checkable", "no snapshot of both signatures to compare with"
            base_rel, base_params = None, base[1]  # a curated relation is the curator's call
        changes = []
        if base_rel is not None and rel != base_rel:
            changes.append(f"relation is now {rel} (recorded: {base_rel})")
        if base_params is not None:
            changes.extend(param_drift(base_params, params))
        if changes:
            return "drift", "; ".join(changes)
        return "pass", f"compare_params: {rel}"


NEEDS = "needs "  # the detail of a name that cannot be checked without a package that is not installed


def _unavailable(api: str, entry: dict, requires: str | None, lib: str) -> tuple[str, str] | None:
    """``not_checkable`` for a name missing only because a package it needs is not installed: an optional
    dependency whose import failed on the way (``missing_module``, found by ``kb.check.live``), or the
    package the entry declares (``torch_requires``: a device plugin such as torch_npu adds ``torch.npu``).
    None when the name should be there: then its absence is drift."""
    import importlib.util

    package = entry.get("missing_module")
    if package is None and requires and importlib.util.find_spec(requires.split(".")[0]) is None:
        package = requires
    if package is None:
        return None
    return "not_checkable", f"{NEEDS}{package}, which is not installed: {api} is not in {lib} without it"


def _plain(x: Any) -> Any:
    if hasattr(x, "model_dump"):
        return x.model_dump()
    return getattr(x, "value", x)


def param_drift(before: list[dict], now: list[dict]) -> list[str]:
    """Human-readable parameter changes between two compare_params results."""
    out = []
    for side in ("torch", "ms"):
        old = {p[side] for p in before if p.get(side)}
        new = {p[side] for p in now if p.get(side)}
        label = "torch" if side == "torch" else "mindspore"
        if new - old:
            out.append(f"{label} parameter(s) added: {', '.join(sorted(new - old))}")
        if old - new:
            out.append(f"{label} parameter(s) removed: {', '.join(sorted(old - new))}")
    pairs_old = {(p.get("torch"), p.get("ms")) for p in before if p.get("torch") and p.get("ms")}
    pairs_new = {(p.get("torch"), p.get("ms")) for p in now if p.get("torch") and p.get("ms")}
    renamed = sorted(f"{t}: {m_old} -> {m}" for t, m in pairs_new - pairs_old
                     for t_old, m_old in pairs_old - pairs_new if t == t_old)
    if renamed:
        out.append("renamed: " + ", ".join(renamed))
    return out


def snapshot_baseline(kb, ms_version: str) -> Callable[[str, str], tuple | None]:
    """compare_params over the DB's snapshot entries (the ones the build used)."""
    versions = {r[0]: r[1] for r in kb.conn.execute("SELECT DISTINCT framework || ':' || version, version FROM apis")}
    ms_vs = sorted((v for k, v in versions.items() if k.startswith("mindspore:")), key=version_key)
    torch_vs = sorted((v for k, v in versions.items() if k.startswith("torch:")), key=version_key)
    ms_v = ms_version if ms_version in ms_vs else (ms_vs[-1] if ms_vs else None)
    torch_v = torch_vs[-1] if torch_vs else None

    def entry(name: str, version: str | None) -> dict | None:
        row = kb.conn.execute("SELECT kind, signature, params FROM apis WHERE name=? AND version=?",
                              (name, version)).fetchone()
        if row is None:
            return None
        return {"kind": row[0], "signature": row[1], "params": json.loads(row[2] or "[]"), "sig_source": "snapshot"}

    def baseline(torch_api: str, ms_api: str) -> tuple | None:
        t, m = entry(torch_api, torch_v), entry(ms_api, ms_v)
        if not t or not m or not t["params"] or not m["params"]:
            return None
        rel, params = compare_params(t, m)
        return _plain(rel), [_plain(p) for p in params]

    return baseline
