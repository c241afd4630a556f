"""Open documents: engine ``Document``s kept in step with the editor's edits.

Each LSP content change is applied to the engine document (range edits re-parse
incrementally), and the document's ``version`` follows the editor's, so work computed
for an older version can be recognised and dropped.
"""
from __future__ import annotations

from typing import Iterable, Optional

from kb.analysis import Document


PYTHON_SUFFIXES = (".py", ".pyi")


def is_python(language_id: object, uri: object) -> bool:
    """Whether an opened document is one the server analyses."""
    return language_id == "python" or (isinstance(uri, str) and uri.endswith(PYTHON_SUFFIXES))


class DocumentStore:
    def __init__(self) -> None:
        self._docs: dict[str, Document] = {}

    def __contains__(self, uri: str) -> bool:
        return uri in self._docs

    def __iter__(self):
        return iter(list(self._docs.values()))

    def get(self, uri: str) -> Optional[Document]:
        return self._docs.get(uri)

    def open(self, uri: str, text: str, version: int) -> Document:
        doc = self._docs[uri] = Document(text, uri=uri, version=version)
        return doc

    def change(self, uri: str, version: int, changes: Iterable[object]) -> Optional[Document]:
        doc = self._docs.get(uri)
        if doc is None:
            return None
        for change in changes:
            span = getattr(change, "range", None)
            text = getattr(change, "text", "")
            if span is None:
                doc.update(text, version)
            else:
                doc.apply_change((span.start.line, span.start.character), (span.end.line, span.end.character),
                                 text, version)
        doc.version = version
        return doc

    def close(self, uri: str) -> None:
        self._docs.pop(uri, None)
