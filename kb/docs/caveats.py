"""``caveats.md``: every caveat, grouped by topic, one heading (and anchor) each."""
from __future__ import annotations

from typing import Any

from kb.docs import links, words
from kb.docs.corpus import Corpus

PAGE = links.CAVEATS
TITLE = "Caveats by topic"


def topics(caveats: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for c in caveats:
        out.setdefault(c.get("topic") or "general", []).append(c)
    for items in out.values():
        items.sort(key=lambda c: (words.SEVERITY_ORDER.index(c["severity"])
                                  if c["severity"] in words.SEVERITY_ORDER else 9, c["id"]))
    return dict(sorted(out.items()))


def topic_heading(topic: str) -> str:
    return f"Topic: {topic}"


def caveat_heading(c: dict[str, Any]) -> str:
    return links.prose(" ".join(c["title"].split()))


def claim_text(cl: dict[str, Any]) -> str:
    api = links.code(cl["api"])
    kind = cl.get("kind")
    if kind == "default":
        return f"the default of {links.code(cl['api'] + '.' + cl['param'])} is {links.code(str(cl['value']))}"
    if kind in ("has_param", "lacks_param"):
        verb = "accepts" if kind == "has_param" else "has no"
        return f"{api} {verb} parameter {links.code(cl['param'])}"
    return f"{api} {'exists' if kind == 'exists' else 'does not exist'}"


def provenance_items(provs: list[dict[str, Any]]) -> list[str]:
    out = []
    for p in provs:
        ref = p["ref"]
        shown = f"[{ref}]({ref})" if ref.startswith(("http://", "https://")) else links.code(ref)
        out.append(f"{p['kind']}: {shown}" + (f" ({links.prose(p['note'])})" if p.get("note") else ""))
    return out


def applies_link(name: str, corpus: Corpus, page: str) -> str:
    target = corpus.pages.get(name)
    return f"[{links.code(name)}]({links.rel(page, target)})" if target else links.code(name)


def render(corpus: Corpus) -> tuple[str, dict[str, str]]:
    """The page, and each caveat id's anchor on it (numbered as the page's headings are)."""
    groups = topics(corpus.caveats)
    out = [f"# {TITLE}", "", f"[Index]({links.rel(PAGE, links.INDEX)}) · "
           f"[Searchable table]({links.rel(PAGE, links.HTML)})", "",
           f"{words.plural(len(corpus.caveats), 'caveat')}: behaviour that differs between torch and MindSpore "
           "in ways a rename cannot hide. Each mapping's detail page links to the ones that concern it.",
           "", "## Severity", ""]
    out += [f"- **{sev}**: {text}" for sev, text in words.SEVERITIES.items()]
    out += ["", "## Topics", ""]
    seen = links.Anchors()
    for h in (TITLE, "Severity", "Topics"):
        seen.add(h)
    toc, anchors = [], {}
    body: list[str] = []
    for topic, items in groups.items():
        anchor = seen.add(topic_heading(topic))
        toc.append(f"- [{topic}](#{anchor}) ({len(items)})")
        body += ["", f"## {topic_heading(topic)}"]
        for c in items:
            anchors[c["id"]] = seen.add(caveat_heading(c))
            for h in links.headings(c["body"]):  # headings inside a body take part in the numbering
                seen.add(h)
            body += _caveat(c, corpus)
    out += toc or ["No caveats recorded yet."]
    out += body
    return "\n".join(out).rstrip() + "\n", anchors


def _caveat(c: dict[str, Any], corpus: Corpus) -> list[str]:
    facts = [f"**{c['severity']}**", links.versions(c.get("ms_versions"))]
    if links.bounded(c.get("torch_versions")):
        facts.append(links.versions(c["torch_versions"], "torch"))
    facts.append(f"id {links.code(c['id'])}")
    lines = ["", f"### {caveat_heading(c)}", "", " · ".join(facts), "", links.prose(c["body"].strip()), ""]
    lines.append("Applies to: " + ", ".join(applies_link(n, corpus, PAGE) for n in c["applies_to"]))
    if c.get("claims"):
        lines += ["", "Checkable claims: " + "; ".join(claim_text(cl) for cl in c["claims"]) + "."]
    checks = corpus.caveat_checks.get(c["id"])
    if checks:
        counts: dict[str, int] = {}
        for row in checks:
            counts[str(row.get("result"))] = counts.get(str(row.get("result")), 0) + 1
        versions = sorted({str(r["ms_version"]) for r in checks if r.get("ms_version")})
        lines += ["", "Checked: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
                  + (f" (MindSpore {', '.join(versions)})" if versions else "")]
    if c.get("provenance"):
        lines += ["", "Source: " + "; ".join(provenance_items(c["provenance"]))]
    return lines
