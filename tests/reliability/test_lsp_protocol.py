"""The language server answers every request, whatever arrives (issue 15, "under abuse").

A raw stdio client sends what no well-behaved client sends: requests with missing or
wrong-typed params, negative and 2**63 positions, an object as id, requests after
``shutdown``, and broken framing (a bad, too large or too small ``Content-Length``, garbage
between messages).  Each request gets a JSON-RPC response (an error or a result), and the
server keeps answering well-formed requests afterwards.
"""
from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.lsp.conftest import LSP_DATA, ROOT, TIMEOUT, server_env, uri_of

SOURCE = "import torch.nn as nn\nlayer = nn.Linear(3, 4)\n"
INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32600, -32601, -32602


def frame(message: Any) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawClient:
    """A server on pipes; every message it sends is parsed by a reader thread."""

    def __init__(self, env: dict, log: Path) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "kb", "lsp", "--log-file", str(log)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=ROOT)
        self.messages: queue.Queue = queue.Queue()
        self.seen: list[dict] = []
        self.arrived: dict[Any, float] = {}  # response id -> when it was read (perf_counter)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    return
                if not line.strip():
                    break
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            message = json.loads(stream.read(length))
            if "method" not in message:
                self.arrived[json.dumps(message.get("id"))] = time.perf_counter()
            self.messages.put(message)

    def send(self, *messages: Any) -> None:
        self.process.stdin.write(b"".join(m if isinstance(m, bytes) else frame(m) for m in messages))
        self.process.stdin.flush()

    def response(self, msg_id: Any, timeout: float = TIMEOUT) -> dict:
        """The response to ``msg_id`` (``None``: one to a request whose id could not be read)."""
        for message in self.seen:
            if "method" not in message and message.get("id", "absent") == msg_id:
                self.seen.remove(message)
                return message
        while True:
            message = self.messages.get(timeout=timeout)  # queue.Empty: no answer in time
            if "method" not in message and message.get("id", "absent") == msg_id:
                return message
            self.seen.append(message)

    def initialize(self) -> None:
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"processId": None, "rootUri": None, "capabilities": {}}})
        assert "result" in self.response(0)
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}},
                  {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                      "uri": uri_of("abuse.py"), "languageId": "python", "version": 1, "text": SOURCE}}})

    def close(self) -> int | None:
        if self.process.poll() is None:
            try:
                self.send({"jsonrpc": "2.0", "id": "bye", "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"})
            except OSError:
                pass
            try:
                return self.process.wait(TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                return None
        return self.process.returncode


def lsp_env_for(tmp_path_factory) -> dict[str, str]:
    """The server's environment with tests/lsp/data as its knowledge base (as ``fixed_env`` there)."""
    from kb.query import ensure_db

    db = tmp_path_factory.mktemp("lspdb") / "kb.sqlite"
    ensure_db(LSP_DATA, db)
    return server_env(LSP_DATA, db)


def hover(msg_id: Any, line: Any = 1, character: Any = 10, uri: Any = None) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "method": "textDocument/hover",
            "params": {"textDocument": {"uri": uri or uri_of("abuse.py")},
                       "position": {"line": line, "character": character}}}


def assert_answers_hover(raw: RawClient, msg_id: Any) -> None:
    raw.send(hover(msg_id))
    answer = raw.response(msg_id)
    assert answer["result"]["range"] == {"start": {"line": 1, "character": 8}, "end": {"line": 1, "character": 17}}


BAD_PARAMS = [
    pytest.param({"method": "textDocument/hover"}, id="no-params"),
    pytest.param({"method": "textDocument/hover", "params": "x"}, id="params-a-string"),
    pytest.param({"method": "textDocument/hover", "params": {"position": {"line": 0, "character": 0}}},
                 id="no-text-document"),
    pytest.param(hover(None, line=-1), id="negative-line"),
    pytest.param(hover(None, character=-5), id="negative-character"),
    pytest.param(hover(None, line=2**63), id="line-2**63"),
    pytest.param(hover(None, character=2**63), id="character-2**63"),
    pytest.param(hover(None, line="one"), id="line-a-string"),
    pytest.param(hover(None, uri=17), id="uri-a-number"),
    pytest.param({"method": "textDocument/codeAction", "params": []}, id="code-action-a-list"),
    pytest.param({"method": "textDocument/codeAction", "params": {
        "textDocument": {"uri": uri_of("abuse.py")}, "context": {"diagnostics": []},
        "range": {"start": {"line": -1, "character": 0}, "end": {"line": 0, "character": 0}}}},
        id="code-action-negative"),
    pytest.param({"method": "workspace/executeCommand", "params": {"command": 5}}, id="command-a-number"),
    pytest.param({"method": "codeAction/resolve", "params": {"title": 3}}, id="resolve-bad-title"),
]


@pytest.mark.parametrize("request_", BAD_PARAMS)
def test_a_request_with_bad_params_gets_invalid_params(raw, request_):
    raw.send(dict(request_, jsonrpc="2.0", id=7))
    answer = raw.response(7)
    assert answer["error"]["code"] == INVALID_PARAMS, answer
    assert_answers_hover(raw, 8)


def test_every_request_of_a_burst_of_bad_ones_is_answered(raw):
    raw.send(*[dict(p.values[0], jsonrpc="2.0", id=100 + i) for i, p in enumerate(BAD_PARAMS)])
    codes = [raw.response(100 + i)["error"]["code"] for i in range(len(BAD_PARAMS))]
    assert set(codes) == {INVALID_PARAMS}
    assert_answers_hover(raw, 1)


def test_an_unknown_method_gets_method_not_found(raw):
    raw.send({"jsonrpc": "2.0", "id": 3, "method": "textDocument/noSuchThing", "params": {}})
    assert raw.response(3)["error"]["code"] == METHOD_NOT_FOUND


@pytest.mark.parametrize("bad_id", [{"a": 1}, [1, 2], True, 1.5], ids=["object", "list", "bool", "float"])
def test_a_request_with_an_invalid_id_gets_invalid_request_with_a_null_id(raw, bad_id):
    raw.send(dict(hover(None), id=bad_id))
    answer = raw.response(None)
    assert answer["error"]["code"] == INVALID_REQUEST, answer
    assert_answers_hover(raw, 2)


def test_requests_after_shutdown_get_invalid_request_and_exit_ends_with_0(raw):
    raw.send({"jsonrpc": "2.0", "id": 1, "method": "shutdown"})
    assert raw.response(1) == {"jsonrpc": "2.0", "id": 1, "result": None}
    raw.send(hover(2), {"jsonrpc": "2.0", "id": 3, "method": "textDocument/noSuchThing"},
             {"jsonrpc": "2.0", "id": 4, "method": "shutdown"})
    for msg_id in (2, 3, 4):
        assert raw.response(msg_id)["error"]["code"] == INVALID_REQUEST
    raw.send({"jsonrpc": "2.0", "method": "exit"})
    assert raw.process.wait(TIMEOUT) == 0


def test_exit_without_shutdown_ends_with_1(raw):
    raw.send({"jsonrpc": "2.0", "method": "exit"})
    assert raw.process.wait(TIMEOUT) == 1


GOOD = frame(hover(50))
FRAMING = [
    pytest.param(b"Content-Length: abc\r\n\r\n" + json.dumps(hover(40)).encode(), id="length-not-a-number"),
    pytest.param(b"Content-Length: 99999\r\n\r\n" + json.dumps(hover(40)).encode(), id="length-too-large"),
    pytest.param(b"Content-Length: 9999\r\n\r\n" + json.dumps(hover(40)).encode(), id="length-too-large-partly"),
    pytest.param(frame(hover(40)).replace(b"Content-Length: %d" % len(json.dumps(hover(40))),
                                          b"Content-Length: %d" % (len(json.dumps(hover(40))) - 3)),
                 id="length-too-small"),
    pytest.param(frame(hover(40)).replace(b"Content-Length: %d" % len(json.dumps(hover(40))),
                                          b"Content-Length: %d" % (len(json.dumps(hover(40))) + 3)),
                 id="length-3-too-large"),
    pytest.param(b"\r\n\r\ngarbage\r\n" + b"x" * 5000, id="garbage"),
    pytest.param(b"Content-Length: 5\r\n\r\n{oops", id="body-not-json"),
    pytest.param(b"Content-Type: text/plain\r\n\r\n{}", id="no-length"),
]


@pytest.mark.parametrize("broken", FRAMING)
def test_the_server_resynchronises_after_a_framing_error(raw, broken):
    raw.send(broken, GOOD)
    if b'"id": 40' in broken and b"abc" not in broken:  # a wrong length around one JSON message: read as it is
        assert "result" in raw.response(40)
    assert raw.response(50)["result"]["range"]["start"] == {"line": 1, "character": 8}
    assert_answers_hover(raw, 51)
    assert raw.process.poll() is None
