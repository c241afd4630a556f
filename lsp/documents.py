"""Open documents: engine ``Document``s kept in step with the editor's edits.

The document's ``version`` follows the editor's at once, so work computed for an older
version can be recognised and dropped.  The text of the changes is kept pending (plain bytes
spliced, no parse) until the document is next needed (``get``): then the engine document is
updated once, with one incremental re-parse for the whole run of changes.  A storm of edits
(one every 2 ms) thus costs one parse per analysis, not one per keystroke.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kb.analysis import Document
from kb.analysis.text import LineIndex, encode

PYTHON_SUFFIXES = (".py", ".pyi")


def is_python(language_id: object, uri: object) -> bool:
    """Whether an opened document is one the server analyses."""
    return language_id == "python" or (isinstance(uri, str) and uri.endswith(PYTHON_SUFFIXES))


class DocumentStore:
    def __init__(self) -> None:
        self._docs: dict[str, Document] = {}
        self._pending: dict[str, bytes] = {}  # uri -> its text after changes not yet given to the document

    def __contains__(self, uri: str) -> bool:
        return uri in self._docs

    def __iter__(self):
        return iter([self.get(uri) for uri in list(self._docs)])

    def get(self, uri: str) -> Document | None:
        """The document, up to date with every change received."""
        doc = self._docs.get(uri)
        pending = self._pending.pop(uri, None)
        if doc is not None and pending is not None:
            doc.update(pending, doc.version)
        return doc

    def version(self, uri: str) -> int | None:
        doc = self._docs.get(uri)
        return None if doc is None else doc.version

    def open(self, uri: str, text: str, version: int) -> Document:
        self._pending.pop(uri, None)
        doc = self._docs[uri] = Document(text, uri=uri, version=version)
        return doc

    def change(self, uri: str, version: int, changes: Iterable[Any]) -> bool:
        """Take the editor's changes (applied when the document is next needed); False if not open."""
        doc = self._docs.get(uri)
        if doc is None:
            return False
        text = self._pending.get(uri, doc.source)
        for change in changes:
            span = getattr(change, "range", None)
            new = encode(getattr(change, "text", ""))
            if span is None:
                text = new
            else:
                lines = LineIndex(text)
                start = lines.offset(span.start.line, span.start.character)
                end = max(start, lines.offset(span.end.line, span.end.character))
                text = text[:start] + new + text[end:]
        self._pending[uri] = text
        doc.version = version
        return True

    def close(self, uri: str) -> None:
        self._docs.pop(uri, None)
        self._pending.pop(uri, None)
