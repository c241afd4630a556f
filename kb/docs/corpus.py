"""Everything the docs are made from, read once through ``kb.query``, plus the few
judgements every page shares: which targets are current, how an entry counts for
coverage, whether it deserves a detail page, and whether checks verified it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from kb.docs import links, words
from kb.query import KB
from kb.versions import in_range
from kb.views import param_differs

# `result` values written by `msmap check` (kb/check) and `msmap probe` (kb/probes).  Anything
# else (not_checkable, no_cpu_kernel, error, timeout) is no evidence either way.
PASS = {"pass", "holds"}
FAIL = {"drift", "differs"}


@dataclass
class Corpus:
    records: list[dict[str, Any]]  # one per torch API, in reading_order
    caveats: list[dict[str, Any]]  # every caveat, sorted by id
    stats: dict[str, Any]
    latest: str | None  # newest MindSpore version covered (None without snapshots)
    pages: dict[str, str] = field(default_factory=dict)  # torch name -> "api/<file>.md"
    has_results: bool = False  # any check or probe result recorded at all
    caveat_checks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # caveat id -> check rows
    timings: list[dict[str, Any]] = field(default_factory=list)  # recorded op timings (msmap probe --timing)

    def namespaces(self) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for rec in self.records:
            out.setdefault(rec["namespace"], []).append(rec)
        return dict(sorted(out.items(), key=lambda kv: reading_order(kv[0])))


def load(kb: KB) -> Corpus:
    stats = kb.stats()
    records = [rec for name in sorted(kb.torch_names, key=reading_order) if (rec := kb.mapping(name)) is not None]
    versions = stats.get("ms_versions") or []
    corpus = Corpus(records=records, caveats=_all_caveats(kb), stats=stats,
                    latest=versions[-1] if versions else None)
    names = [r["torch"] for r in records if needs_page(r)]
    corpus.pages = {n: links.api_path(f) for n, f in links.api_filenames(names).items()}
    corpus.caveat_checks = {c["id"]: rows for c in corpus.caveats if (rows := kb.checks_for(c["id"]))}
    corpus.has_results = bool(corpus.caveat_checks) or any(results(t) for r in records for t in r["targets"])
    corpus.timings = kb.timings()
    return corpus


def reading_order(name: str) -> tuple[str, str]:
    """Case-insensitive, ties broken by the exact name (torch.abs near torch.Abs, still stable)."""
    return name.casefold(), name


def _all_caveats(kb: KB) -> list[dict[str, Any]]:
    return sorted(kb.caveats(), key=lambda c: c["id"])


def family_targets(rec: dict[str, Any], family: str) -> list[dict[str, Any]]:
    return [t for t in rec["targets"] if t["family"] == family]


def is_current(t: dict[str, Any], latest: str | None) -> bool:
    rng = t.get("ms_versions") or {}
    return _current(latest, rng.get("since"), rng.get("until"))


@lru_cache(maxsize=1024)
def _current(latest: str | None, since: str | None, until: str | None) -> bool:
    return not until if latest is None else in_range(latest, since, until)


def current(rec: dict[str, Any], family: str, latest: str | None) -> list[dict[str, Any]]:
    """Targets of one family that apply to the newest MindSpore version covered."""
    return [t for t in family_targets(rec, family) if is_current(t, latest)]


def coverage(rec: dict[str, Any], latest: str | None) -> str:
    """'mapped', 'partial' or 'none' (see words.COVERAGE)."""
    rels = {t["relation"] for fam in ("classic", "mint") for t in current(rec, fam, latest) if t.get("api")}
    if rels & set(words.CLEAN):
        return "mapped"
    return "partial" if rels else "none"


def needs_page(rec: dict[str, Any]) -> bool:
    """A detail page when there is more to say than the table row does."""
    if "curated" in (rec.get("source") or "") or rec.get("caveats") or rec.get("advice"):
        return True
    for t in rec["targets"]:
        if t["relation"] not in ("consistent", "no_equivalent") or t.get("note") or t.get("example"):
            return True
        if any(param_differs(p) for p in t.get("params") or []):
            return True
    return len({t["family"] for t in rec["targets"]}) < len(rec["targets"])  # version-split targets


def passed(row: dict[str, Any]) -> bool | None:
    """True/False for a recorded check or probe result; None when it is no evidence either way."""
    result = str(row.get("result") or "").strip().lower()
    return True if result in PASS else False if result in FAIL else None


def results(t: dict[str, Any]) -> list[dict[str, Any]]:
    return list(t.get("checks") or []) + list(t.get("probes") or [])


def verified(rec: dict[str, Any], latest: str | None) -> bool:
    """Some current target has a passing check or probe and none of its results failed."""
    for fam in ("classic", "mint"):
        for t in current(rec, fam, latest):
            outcomes = [passed(r) for r in results(t)]
            if True in outcomes and False not in outcomes:
                return True
    return False


def worst_severity(caveats: list[dict[str, Any]]) -> str | None:
    for sev in words.SEVERITY_ORDER:
        if any(c["severity"] == sev for c in caveats):
            return sev
    return None
