"""The pygls protocol, adjusted for msmap.

- Positions are always UTF-16 (the engine's ``Position.character`` unit), whatever
  encodings a client offers.
- Open documents live in ``lsp.documents.DocumentStore`` (engine ``Document``s with an
  incrementally re-parsed tree), so pygls' own copy of every text is not kept as well.
- The answer to ``initialize`` is remembered for the next start (``lsp.earlystart``), and not
  sent again when the early start already gave it.
"""
from __future__ import annotations

import json
import logging
from typing import Any

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method


def lsp_range(span: Any) -> types.Range:
    """An engine ``Range`` (UTF-16 columns) as an LSP range."""
    return types.Range(start=types.Position(line=span.start.line, character=span.start.character),
                       end=types.Position(line=span.end.line, character=span.end.character))


class MsmapProtocol(LanguageServerProtocol):
    early: Any = None  # the ``lsp.earlystart.Handover`` of this session, if any
    _initialize_id: Any = None

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        self._initialize_id = self.msg_id
        general = params.capabilities.general
        if general is not None and general.position_encodings:
            general.position_encodings = [types.PositionEncodingKind.Utf16]
        return (yield from super().lsp_initialize(params))

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        early = self.early
        if early is not None and self._initialize_id is not None and msg_id == self._initialize_id:
            self._initialize_id = None
            if error is None and early.key:
                from lsp import earlystart

                earlystart.remember(early.key, json.loads(json.dumps(result, default=self._serialize_message)))
            if early.answered is not None and early.answered == msg_id:
                if error is not None:
                    logging.getLogger(__name__).error("initialize failed after the early start answered it: %s", error)
                return  # the early start gave this answer already
        super()._send_response(msg_id, result, error)

    def _user(self, method: str, params):
        handler = self.fm.features.get(method)
        if handler is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams):
        yield from self._user(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        yield from self._user(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams):
        yield from self._user(types.TEXT_DOCUMENT_DID_CLOSE, params)
