"""The msmap language server: one short handler per LSP method, on one server object.

The work happens elsewhere: ``kb.analysis`` finds torch uses and plans fixes, ``kb.query``
answers lookups, and the helper modules here translate to LSP (``diagnostics``,
``lookups``, ``actions``, ``markdown``).  Every handler is guarded: an exception is logged
and an empty result returned, so a half-typed file never takes the server down.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from kb import __version__
from lsp import actions, lookups
from lsp.diagnostics import DiagnosticCache
from lsp.documents import DocumentStore, is_python
from lsp.protocol import DROPPED, REJECTED, MsmapProtocol, converter
from lsp.publisher import Publisher
from lsp.safety import guarded
from lsp.settings import ServerSettings, parse_settings, section_of

log = logging.getLogger("lsp.server")


class MsmapServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("msmap", __version__, protocol_cls=MsmapProtocol, converter_factory=converter)
        self.db_path: Path | None = None
        self.settings = ServerSettings()
        self.cache = DiagnosticCache(self.settings)
        self.kb: Any = None
        self.catalog: Any = None
        self.engine: Any = None
        self.documents = DocumentStore()
        # one thread for the engine: every analysis, fix planning and KB opening runs there, in turn
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="msmap-analysis")
        self.publisher = Publisher(self.documents, self.diagnostics_for, self.publish, self.worker)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.opening: Future | None = None  # the knowledge base being opened in the worker
        self.pending_messages: list[str] = []  # warnings to show once the client is initialized
        self.client_initialized = False  # the client said ``initialized``: messages can be shown at once

    # -- set-up --------------------------------------------------------------------
    def open_kb(self) -> None:
        from kb.analysis import Catalog
        from kb.query import KB

        started = time.perf_counter()
        try:
            self.kb = KB.open(db=self.db_path)
        except Exception as exc:  # no DB and no data to build it: serve, but find nothing
            log.error("msmap: cannot open the knowledge base: %s", exc)
            self.pending_messages.append(f"msmap: cannot open the knowledge base ({exc})")
            if self.client_initialized and self.loop is not None:  # (else ``initialized`` shows it)
                self.loop.call_soon_threadsafe(self.flush_messages)
            return
        self.catalog = Catalog(self.kb)
        self.configure_engine()
        log.info("knowledge base %s opened in %.0f ms", self.kb.path, (time.perf_counter() - started) * 1000)

    def configure(self, raw: Any) -> None:
        self.settings, warnings = parse_settings(section_of(raw))
        if self.cache.settings != self.settings:  # (equal: keep what it has built)
            self.cache = DiagnosticCache(self.settings)
        for text in warnings:
            log.warning(text)
        self.pending_messages.extend(warnings)
        self.configure_engine()

    def configure_engine(self) -> None:
        from kb.analysis import Engine

        if self.catalog is None:
            return
        wanted = self.settings.engine()
        if self.engine is None or self.engine.settings != wanted:  # a new engine starts its analyses afresh
            self.engine = Engine(self.catalog, wanted)

    def in_worker(self, work: Callable[[], Any]) -> None:
        """Run ``work`` in the analysis worker, before any analysis asked for later; at once when no
        event loop runs."""
        try:
            self.loop = asyncio.get_running_loop()
        except RuntimeError:
            work()
            return
        self.opening = self.worker.submit(work)

    def flush_messages(self) -> None:
        for text in self.pending_messages:
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=text))
        self.pending_messages.clear()

    # -- helpers used by the handlers ----------------------------------------------------
    def diagnostics_for(self, doc: Any) -> tuple[Any, list[dict[str, Any]]]:
        """(analysis, diagnostics as LSP JSON) of an engine document; runs in the worker."""
        engine = self.engine
        if engine is None:
            return None, []
        analysis = engine.analyze(doc)
        uses, lag = analysis.held()  # (uses an edit only moved are not copied: see ``Analysis``)
        return analysis, self.cache.payload(uses, doc.uri, lag)

    def fix_all_edit(self, doc: Any) -> tuple[types.WorkspaceEdit | None, int] | None:
        """The file's fix-all edit and its number of fixes; runs in the worker."""
        return None if self.engine is None else actions.fix_all_edit(self.engine, doc, self.versioned_edits)

    async def ready(self) -> None:
        """Wait until the knowledge base is open (or failed to open)."""
        if self.opening is not None and not self.opening.done():
            await asyncio.wrap_future(self.opening)

    def publish(self, uri: str, version: int, diagnostics: list[dict[str, Any]]) -> None:
        """Send diagnostics already in their JSON form (``lsp.protocol.converter`` passes them through)."""
        wire: Any = diagnostics
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=wire))

    def capability(self, dotted: str) -> Any:
        node: Any = self.client_capabilities
        for part in dotted.split("."):
            node = getattr(node, part, None)
            if node is None:
                return None
        return node

    @property
    def versioned_edits(self) -> bool:
        return bool(self.capability("workspace.workspace_edit.document_changes"))

    @property
    def markup(self) -> types.MarkupKind:
        formats = self.capability("text_document.hover.content_format")
        return types.MarkupKind.PlainText if formats and types.MarkupKind.Markdown not in formats \
            else types.MarkupKind.Markdown


server = MsmapServer()


def timed(name: str, started: float) -> None:
    if log.isEnabledFor(logging.DEBUG):
        log.debug("timing %s %.3f ms", name, (time.perf_counter() - started) * 1000)


@server.feature(REJECTED)
def rejected(ls: MsmapServer, error: Exception) -> None:
    """A request the protocol could not accept (``lsp.protocol``): answered with its error."""
    raise error


@server.feature(DROPPED)
def dropped(ls: MsmapServer, params: Any) -> None:
    """A notification after ``shutdown``: ignored."""


@server.feature(types.INITIALIZE)
@guarded()
def initialize(ls: MsmapServer, params: types.InitializeParams) -> None:
    ls.configure(params.initialization_options)
    ls.in_worker(guarded()(ls.open_kb))  # the KB opens while the client reads the response


@server.feature(types.INITIALIZED)
@guarded()
def initialized(ls: MsmapServer, params: types.InitializedParams) -> None:
    ls.client_initialized = True
    ls.flush_messages()


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
@guarded()
async def did_change_configuration(ls: MsmapServer, params: types.DidChangeConfigurationParams) -> None:
    raw = section_of(params.settings)
    if not raw and ls.capability("workspace.configuration"):
        items = [types.ConfigurationItem(section="msmap")]
        raw = (await ls.workspace_configuration_async(types.ConfigurationParams(items=items)) or [None])[0]
    ls.configure(raw)
    ls.flush_messages()
    ls.publisher.schedule_all()


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
@guarded()
def did_open(ls: MsmapServer, params: types.DidOpenTextDocumentParams) -> None:
    item = params.text_document
    if is_python(item.language_id, item.uri):
        ls.publisher.cancel(item.uri)  # (re)opened: an analysis of the text before is of another text
        ls.documents.open(item.uri, item.text, item.version)
        ls.publisher.schedule(item.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
@guarded()
def did_change(ls: MsmapServer, params: types.DidChangeTextDocumentParams) -> None:
    started = time.perf_counter()
    if ls.documents.change(params.text_document.uri, params.text_document.version, params.content_changes):
        ls.publisher.schedule(params.text_document.uri)
    timed("didChange", started)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
@guarded()
def did_close(ls: MsmapServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.publisher.cancel(uri)
    ls.cache.forget(uri)
    if uri in ls.documents:
        ls.documents.close(uri)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


@server.feature(types.TEXT_DOCUMENT_HOVER)
@guarded()
async def hover(ls: MsmapServer, params: types.HoverParams) -> types.Hover | None:
    started = time.perf_counter()
    at = params.position
    uri = params.text_document.uri
    result = await lookups.hover(ls.publisher, ls.documents, ls.kb, uri, at.line, at.character, ls.settings, ls.markup)
    if uri in ls.documents:
        timed("hover", started)
    return result


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                types.CodeActionOptions(code_action_kinds=actions.KINDS, resolve_provider=True))
@guarded()
async def code_action(ls: MsmapServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    started = time.perf_counter()
    lazy = "edit" in (ls.capability("text_document.code_action.resolve_support.properties") or [])
    versioned = ls.versioned_edits

    def plan(doc: Any) -> Any:  # in the worker, where the engine is (opened before any job)
        engine = ls.engine
        return None if engine is None else actions.for_request(engine, engine.analyze(doc), params, versioned, lazy)

    found = await ls.publisher.run(params.text_document.uri, plan)
    timed("codeAction", started)
    return found or None


@server.feature(types.CODE_ACTION_RESOLVE)
@guarded()
async def code_action_resolve(ls: MsmapServer, action: types.CodeAction) -> types.CodeAction:
    data = action.data if isinstance(action.data, dict) else {}
    uri = data.get("uri", "")
    if data.get("action") == "fixAll" and isinstance(uri, str):
        found = await ls.publisher.run(uri, ls.fix_all_edit)
        if found is not None:
            action.edit = found[0]
    return action


@server.command("msmap.search")
@guarded(default=[])
async def search(ls: MsmapServer, *args: Any) -> list[dict[str, Any]]:
    await ls.ready()
    if ls.engine is None or not args or not isinstance(args[0], str):
        return []
    limit = lookups.search_limit(args[1] if len(args) > 1 else None)
    return lookups.search_results(ls.kb, args[0][:lookups.MAX_QUERY], limit, ls.engine.settings)


@server.command("msmap.lookup")
@guarded()
async def lookup(ls: MsmapServer, *args: Any) -> str | None:
    await ls.ready()
    if ls.kb is None or not args or not isinstance(args[0], str):
        return None
    return lookups.card_for(ls.kb, args[0], ls.settings)


@server.command("msmap.fixAll")
@guarded(default=0)
async def fix_all(ls: MsmapServer, *args: Any) -> int:
    uri = args[0] if args and isinstance(args[0], str) else None
    found = await ls.publisher.run(uri, ls.fix_all_edit) if uri is not None else None
    if found is None or found[0] is None:
        return 0
    edit, count = found
    result = await ls.workspace_apply_edit_async(
        types.ApplyWorkspaceEditParams(edit=edit, label=actions.FIX_ALL_TITLE))
    return count if result is not None and result.applied else 0


def make_server(db: str | None = None) -> MsmapServer:
    server.db_path = Path(db) if db else None
    return server
