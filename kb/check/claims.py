"""Everything in the built knowledge base that the installed libraries can confirm.

Reads the DB (plain ``sqlite3`` through ``kb.query.KB``), never the YAML, and turns
each fact into an ``Item``:

- ``exists``   — an API named by a mapping, a target, a caveat's ``applies_to`` or a claim;
- ``param``    — a ParamMap parameter exists on its side (with its claimed default, if any);
- ``claim:<kind>`` — a caveat's machine-checkable claim (exists/absent/has_param/lacks_param/default);
- ``relation`` — the signature comparison behind a target is still what ``compare_params`` says.

Only entries whose version range includes the installed version are listed; the
others are counted as ``skipped``.  The same fact reached from several entries is
one item that remembers every entry (for the failure report).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from kb.phrases import claim_text
from kb.query import KB
from kb.versions import in_range


@dataclass
class Item:
    subject: str  # API name, or caveat id for caveat claims
    kind: str  # exists | param | relation | claim:<claim kind>
    claim: str  # human-readable statement being checked
    api: str  # the API to introspect
    param: str | None = None
    value: str | None = None  # expected default text; None = no default claimed
    expect: str = "exists"  # exists | absent | has_param | lacks_param | default | relation
    torch_api: str | None = None  # relation items: the torch side
    requires: str | None = None  # a package the torch name needs besides torch (Mapping.torch_requires)
    stored: dict[str, Any] = field(default_factory=dict)  # relation items: what the DB says
    entries: list[str] = field(default_factory=list)  # where the fact comes from

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.subject, self.kind, self.claim)

    @property
    def side(self) -> str:
        return "torch" if self.api.split(".")[0] == "torch" else "mindspore"


@dataclass
class Plan:
    items: dict[tuple, Item] = field(default_factory=dict)
    skipped: int = 0  # entries outside the installed version range
    origins: dict[str, str] = field(default_factory=dict)

    def add(self, item: Item, entry: str) -> None:
        have = self.items.setdefault(item.key, item)
        if entry not in have.entries:
            have.entries.append(entry)

    def names(self, framework: str) -> list[str]:
        out = {i.api for i in self.items.values()} | {i.torch_api for i in self.items.values() if i.torch_api}
        return sorted(n for n in out if n.split(".")[0] == framework)


def param_claim(api: str, param: str, default: str | None) -> str:
    return f"{api} has parameter {param}" + (f" with default {default}" if default is not None else "")


def _origins(kb: KB) -> dict[str, str]:
    """``mapping:<torch>`` / ``caveat:<id>`` -> ``file:line`` (the build's ``origins`` table, if present)."""
    out = {}
    if kb._has_table("origins"):
        out = {r["ref"]: r["origin"] for r in kb.conn.execute("SELECT ref, origin FROM origins")}
    for r in kb.conn.execute("SELECT id, origin FROM caveats"):
        if r["origin"]:
            out.setdefault("caveat:" + r["id"], r["origin"])
    return out


def plan(kb: KB, ms_version: str, torch_version: str | None) -> Plan:
    p = Plan(origins=_origins(kb))
    _mappings(kb, p, ms_version, torch_version)
    _caveats(kb, p, ms_version, torch_version)
    return p


def _torch_ok(torch_version: str | None, since=None, until=None) -> bool:
    return torch_version is None or in_range(torch_version, since, until)


def _requirement(requires: dict[str, str], api: str) -> str | None:
    """The package a torch name needs: declared on the name or on a module above it (``torch.npu``)."""
    parts = api.split(".")
    return next((requires[".".join(parts[:i])] for i in range(len(parts), 1, -1) if ".".join(parts[:i]) in requires),
                None)


def _mappings(kb: KB, p: Plan, ms_version: str, torch_version: str | None) -> None:
    rows = kb.conn.execute("SELECT * FROM mappings ORDER BY torch").fetchall()
    requires = {m["torch"]: m["torch_requires"] for m in rows if "torch_requires" in m.keys() and m["torch_requires"]}
    removed = set()  # torch names the installed torch is outside the recorded versions of
    for m in rows:
        name = m["torch"]
        where = p.origins.get("mapping:" + name)
        entry = f"mapping {name}" + (f" ({where})" if where else "")
        since, until = (m["torch_since"], m["torch_until"]) if "torch_since" in m.keys() else (None, None)
        if (since or until) and not _torch_ok(torch_version, since, until):
            removed.add(name)
            span = f"[{since or ''}, {until or ''})"
            p.add(Item(name, "removed", f"{name} is not in torch {torch_version} (recorded for torch {span})",
                       name, expect="absent"), entry)
            continue
        p.add(Item(name, "exists", f"{name} exists", name, requires=_requirement(requires, name)), entry)
    rows = kb.conn.execute("SELECT * FROM targets WHERE api IS NOT NULL ORDER BY torch, seq").fetchall()
    for t in rows:
        if not in_range(ms_version, t["since"], t["until"]) or t["torch"] in removed:
            p.skipped += 1
            continue
        torch_name, api = t["torch"], t["api"]
        where = p.origins.get("mapping:" + torch_name) if t["source"] == "curated" else None
        entry = f"{torch_name} -> {api} [{t['family']}, {t['source']}]" + (f" ({where})" if where else "")
        p.add(Item(api, "exists", f"{api} exists", api), entry)
        params = json.loads(t["params"] or "[]")
        for pm in params:
            if pm.get("torch") and pm.get("kind") != "added":
                d = pm.get("torch_default")
                p.add(Item(torch_name, "param", param_claim(torch_name, pm["torch"], d), torch_name,
                           param=pm["torch"], value=d, expect="has_param",
                           requires=_requirement(requires, torch_name)), entry)
            if pm.get("ms") and pm.get("kind") not in ("dropped", "unsupported"):
                d = pm.get("ms_default")
                p.add(Item(api, "param", param_claim(api, pm["ms"], d), api, param=pm["ms"], value=d,
                           expect="has_param"), entry)
        stored = {"relation": t["relation"], "source": t["source"], "params": params}
        p.add(Item(api, "relation", f"signature comparison with {torch_name} is unchanged", api,
                   expect="relation", torch_api=torch_name, stored=stored,
                   requires=_requirement(requires, torch_name)), entry)


def _caveats(kb: KB, p: Plan, ms_version: str, torch_version: str | None) -> None:
    for c in kb.conn.execute("SELECT * FROM caveats ORDER BY id"):
        if not in_range(ms_version, c["ms_since"], c["ms_until"]):
            p.skipped += 1
            continue
        torch_ok = _torch_ok(torch_version, c["torch_since"], c["torch_until"])
        entry = f"caveat {c['id']}" + (f" ({c['origin']})" if c["origin"] else "")
        for name in json.loads(c["applies_to"] or "[]"):
            if name.startswith("torch") and not torch_ok:
                continue
            p.add(Item(name, "exists", f"{name} exists", name), entry)
        for cl in json.loads(c["claims"] or "[]"):
            if cl["api"].startswith("torch") and not torch_ok:
                continue
            p.add(Item(c["id"], "claim:" + cl["kind"], claim_text(cl), cl["api"], param=cl.get("param"),
                       value=cl.get("value"), expect=cl["kind"]), entry)
