"""Hover cards, `msmap.lookup` and `msmap.search`: what the knowledge base says about a name."""
from __future__ import annotations

from typing import Any

from lsprotocol import types

from kb.analysis.msnames import mindspore_name_at
from lsp.protocol import lsp_range
from lsp.settings import ServerSettings


def hover_at(analysis: Any, kb: Any, offset: int, settings: ServerSettings,
             kind: types.MarkupKind = types.MarkupKind.Markdown) -> types.Hover | None:
    from lsp import markdown  # the cards are not needed before the first hover: kept off the start-up path

    document = analysis.document
    use = analysis.use_at(offset)
    if use is not None:
        text = markdown.mapping_card(use.record, settings.target_family, settings.mindspore_version,
                                     settings.device)
        return _hover(text, lsp_range(use.range), kind)
    found = mindspore_name_at(document, offset)
    if found is None:
        return None
    name, start, end = found
    record = kb.reverse(name)
    if record is None:
        return None
    text = markdown.reverse_card(record, settings.mindspore_version)
    return _hover(text, lsp_range(document.lines.range(start, end)), kind)


def card_for(kb: Any, name: str, settings: ServerSettings) -> str | None:
    """``msmap.lookup``: the card of a typed name (torch or MindSpore), or None."""
    from lsp import markdown

    canonical = kb.resolve(name)
    if canonical is None:
        return None
    if canonical.startswith("mindspore"):
        record = kb.reverse(canonical)
        return markdown.reverse_card(record, settings.mindspore_version) if record else None
    record = kb.mapping(canonical)
    return markdown.mapping_card(record, settings.target_family, settings.mindspore_version,
                                 settings.device) if record else None


def _hover(text: str, span: types.Range, kind: types.MarkupKind) -> types.Hover:
    return types.Hover(contents=types.MarkupContent(kind=kind, value=text), range=span)


def search_results(kb: Any, query: str, limit: int, engine_settings: Any) -> list[dict[str, Any]]:
    """``msmap.search``: mapping hits as ``{name, relation, summary}``, best first; the relation is
    that of the target the engine would choose with the current settings."""
    from kb.analysis import choose_target

    out = []
    for hit in kb.search(query, limit * 2):
        record = kb.mapping(hit["ref"]) if hit.get("kind") == "mapping" else None
        if record is None:
            continue
        choice = choose_target(record, engine_settings)
        out.append({"name": hit["ref"], "relation": choice.relation if choice else None,
                    "summary": hit.get("summary") or ""})
        if len(out) == limit:
            break
    return out
