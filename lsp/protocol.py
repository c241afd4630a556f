"""The pygls protocol, adjusted for msmap through pygls' documented extension points
(``lsp_method`` handlers of a ``LanguageServerProtocol`` subclass).

- Positions are always UTF-16 (the engine's ``Position.character`` unit), whatever
  encodings a client offers.
- Open documents live in ``lsp.documents.DocumentStore`` (engine ``Document``s with an
  incrementally re-parsed tree), so pygls' own copy of every text is not kept as well.
- Every request is answered.  A request pygls cannot read (missing or wrong-typed params, a
  negative or huge position), with an id that is not a string or an integer, or arriving after
  ``shutdown`` is read as a request for ``REJECTED`` carrying the error; the server's handler of
  ``REJECTED`` raises it, and pygls answers it like any handler's error (``InvalidParams``,
  ``InvalidRequest``).  Notifications after ``shutdown`` are dropped; ``exit`` ends the process
  with 0 after ``shutdown`` and 1 without, as the LSP says.
"""
from __future__ import annotations

import asyncio
import inspect
import logging
import sys
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, LanguageServerProtocol, default_converter
from pygls.protocol.language_server import lsp_method

log = logging.getLogger(__name__)
REJECTED = "$/msmap/rejected"  # a request answered with the error it carries (see above)
DROPPED = "$/msmap/dropped"  # a notification that arrived after shutdown


def lsp_range(span: Any) -> types.Range:
    """An engine ``Range`` (UTF-16 columns) as an LSP range."""
    return types.Range(start=types.Position(line=span.start.line, character=span.start.character),
                       end=types.Position(line=span.end.line, character=span.end.character))


def strict_str(value: Any, _: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def converter() -> Any:
    """pygls' converter, except that a string field takes only a string (not ``str(17)``), an error
    response keeps ``"id": null`` (JSON-RPC's answer to a request whose id could not be read), and
    published diagnostics may already be JSON objects."""
    found = default_converter()
    found.register_structure_hook(str, strict_str)
    plain = found.get_unstructure_hook(types.ResponseErrorMessage)

    def error_message(message: types.ResponseErrorMessage) -> dict[str, Any]:
        return {"id": None, **plain(message)}

    found.register_unstructure_hook(types.ResponseErrorMessage, error_message)
    plain_diagnostic = found.get_unstructure_hook(types.Diagnostic)

    def publish_params(params: types.PublishDiagnosticsParams) -> dict[str, Any]:
        """Diagnostics the server built in their JSON form (``lsp.diagnostics.DiagnosticCache.payload``)
        are sent as they are; lsprotocol objects are unstructured as usual."""
        out: dict[str, Any] = {"uri": params.uri, "diagnostics": [
            d if isinstance(d, dict) else plain_diagnostic(d) for d in params.diagnostics]}
        if params.version is not None:
            out["version"] = params.version
        return out

    found.register_unstructure_hook(types.PublishDiagnosticsParams, publish_params)
    return found


def valid_id(value: Any) -> bool:
    return type(value) in (int, str)


class MsmapProtocol(LanguageServerProtocol):
    shut_down = False  # a ``shutdown`` request was received

    def structure_message(self, data: dict[str, Any]) -> Any:
        if "jsonrpc" not in data or not isinstance(data.get("method"), str):
            return super().structure_message(data)  # nested objects, responses to our requests
        method, is_request = data["method"], "id" in data
        if is_request and not valid_id(data["id"]):
            return self.rejected(None, JsonRpcInvalidRequest(f"the id of a request must be a string or an integer, "
                                                             f"got {type(data['id']).__name__}"))
        if self.shut_down and method != types.EXIT:
            if not is_request:
                return JsonRPCNotification(method=DROPPED, jsonrpc="2.0", params=None)
            return self.rejected(data["id"], JsonRpcInvalidRequest(f"{method}: the server is shut down"))
        if method == types.SHUTDOWN and is_request:
            self.shut_down = True
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if not is_request:
                raise  # pygls logs it; a notification has no answer
            why = error.__cause__ or error
            return self.rejected(data["id"], JsonRpcInvalidParams(f"{method}: invalid params ({why})"))

    @staticmethod
    def rejected(msg_id: Any, error: JsonRpcException) -> JsonRPCRequestMessage:
        return JsonRPCRequestMessage(id=msg_id, method=REJECTED, jsonrpc="2.0", params=error)

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args):
        """pygls' own handler stops reading requests; ours answers them with ``InvalidRequest`` instead."""
        self.shut_down = True
        if (handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield handler, args, None
        return None

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args):
        if (handler := self.fm.features.get(types.EXIT)) is not None:
            yield handler, args, None
        code = 0 if self.shut_down else 1
        if self.writer is not None:
            closed = self.writer.close()
            if inspect.isawaitable(closed):
                asyncio.ensure_future(closed).add_done_callback(lambda _: sys.exit(code))
                return
        sys.exit(code)

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
