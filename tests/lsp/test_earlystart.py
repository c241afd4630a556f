"""Early start (lsp.earlystart): the first answer and diagnostics before pygls is loaded, byte for byte
what the server gives without it, and a clean handover to pygls on any other course.

A raw JSON-RPC client is used so that every message the server sends is seen (a duplicate answer
to ``initialize`` or a second publication of the first document would be a bug).
"""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Optional

import pytest

from lsp.earlystart import Frames, answers_path, capabilities_key, remember

from tests.lsp.conftest import ROOT

TEXT = (
    "import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.drop = nn.Dropout(p=0.3)\n        self.fc = nn.Linear(4, 2)\n\n"
    "    def forward(self, x):\n        return self.fc(self.drop(x)).view(-1)\n"
)
URI = "file:///tmp/early_model.py"
CAPS = {"textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]},
                         "publishDiagnostics": {"versionSupport": True}},
        "general": {"positionEncodings": ["utf-8", "utf-16"]}}


class Raw:
    """A client speaking JSON-RPC over the server's stdio, keeping every message it receives."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "kb", "lsp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
        self.buffer = b""
        self.received: list[dict] = []

    def send(self, message: dict) -> None:
        body = json.dumps(dict(message, jsonrpc="2.0")).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _next(self, deadline: float) -> Optional[dict]:
        while True:
            head = self.buffer.find(b"\r\n\r\n")
            if head >= 0:
                length = int([line.split(b":")[1] for line in self.buffer[:head].split(b"\r\n")
                              if line.lower().startswith(b"content-length")][0])
                if len(self.buffer) >= head + 4 + length:
                    message = json.loads(self.buffer[head + 4:head + 4 + length])
                    self.buffer = self.buffer[head + 4 + length:]
                    self.received.append(message)
                    return message
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not chunk:
                return None
            self.buffer += chunk

    def wait(self, match, timeout: float = 20.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            message = self._next(deadline)
            assert message is not None, f"timed out; received: {[m.get('method', m.get('id')) for m in self.received]}"
            if match(message):
                return message

    def request(self, id_: int, method: str, params: Any) -> dict:
        self.send({"id": id_, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == id_ and "method" not in m)

    def published(self, version: int) -> dict:
        return self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                         and m["params"]["version"] == version)

    def close(self) -> str:
        try:
            self.request(99, "shutdown", None)
            self.send({"method": "exit"})
            self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        self._next(time.monotonic() + 0.2)  # anything still unread
        return self.proc.stderr.read().decode()


@pytest.fixture
def env(fixed_env, tmp_path) -> dict[str, str]:
    return dict(fixed_env, XDG_CACHE_HOME=str(tmp_path))


def start(env: dict[str, str], caps: dict = CAPS, text: str = TEXT, uri: str = URI) -> tuple[Raw, dict, dict]:
    """initialize, initialized, didOpen: (client, the initialize answer, the first publication)."""
    client = Raw(env)
    answer = client.request(1, "initialize", {"processId": None, "rootUri": None, "capabilities": caps,
                                             "initializationOptions": {"msmap": {"targetFamily": "classic"}}})
    client.send({"method": "initialized", "params": {}})
    client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": text}}})
    return client, answer, client.published(1)


def session(env: dict[str, str]) -> dict[str, Any]:
    """A whole session: the answers, publications and hover a client sees."""
    client, answer, first = start(env)
    hover = client.request(2, "textDocument/hover", {"textDocument": {"uri": URI},
                                                     "position": {"line": 7, "character": 24}})
    client.send({"method": "textDocument/didChange", "params": {
        "textDocument": {"uri": URI, "version": 2},
        "contentChanges": [{"range": {"start": {"line": 8, "character": 34}, "end": {"line": 8, "character": 34}},
                            "text": ", bias=False"}]}})
    second = client.published(2)
    log = client.close()
    answers = [m for m in client.received if m.get("id") == 1]
    firsts = [m for m in client.received if m.get("method") == "textDocument/publishDiagnostics"
              and m["params"]["version"] == 1]
    return {"answer": answer, "first": first, "hover": hover, "second": second, "answers": len(answers),
            "firsts": len(firsts), "log": log}


def test_a_start_with_a_remembered_answer_gives_what_pygls_gives(env, tmp_path):
    plain = session(env)  # no answer remembered yet: pygls answers, and the answer is kept
    kept = json.loads((tmp_path / "msmap" / "lsp-initialize.json").read_text())
    assert list(kept.values()) == [plain["answer"]["result"]]
    early = session(env)
    for key in ("answer", "first", "hover", "second"):
        early[key].pop("id", None)
        plain[key].pop("id", None)
        assert early[key] == plain[key], key
    assert early["first"]["params"]["diagnostics"], "the model's uses have diagnostics"
    assert early["answers"] == plain["answers"] == 1 and early["firsts"] == plain["firsts"] == 1
    assert "Traceback" not in early["log"] + plain["log"]


def test_other_capabilities_are_answered_by_pygls_and_remembered_too(env, tmp_path):
    session(env)
    other = dict(CAPS, workspace={"workspaceFolders": True})
    client, answer, first = start(env, caps=other)
    assert first["params"]["diagnostics"]
    client.close()
    assert len(json.loads((tmp_path / "msmap" / "lsp-initialize.json").read_text())) == 2


def test_any_other_course_hands_over_to_pygls(env):
    session(env)  # the answer is remembered: the early start answers initialize
    client = Raw(env)
    client.request(1, "initialize", {"processId": None, "rootUri": None, "capabilities": CAPS})
    # a request before the first document: pygls takes over and answers it
    hover = client.request(2, "textDocument/hover", {"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}})
    assert hover.get("result") is None and "error" not in hover
    client.send({"method": "initialized", "params": {}})
    client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": URI, "languageId": "python", "version": 1, "text": TEXT}}})
    assert client.published(1)["params"]["diagnostics"]
    log = client.close()
    assert [m.get("id") for m in client.received].count(1) == 1 and "Traceback" not in log


def test_a_first_document_that_is_not_python_is_left_to_pygls(env):
    session(env)
    client = Raw(env)
    client.request(1, "initialize", {"processId": None, "rootUri": None, "capabilities": CAPS})
    client.send({"method": "initialized", "params": {}})
    client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": "file:///tmp/notes.md", "languageId": "markdown", "version": 1, "text": "import torch\n"}}})
    client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": URI, "languageId": "python", "version": 1, "text": TEXT}}})
    assert client.published(1)["params"]["uri"] == URI
    client.close()
    assert not [m for m in client.received if m.get("params", {}).get("uri") == "file:///tmp/notes.md"]


def test_frames_are_read_across_chunks_and_bad_ones_end_the_early_start():
    read, write = os.pipe()
    frames = Frames(read)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).encode()
    message = b"Content-Length: %d\r\n\r\n" % len(body) + body
    os.write(write, message[:10])
    assert frames.next(0.05) is None  # half a header: nothing yet
    os.write(write, message[10:])
    assert frames.next(0.05)["method"] == "initialize"
    os.write(write, b"Content-Type: text/plain\r\n\r\n{}")  # no length
    assert frames.next(0.05) is None
    assert bytes(frames.data) == message + b"Content-Type: text/plain\r\n\r\n{}"  # kept for pygls
    os.close(write)
    os.close(read)


def test_remembered_answers_are_bounded(tmp_path):
    path = tmp_path / "answers.json"
    for n in range(30):
        remember(f"key{n}", {"n": n}, path)
    kept = json.loads(path.read_text())
    assert len(kept) == 20 and "key29" in kept and "key0" not in kept
    remember("key29", {"n": 29}, path)  # unchanged: not written again
    assert json.loads(path.read_text()) == kept
    assert answers_path().name == "lsp-initialize.json"


def test_an_out_of_date_answer_is_corrected_for_the_next_start(env, tmp_path):
    key = capabilities_key({"capabilities": CAPS})
    assert key == capabilities_key({"capabilities": dict(CAPS)}) != capabilities_key({"capabilities": {}})
    stale = {"capabilities": {"hoverProvider": True}, "serverInfo": {"name": "msmap", "version": "0.0"}}
    remember(key, stale, tmp_path / "msmap" / "lsp-initialize.json")
    client, answer, _ = start(env)
    assert answer["result"] == stale  # this start trusted what it had kept ...
    assert "out of date" in client.close()
    kept = json.loads((tmp_path / "msmap" / "lsp-initialize.json").read_text())[key]
    client, answer, _ = start(env)  # ... and the next one gives pygls' answer
    client.close()
    assert answer["result"] == kept != stale and kept["capabilities"]["codeActionProvider"]
