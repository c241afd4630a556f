"""Robustness: thousands of random edits through a real client; the server stays up and consistent.

Hypothesis draws edit scripts (torch snippets, syntax errors, non-ASCII and astral characters,
very long lines, deletions, whole-document replacements, empty files).  Each script runs
against a fresh server; hovers and code actions are asked for along the way.  Afterwards a
hover still answers, the incrementally maintained document has the same diagnostics as the
final text opened from scratch, and the server's log holds no exception.
"""
from __future__ import annotations

import asyncio
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st
from lsprotocol import types

from lsp.safety import MARK
from tests.lsp.conftest import open_doc, pos, rng, session, uri_of, wait_diagnostics

SNIPPETS = [
    "import torch\n", "import torch.nn as nn\n", "import torch.nn.functional as F\n", "from torch import nn\n",
    "layer = nn.Linear(3, 4, bias=False)\n", "nn.Dropout(p=0.2)", "torch.no_grad()", "x.view(-1)", "y.numpy()",
    "class A(nn.Module):\n    def forward(self, x):\n        return F.relu(x)\n", "with torch.no_grad():\n",
    "import mindspore as ms\n", "ms.nn.Dense(1, 2)", "F.relu(", ")", "(", "[", "]", ":", "\n", "    ", "\t",
    "def f(", "lambda: ", "@", "'''", '"', "#", "\\", "é", "😀", "\u200b", "中文", "\r\n", "𝔘𝔫𝔦", ",", "=",
    "torch", ".", "nn", "Linear", "x" * 3000, "torch.flatten(z, 1)\n" * 40,
]

edit = st.tuples(st.floats(0, 1), st.integers(0, 40), st.lists(st.sampled_from(SNIPPETS), max_size=3).map("".join))
script = st.lists(st.one_of(edit, edit, edit, edit, st.sampled_from(["", "x", "import torch\n" * 3])),
                  min_size=500, max_size=500)


def position(text: str, offset: int) -> types.Position:
    before = text[:offset]
    line = before.count("\n")
    column = before[before.rfind("\n") + 1:]
    return pos(line, len(column.encode("utf-16-le")) // 2)


async def storm(env: dict, log: Path, steps: list) -> None:
    async with session(env, {"severity": {"guess": "hint"}}, args=("--log-file", str(log))) as client:
        uri, text, version = uri_of("storm.py"), "import torch\n", 1
        open_doc(client, uri, text)
        for index, step in enumerate(steps):
            version += 1
            if isinstance(step, str):  # a whole-document replacement
                text = step
                change: object = types.TextDocumentContentChangeWholeDocument(text=text)
            else:
                where, length, new = step
                start = int(where * len(text))
                end = min(len(text), start + length)
                change = types.TextDocumentContentChangePartial(
                    range=types.Range(start=position(text, start), end=position(text, end)), text=new)
                text = text[:start] + new + text[end:]
            client.text_document_did_change(types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[change]))
            if index % 50 == 49:  # let the server catch up now and then, asking for what an editor asks
                at = position(text, len(text) // 2)
                await client.text_document_hover_async(types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=uri), position=at))
                await client.text_document_code_action_async(types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri), range=types.Range(start=at, end=at),
                    context=types.CodeActionContext(diagnostics=[])))
        final = await wait_diagnostics(client, uri, version)
        fresh = uri_of("fresh.py")
        open_doc(client, fresh, text)
        assert await wait_diagnostics(client, fresh, 1) == final  # incremental == from scratch
        probe = uri_of("probe.py")
        open_doc(client, probe, "import torch.nn as nn\nnn.Linear(1, 2)\n")
        await wait_diagnostics(client, probe, 1)
        answer = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=probe), position=pos(1, 4))), 10)
        assert answer.range == rng(1, 0, 1, 9)


@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large, HealthCheck.large_base_example])
@given(steps=script)
def test_random_edit_storm(fixed_env, tmp_path, steps):
    log = tmp_path / "server.log"
    log.unlink(missing_ok=True)
    asyncio.run(storm(fixed_env, log, steps))
    text = log.read_text()
    assert "Traceback" not in text and MARK not in text and " ERROR " not in text, text[-3000:]


HALF_TYPED = [
    "", "\n", "import", "import torch.", "from torch import (", "class A(nn.Module", "def f(:\n  torch.nn.",
    "import torch.nn as nn\nx = nn.Linear(", "import torch.nn as nn\nclass A(nn.Module):\n    def forward(self",
    "x = '''", "😀" * 50, "import torch\n" + "(" * 500 + ")" * 500, "import torch\n" + "[" * 2000,
]


async def test_half_typed_files(client):
    for index, text in enumerate(HALF_TYPED):
        uri = uri_of(f"half{index}.py")
        open_doc(client, uri, text)
        await wait_diagnostics(client, uri, 1)
        for at in (pos(0, 0), pos(1, 5), pos(0, 10_000), pos(99, 0)):
            await client.text_document_hover_async(types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=at))
            await client.text_document_code_action_async(types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri), range=types.Range(start=at, end=at),
                context=types.CodeActionContext(diagnostics=[])))
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri_of("half7.py")), position=pos(1, 7)))
    assert hover.range == rng(1, 4, 1, 13)


async def test_serves_without_a_knowledge_base(tmp_path):
    from tests.lsp.conftest import server_env

    (tmp_path / "empty").mkdir()
    env = server_env(tmp_path / "empty", tmp_path / "missing.sqlite")
    async with session(env) as client:
        uri = uri_of("nokb.py")
        open_doc(client, uri, "import torch.nn as nn\nnn.Linear(1, 2)\n")
        assert await wait_diagnostics(client, uri, 1) == []
        assert await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=pos(1, 4))) is None
        assert [m.message.split(" (")[0] for m in client.messages] == ["msmap: cannot open the knowledge base"]
