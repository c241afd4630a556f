"""The pygls protocol, adjusted for msmap through pygls' documented extension points
(``lsp_method`` handlers of a ``LanguageServerProtocol`` subclass).

- Positions are always UTF-16 (the engine's ``Position.character`` unit), whatever
  encodings a client offers.
- Open documents live in ``lsp.documents.DocumentStore`` (engine ``Document``s with an
  incrementally re-parsed tree), so pygls' own copy of every text is not kept as well.
"""
from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method


def lsp_range(span: Any) -> types.Range:
    """An engine ``Range`` (UTF-16 columns) as an LSP range."""
    return types.Range(start=types.Position(line=span.start.line, character=span.start.character),
                       end=types.Position(line=span.end.line, character=span.end.character))


class MsmapProtocol(LanguageServerProtocol):
    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        general = params.capabilities.general
        if general is not None and general.position_encodings:
            general.position_encodings = [types.PositionEncodingKind.Utf16]
        return (yield from super().lsp_initialize(params))

    def user_handler(self, method: str, params: Any):
        """The server's own handler of ``method``, without pygls' document bookkeeping."""
        handler = self.fm.features.get(method)
        if handler is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams):
        yield from self.user_handler(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        yield from self.user_handler(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams):
        yield from self.user_handler(types.TEXT_DOCUMENT_DID_CLOSE, params)
