"""The language server's costs stay bounded (issue 28): a 20 MB ``didOpen`` is read in linear time,
a document too large to analyse gets one diagnostic saying so (and no analysis), and
``msmap.search`` with an absurd limit is answered with an error, not a failure in the log."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from lsp.safety import MARK
from lsp.transport import Framer
from tests.lsp.conftest import uri_of
from tests.reliability.test_lsp_protocol import RawClient, assert_answers_hover

ROOT = Path(__file__).resolve().parents[2]
INVALID_PARAMS = -32602


def framed(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_framing_a_20_mb_message_in_chunks_is_linear():
    text = "x = torch.nn.Linear(3, 4)\n" * (20_000_000 // 26)
    body = json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                       "params": {"textDocument": {"uri": "file:///a.py", "text": text}}}).encode()
    data = framed(body) + framed(b"{}")
    framer = Framer()
    started = time.perf_counter()
    frames = []
    for at in range(0, len(data), 1 << 16):
        frames += framer.feed(data[at:at + (1 << 16)])
    elapsed = time.perf_counter() - started
    assert frames == [framed(body), framed(b"{}")]
    assert elapsed < 5, f"{elapsed:.1f} s to frame 20 MB (searching the whole buffer per chunk took minutes)"


def test_a_header_split_across_chunks_after_a_long_body_is_still_found():
    """The search goes on where it stopped, stepping back far enough for a header cut in two."""
    body = b'{"a": "' + b"x" * 300_000 + b'"}'
    data = framed(body[:1000]) + body[1000:] + framed(b'{"b": 1}')  # a length that stops short
    framer = Framer()
    frames = []
    for at in range(0, len(data), 4093):
        frames += framer.feed(data[at:at + 4093])
    assert frames[-1] == framed(b'{"b": 1}')


def source_of(megabytes: float) -> str:
    one = (ROOT / "benchmarks" / "corpus" / "tv_resnet18" / "resnet.py").read_text()
    return one * (int(megabytes * 1e6 / len(one)) + 1)


def open_doc(client: RawClient, name: str, text: str) -> None:
    client.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri_of(name), "languageId": "python", "version": 1, "text": text}}})


def diagnostics_of(client: RawClient, uri: str, timeout: float = 60) -> list[dict]:
    pending = [m for m in client.seen if m.get("method") == "textDocument/publishDiagnostics"]
    deadline = time.monotonic() + timeout
    while True:
        message = pending.pop(0) if pending else client.messages.get(timeout=max(0.1, deadline - time.monotonic()))
        if message.get("method") == "textDocument/publishDiagnostics" and message["params"]["uri"] == uri:
            return message["params"]["diagnostics"]


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


@pytest.mark.parametrize("megabytes, words", [(20, "too large to analyse (20.0 MB"),
                                              (3, "too much code to analyse in bounded memory")])
def test_a_document_too_large_gets_one_diagnostic_and_no_analysis(raw, megabytes, words):
    started = time.perf_counter()
    open_doc(raw, "big.py", source_of(megabytes))
    raw.send({"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover", "params": {
        "textDocument": {"uri": uri_of("big.py")}, "position": {"line": 10, "character": 12}}})
    assert raw.response(7)["result"] is None
    found = diagnostics_of(raw, uri_of("big.py"))
    elapsed = time.perf_counter() - started
    assert len(found) == 1 and found[0]["code"] == "too_large" and words in found[0]["message"], found
    assert elapsed < 20, f"{elapsed:.1f} s"  # (was 56 s to read a 20 MB didOpen)
    assert peak_rss_mb(raw.process.pid) < 600  # (was 2.3 GB for the 20 MB file)
    assert_answers_hover(raw, 8)  # the small document is still served


def test_search_with_a_bad_limit_is_an_invalid_params_error(raw, tmp_path):
    for msg_id, limit in enumerate([2**70, 0, -1, 1.5, "5", True, 10_000], start=100):
        raw.send({"jsonrpc": "2.0", "id": msg_id, "method": "workspace/executeCommand",
                  "params": {"command": "msmap.search", "arguments": ["linear", limit]}})
        answer = raw.response(msg_id)
        assert answer["error"]["code"] == INVALID_PARAMS and "limit" in answer["error"]["message"], answer
    raw.send({"jsonrpc": "2.0", "id": 10, "method": "workspace/executeCommand",
              "params": {"command": "msmap.search", "arguments": ["linear", 200]}})
    assert isinstance(raw.response(10)["result"], list)
    assert MARK not in (tmp_path / "server.log").read_text()  # no handler failed


def test_a_message_over_64_mib_is_skipped_and_the_server_goes_on(raw, tmp_path):
    text = "x" * (70 << 20)
    body = json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri_of("huge.py"), "languageId": "python", "version": 1, "text": text}}}).encode()
    raw.send(framed(body))
    assert_answers_hover(raw, 11)
    assert "is too large" in (tmp_path / "server.log").read_text()
    assert peak_rss_mb(raw.process.pid) < 400  # (read and dropped in pieces, never parsed)
