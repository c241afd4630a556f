"""Transports and process hygiene: stdio cancellation, TCP, logging, no torch/mindspore imports."""
from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time

from lsprotocol import types

from tests.lsp.conftest import ROOT, TIMEOUT, make_client, open_doc, pos, session, uri_of, wait_diagnostics

SOURCE = "import torch.nn as nn\nlayer = nn.Linear(3, 4)\n"


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_message(stream) -> dict:
    length = 0
    while (line := stream.readline().strip()):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(stream.read(length))


def read_until(stream, wanted_ids: set) -> dict:
    found = {}
    while wanted_ids - set(found):
        message = read_message(stream)
        if "id" in message and "method" not in message:
            found[message["id"]] = message
    return found


def hover_request(msg_id: int, uri: str) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "method": "textDocument/hover",
            "params": {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 10}}}


def test_a_request_cancelled_in_the_same_burst_is_not_processed(fixed_env, tmp_path):
    log = tmp_path / "server.log"
    server = subprocess.Popen([sys.executable, "-m", "kb", "lsp", "--log-file", str(log), "--log-level", "DEBUG"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=fixed_env, cwd=ROOT)
    uri = uri_of("cancel.py")
    try:
        server.stdin.write(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                  "params": {"processId": None, "rootUri": None, "capabilities": {}}}))
        server.stdin.flush()
        read_until(server.stdout, {1})
        burst = [
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": "python", "version": 1, "text": SOURCE}}},
            hover_request(2, uri), {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 2}},
            hover_request(3, uri),
        ]
        server.stdin.write(b"".join(frame(m) for m in burst))  # one write: the server reads one chunk
        server.stdin.flush()
        answers = read_until(server.stdout, {2, 3})
        server.stdin.write(frame({"jsonrpc": "2.0", "id": 4, "method": "shutdown"}))
        server.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
        server.stdin.flush()
        assert server.wait(TIMEOUT) == 0
    finally:
        if server.poll() is None:
            server.kill()
    assert answers[2]["error"]["code"] == -32800  # RequestCancelled
    assert answers[3]["result"]["range"] == {"start": {"line": 1, "character": 8}, "end": {"line": 1, "character": 17}}
    assert log.read_text().count("timing hover") == 1  # only request 3 ran


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_tcp(fixed_env):
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "kb", "lsp", "--tcp", f"127.0.0.1:{port}"],
                              env=fixed_env, cwd=ROOT, stderr=subprocess.DEVNULL)
    client = make_client()
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                await client.start_tcp("127.0.0.1", port)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.1)
        await client.initialize_session(types.InitializeParams(capabilities=types.ClientCapabilities()))
        uri = uri_of("tcp.py")
        open_doc(client, uri, SOURCE)
        [diagnostic] = await wait_diagnostics(client, uri, 1)
        hover = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=pos(1, 10)))
        await client.shutdown_session()
    finally:
        await client.stop()
        server.wait(TIMEOUT) if server.poll() is None and not server.kill() else None
    assert diagnostic.code == "param_names_differ"
    assert hover.contents.value.startswith("**torch.nn.Linear**")


async def test_serving_imports_neither_torch_nor_mindspore(fixed_env, tmp_path):
    modules = tmp_path / "modules.txt"
    probe = ROOT / "tests" / "lsp" / "modules_probe.py"
    client = make_client()
    await client.start_io(sys.executable, str(probe), str(modules), env=fixed_env, cwd=str(ROOT))
    try:
        await client.initialize_session(types.InitializeParams(capabilities=types.ClientCapabilities()))
        uri = uri_of("imports.py")
        open_doc(client, uri, "import torch\nimport mindspore as ms\nimport torch.nn as nn\nnn.Linear(1, 2)\n")
        await wait_diagnostics(client, uri, 1)
        await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=pos(3, 4)))
        await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="msmap.fixAll", arguments=[uri]))
        await client.shutdown_session()
        await asyncio.wait_for(client._server.wait(), TIMEOUT)
    finally:
        await client.stop()
    loaded = set(modules.read_text().split())
    assert "lsp.server" in loaded and "kb.analysis" in loaded
    assert not {m for m in loaded if m.split(".")[0] in ("torch", "mindspore", "numpy")}


async def test_log_file_and_stderr_quiet(fixed_env, tmp_path):
    log = tmp_path / "lsp.log"
    async with session(fixed_env, args=("--log-file", str(log))) as client:
        uri = uri_of("log.py")
        open_doc(client, uri, SOURCE)
        await wait_diagnostics(client, uri, 1)
    text = log.read_text()
    assert "knowledge base" in text and "opened" in text
    assert "Sending data" not in text  # pygls' per-message logging stays off below DEBUG
