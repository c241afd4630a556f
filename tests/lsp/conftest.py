"""Language-server test harness: the real server in a subprocess, driven by pytest-lsp.

``fixed_env`` points the server at tests/lsp/data (a self-contained KB, so exact
expectations never move when other data changes); ``real_env`` at the bundled data/.
``session()`` starts a server, initializes it with a recorded client's capabilities and
shuts it down.  The client keeps every ``publishDiagnostics`` it receives, so tests wait
for the one they want (by URI and version) instead of sleeping.
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

ROOT = Path(__file__).resolve().parents[2]
LSP_DATA = ROOT / "tests" / "lsp" / "data"
TIMEOUT = float(os.environ.get("MSMAP_TEST_TIMEOUT", "20"))
VSCODE, NEOVIM = "visual-studio-code", "neovim@v0.7.0"


def server_env(data: Path, db: Path) -> dict[str, str]:
    env = dict(os.environ, MSMAP_DATA=str(data), MSMAP_DB=str(db), PYTHONPATH=str(ROOT))
    env.pop("MSMAP_DEBUG", None)
    return env


@pytest.fixture(scope="session")
def fixed_env(tmp_path_factory) -> dict[str, str]:
    from kb.query import ensure_db

    db = tmp_path_factory.mktemp("lspdb") / "kb.sqlite"
    ensure_db(LSP_DATA, db)
    return server_env(LSP_DATA, db)


@pytest.fixture(scope="session")
def real_env(real_kb) -> dict[str, str]:
    """The bundled data's knowledge base: the one built once for the whole run (tests/conftest.py)."""
    return server_env(ROOT / "data", real_kb.path)


# -- the client ---------------------------------------------------------------------------
def _publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
    client.diagnostics[params.uri] = params.diagnostics
    client.published.append(params)
    client.arrived.set()


def _apply_edit(client: LanguageClient, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
    client.applied_edits.append(params)
    return types.ApplyWorkspaceEditResult(applied=True)


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter)
    client.published, client.applied_edits, client.arrived = [], [], asyncio.Event()
    features = dict(DEFAULT_CLIENT_FEATURES)
    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = _publish
    features[types.WORKSPACE_APPLY_EDIT] = _apply_edit
    register_lsp_features(client, features)
    return client


@contextlib.asynccontextmanager
async def session(env: dict[str, str], options: Any = None, capabilities: Any = VSCODE, args: tuple = ()):
    """A server initialized with ``options``; ``capabilities``: a recorded client's name, or an object."""
    config = ClientServerConfig(server_command=[sys.executable, "-m", "kb", "lsp", *args],
                                client_factory=make_client, server_env=env)
    client = await config.start()
    try:
        caps = client_capabilities(capabilities) if isinstance(capabilities, str) else capabilities
        params = types.InitializeParams(capabilities=caps,
                                        initialization_options=options, root_uri=ROOT.as_uri())
        client.init_result = await asyncio.wait_for(client.initialize_session(params), TIMEOUT)
        yield client
        await asyncio.wait_for(client.shutdown_session(), TIMEOUT)
    finally:
        await client.stop()


@pytest_asyncio.fixture
async def client(fixed_env):
    async with session(fixed_env) as c:
        yield c


# -- helpers ------------------------------------------------------------------------------
def uri_of(name: str) -> str:
    return (ROOT / "tests" / "lsp" / "virtual" / name).as_uri()


ANY = object()


async def wait_diagnostics(client: LanguageClient, uri: str, version: Any = ANY, since: int = 0,
                           timeout: float = TIMEOUT) -> list[types.Diagnostic]:
    """The latest diagnostics published for ``uri`` at ``version`` (``None``: unversioned), among
    the notifications from index ``since`` on; waits for them to arrive."""
    async def arrived() -> list[types.Diagnostic]:
        while True:
            for params in reversed(client.published[since:]):
                if params.uri == uri and (version is ANY or params.version == version):
                    return list(params.diagnostics)
            client.arrived.clear()
            await client.arrived.wait()

    return await asyncio.wait_for(arrived(), timeout)


def open_doc(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))


def change_doc(client: LanguageClient, uri: str, version: int, text: str,
               span: tuple[int, int, int, int] | None = None) -> None:
    if span is None:
        change: Any = types.TextDocumentContentChangeWholeDocument(text=text)
    else:
        change = types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(line=span[0], character=span[1]),
                              end=types.Position(line=span[2], character=span[3])), text=text)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version), content_changes=[change]))


def pos(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


def rng(l1: int, c1: int, l2: int, c2: int) -> types.Range:
    return types.Range(start=pos(l1, c1), end=pos(l2, c2))


def apply_text_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP edits (UTF-16 positions) to ``text``, back to front."""
    lines = text.splitlines(keepends=True) or [""]

    def offset(p: types.Position) -> int:
        before = sum(len(line) for line in lines[: p.line])
        line = lines[p.line] if p.line < len(lines) else ""
        units, index = 0, 0
        while index < len(line) and units < p.character:
            units += 2 if ord(line[index]) > 0xFFFF else 1
            index += 1
        return before + index

    spans = sorted(((offset(e.range.start), offset(e.range.end), i, e.new_text) for i, e in enumerate(edits)),
                   reverse=True)  # same-position inserts keep their array order
    for start, end, _, new in spans:
        text = text[:start] + new + text[end:]
    return text


def edits_of(edit: types.WorkspaceEdit, uri: str) -> list[types.TextEdit]:
    if edit.document_changes:
        return [e for dc in edit.document_changes if dc.text_document.uri == uri for e in dc.edits]
    return list((edit.changes or {}).get(uri, []))
