"""Hover cards, `msmap.lookup` and `msmap.search`: what the knowledge base says about a name."""
from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types

from kb.analysis.msnames import mindspore_name_at
from lsp.documents import position_before, range_after
from lsp.protocol import lsp_range
from lsp.settings import ServerSettings

FIRST_WAIT = 5.0  # seconds a hover on a just-opened document waits for its first analysis

async def hover(publisher: Any, documents: Any, kb: Any, uri: str, line: int, character: int,
                settings: ServerSettings, kind: types.MarkupKind = types.MarkupKind.Markdown) -> types.Hover | None:
    """The card of the torch (or MindSpore) name under the cursor, from the last analysis of the document,
    never waiting for a newer one: the cursor is mapped through the edits made since to that analysis's text,
    and the name's range back to the latest text. A place an edit made or touched since gets no card (no card
    is better than a wrong one). A document with no analysis at all (just opened) waits for its first one, at most
    ``FIRST_WAIT`` seconds: there is nothing older to answer from."""
    snapshot = publisher.snapshots.get(uri)
    if snapshot is None:
        try:
            snapshot = await asyncio.wait_for(asyncio.shield(publisher.current(uri)), FIRST_WAIT)
        except asyncio.TimeoutError:
            return None
    if snapshot is None or snapshot.analysis is None:
        return None
    edits = documents.edits(uri)
    at = position_before(edits, snapshot.version, line, character)
    if at is None:
        return None
    offset = snapshot.lines.offset(*at)
    use = snapshot.analysis.use_at(offset)
    if use is not None:
        span = _moved(edits, snapshot.version, use.range)
        if span is None:
            return None
        from lsp import markdown  # the cards are not needed before the first hover: kept off the start-up path

        text = markdown.mapping_card(use.record, settings.target_family, settings.mindspore_version, settings.device)
        return _hover(text, span, kind)
    if b"mindspore" not in snapshot.source:
        return None
    found = mindspore_hover(snapshot.document, kb, offset, settings, kind)
    if found is None or found.range is None:
        return found
    span = _moved(edits, snapshot.version, found.range)
    if span is None or not isinstance(found.contents, types.MarkupContent):
        return None
    return _hover(found.contents.value, span, kind)


def _moved(edits: list[Any], since: int, span: Any) -> types.Range | None:
    """A range of the text of version ``since`` in the latest text; None if an edit touched it since."""
    found = range_after(edits, since, span)
    if found is None:
        return None
    (line, character), (end_line, end_character) = found
    return types.Range(start=types.Position(line=line, character=character),
                       end=types.Position(line=end_line, character=end_character))


def mindspore_hover(document: Any, kb: Any, offset: int, settings: ServerSettings,
                    kind: types.MarkupKind) -> types.Hover | None:
    """The card of the MindSpore name under the cursor (migrated code) in ``document``."""
    from lsp import markdown

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


def _hover(text: str, span: types.Range | None, kind: types.MarkupKind) -> types.Hover:
    return types.Hover(contents=types.MarkupContent(kind=kind, value=text), range=span)


MAX_RESULTS = 200  # msmap.search's limit, at most
MAX_QUERY = 300  # characters of a query that are searched (a name is at most about 80)


def search_limit(value: Any) -> int:
    """msmap.search's second argument: a whole number from 1 to MAX_RESULTS (default 20); anything
    else is answered with InvalidParams."""
    if value is None:
        return 20
    if type(value) is not int or not 1 <= value <= MAX_RESULTS:
        from pygls.exceptions import JsonRpcInvalidParams

        raise JsonRpcInvalidParams(f"msmap.search: the limit must be a whole number from 1 to {MAX_RESULTS}, "
                                   f"got {str(value)[:40]}")
    return value


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
