"""The server's log: a cancel that arrives after its request was answered is not a warning."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import ROOT


def frame(message: dict) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def server_log(real_kb, *options: str) -> str:
    """stderr of `msmap lsp` after initialize, a cancel for a request it never had, and exit."""
    messages = [
        {"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}},
        {"method": "initialized", "params": {}},
        {"method": "$/cancelRequest", "params": {"id": 42}},
        {"id": 2, "method": "shutdown"},
        {"method": "exit"},
    ]
    env = {**os.environ, "MSMAP_DB": str(real_kb.path)}
    done = subprocess.run([sys.executable, "-m", "kb", "lsp", *options], input=b"".join(map(frame, messages)),
                          capture_output=True, env=env, cwd=ROOT, timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()
    return done.stderr.decode()


def test_a_late_cancel_is_not_logged_as_a_warning(real_kb):
    assert "Cancel notification" not in server_log(real_kb)


def test_a_late_cancel_is_a_debug_record(real_kb):
    """With every record kept, pygls' message is there, at DEBUG (so the test above shows a filter at
    work, not a cancel that never reached pygls)."""
    lines = [line for line in server_log(real_kb, "--log-level", "TRACE").splitlines() if "Cancel notification" in line]
    assert lines and all(" DEBUG pygls.protocol.json_rpc: " in line for line in lines), lines
