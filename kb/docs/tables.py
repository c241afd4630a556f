"""One table page per torch namespace, and the coverage figures the index shows."""
from __future__ import annotations

from typing import Any

from kb.docs import corpus as cp
from kb.docs import links, words
from kb.docs.corpus import Corpus
from kb.views import param_differs

FAMILIES = ("classic", "mint")


def target_parts(rec: dict[str, Any], family: str, latest: str | None) -> tuple[list[str], str] | None:
    """(MindSpore names, empty for no equivalent; version qualifier) of one family for the newest
    version, falling back to the family's last target when none is current; None without targets."""
    shown = cp.current(rec, family, latest) or cp.family_targets(rec, family)[-1:]
    if not shown:
        return None
    apis = list(dict.fromkeys(t["api"] for t in shown if t.get("api")))
    rng = shown[0].get("ms_versions")
    return apis, links.versions(rng) if len(shown) == 1 and links.bounded(rng) else ""


def proof_status(rec: dict[str, Any], family: str, latest: str | None) -> str:
    """Whether msmap rewrites this family's current target automatically, and whether an executed
    rewrite probe (``msmap probe --rewrites``) proves it: 'auto, proven' / 'auto, not proven' /
    'rewrite probe failed'; '' for a manual conversion."""
    shown = [t for t in cp.current(rec, family, latest) if t.get("api")]
    results = {(t.get("proof") or {}).get("result") for t in shown}
    if any(t.get("auto") for t in shown):
        auto = [t for t in shown if t.get("auto")]
        proven = all((t.get("proof") or {}).get("result") == "proven" for t in auto)
        return "auto, proven" if proven else "auto, not proven"
    return "rewrite probe failed" if "failed" in results else ""


def target_cell(rec: dict[str, Any], family: str, latest: str | None) -> str:
    parts = target_parts(rec, family, latest)
    if parts is None:
        return ""
    apis, qualifier = parts
    text = ", ".join(links.code(a) for a in apis) if apis else "no equivalent"
    extra = ", ".join(p for p in (qualifier, proof_status(rec, family, latest)) if p)
    return f"{text} ({extra})" if extra else text


def relations(rec: dict[str, Any], latest: str | None) -> list[tuple[str, str]]:
    """[(family or '' when every family agrees, relation)] for the current targets."""
    per = {fam: list(dict.fromkeys(t["relation"] for t in cp.current(rec, fam, latest))) for fam in FAMILIES}
    per = {fam: rels for fam, rels in per.items() if rels}
    if not per:
        return [("", "no_equivalent" if not rec["targets"] else "not current")]
    if len({tuple(r) for r in per.values()}) == 1:
        return [("", r) for r in next(iter(per.values()))]
    return [(fam, r) for fam, rels in per.items() for r in rels]


def relation_cell(rec: dict[str, Any], latest: str | None) -> str:
    pairs = relations(rec, latest)
    if all(not fam for fam, _ in pairs):
        return ", ".join(r for _, r in pairs)
    return " · ".join(f"{fam}: {r}" for fam, r in pairs)


def key_note(rec: dict[str, Any], latest: str | None) -> str:
    """Markdown: the advice, else the first current note, else what changes in the parameters."""
    text = rec.get("advice") or next(
        (t["note"] for fam in FAMILIES for t in cp.current(rec, fam, latest) if t.get("note")), "")
    return links.short_text(text) if text else param_summary(rec, latest)


def notes_cell(rec: dict[str, Any], latest: str | None) -> str:
    parts = [key_note(rec, latest)]
    caveats = rec.get("caveats") or []
    if caveats:
        parts.append(f"{words.plural(len(caveats), 'caveat')} ({cp.worst_severity(caveats)})")
    return links.cell(" — ".join(p for p in parts if p))


def param_summary(rec: dict[str, Any], latest: str | None, limit: int = 3) -> str:
    """What changes between the signatures, e.g. 'in_features → in_channels; inplace unsupported'."""
    items: list[str] = []
    for fam in FAMILIES:
        for t in cp.current(rec, fam, latest):
            for p in t.get("params") or []:
                kind, tn, ms = p["kind"], p.get("torch"), p.get("ms")
                if kind == "renamed":
                    items.append(f"`{tn}` → `{ms}`")
                elif kind == "transformed":
                    items.append(f"`{tn}` → `{ms}` (transformed)")
                elif kind in ("dropped", "unsupported"):
                    items.append(f"`{tn}` {kind}")
                elif kind == "same" and param_differs(p):
                    items.append(f"`{tn}` default {links.code(str(p.get('torch_default')))} "
                                 f"vs {links.code(str(p.get('ms_default')))}")
    items = list(dict.fromkeys(items))
    more = len(items) - limit
    return "; ".join(items[:limit]) + (f"; {more} more" if more > 0 else "")


def render_namespace(ns: str, records: list[dict[str, Any]], corpus: Corpus) -> str:
    page = links.table_path(ns)
    counts = {k: 0 for k in words.COVERAGE}
    for rec in records:
        counts[cp.coverage(rec, corpus.latest)] += 1
    ver = f"MindSpore {corpus.latest}" if corpus.latest else "the newest MindSpore version recorded"
    out = [
        f"# {links.code(ns)}", "",
        f"[Index]({links.rel(page, links.INDEX)}) · [Caveats]({links.rel(page, links.CAVEATS)}) · "
        f"[Searchable table]({links.rel(page, links.HTML)})", "",
        f"{words.plural(len(records), 'torch API')}: {counts['mapped']} mapped, {counts['partial']} partial, "
        f"{counts['none']} without equivalent. Targets shown are those for {ver}; "
        "names link to a detail page where there is more to say. \"auto, proven\": msmap rewrites the call "
        "automatically and the code it emits ran next to torch and matched (`msmap probe --rewrites`); "
        "\"auto, not proven\": rewritten automatically without such a probe yet; \"rewrite probe failed\": "
        "the emitted code gave other results, so the call is left for a human.", "",
        "| torch API | classic MindSpore | mint | relation | key notes |",
        "|---|---|---|---|---|",
    ]
    for rec in records:
        name = links.code(rec["torch"])
        target = corpus.pages.get(rec["torch"])
        first = f"[{name}]({links.rel(page, target)})" if target else name
        cells = [first, target_cell(rec, "classic", corpus.latest), target_cell(rec, "mint", corpus.latest),
                 links.cell(relation_cell(rec, corpus.latest)), notes_cell(rec, corpus.latest)]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def coverage_rows(corpus: Corpus) -> list[dict[str, Any]]:
    """Per namespace (and a final 'total'): entries, mapped, partial, none, per-family counts, verified."""
    rows = []
    for ns, records in corpus.namespaces().items():
        row: dict[str, Any] = {"namespace": ns, "entries": len(records), "verified": 0}
        row.update({k: 0 for k in words.COVERAGE})
        row.update({fam: 0 for fam in FAMILIES})
        for rec in records:
            row[cp.coverage(rec, corpus.latest)] += 1
            row["verified"] += cp.verified(rec, corpus.latest)
            for fam in FAMILIES:
                row[fam] += any(t.get("api") for t in cp.current(rec, fam, corpus.latest))
        rows.append(row)
    total: dict[str, Any] = {"namespace": "total"}
    for key in ("entries", "verified", *words.COVERAGE, *FAMILIES):
        total[key] = sum(r[key] for r in rows)
    return rows + [total]


def share(part: int, whole: int) -> str:
    return f"{round(100 * part / whole)}%" if whole else "—"
