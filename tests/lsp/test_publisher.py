"""The publisher and the open-document store, without a client: analysis in a worker thread,
edits superseding queued work, stale results dropped, hovers answered from the last analysis."""
from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from lsprotocol import types

from lsp.documents import DocumentStore, line_after, line_before
from lsp.publisher import Publisher

pytestmark = pytest.mark.asyncio


def change(line: int, character: int, text: str, end: tuple[int, int] | None = None):
    stop = types.Position(line=end[0], character=end[1]) if end else types.Position(line=line, character=character)
    return types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(line=line, character=character), end=stop), text=text)


class Gate:
    """A compute function for the worker that records each analysed version and, while closed,
    blocks until the test opens it (an analysis that takes long)."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.open.set()
        self.started = threading.Event()
        self.versions: list[int] = []

    def __call__(self, doc):
        self.versions.append(doc.version)
        self.started.set()
        assert self.open.wait(10)
        return None, doc.version


async def settle(publisher: Publisher, uri: str) -> None:
    await asyncio.wait_for(publisher.current(uri), 10)
    for _ in range(5):  # the done-callbacks of the last job
        await asyncio.sleep(0)


@pytest.fixture
def worker():
    pool = ThreadPoolExecutor(max_workers=1)
    yield pool
    pool.shutdown(wait=True)


async def test_a_burst_costs_one_analysis(worker):
    store, sent, gate, uri = DocumentStore(), [], Gate(), "file:///burst.py"
    publisher = Publisher(store, gate, lambda u, v, payload: sent.append(payload), worker)
    store.open(uri, "x = 1\n", 1)
    publisher.schedule(uri)
    for version in range(2, 6):  # received in the same burst as the open
        store.change(uri, version, [change(0, 5, "1")])
        publisher.schedule(uri)
    await settle(publisher, uri)
    assert gate.versions == [5] and sent == [5]


async def test_edits_during_an_analysis_supersede_each_other(worker):
    """While version 1 is analysed, versions 2..20 arrive: the next analysis takes the latest text at
    once (no analysis per queued version), and only what matches the editor's version is published."""
    store, sent, gate, uri = DocumentStore(), [], Gate(), "file:///storm.py"
    publisher = Publisher(store, gate, lambda u, v, payload: sent.append(payload), worker)
    store.open(uri, "x = 1\n", 1)
    gate.open.clear()
    publisher.schedule(uri)
    assert await asyncio.to_thread(gate.started.wait, 10)
    for version in range(2, 21):
        store.change(uri, version, [change(0, 5, str(version))])
        publisher.schedule(uri)
        await asyncio.sleep(0)  # the event loop goes on while the worker is busy
    gate.open.set()
    await settle(publisher, uri)
    assert gate.versions == [1, 20]
    assert sent == [20]  # version 1's result arrived after the editor moved on: dropped
    assert store.latest(uri) == (20, ("x = 1" + "".join(str(v) for v in range(20, 1, -1)) + "\n").encode())


async def test_closed_documents_are_not_published(worker):
    store, sent, gate, uri = DocumentStore(), [], Gate(), "file:///closed.py"
    publisher = Publisher(store, gate, lambda u, v, payload: sent.append(payload), worker)
    store.open(uri, "x = 1\n", 1)
    gate.open.clear()
    publisher.schedule(uri)
    assert await asyncio.to_thread(gate.started.wait, 10)
    publisher.cancel(uri)
    store.close(uri)
    gate.open.set()
    await asyncio.sleep(0.2)
    assert sent == [] and uri not in publisher.snapshots and await publisher.current(uri) is None


async def test_line_edits_map_lines_between_versions():
    store, uri = DocumentStore(), "file:///lines.py"
    store.open(uri, "a\nb\nc\nd\ne\n", 1)
    store.change(uri, 2, [change(1, 1, "\nb2\nb3")])  # line 1 becomes three lines
    store.change(uri, 3, [change(5, 0, "x")])  # typing on old line 3 ("d", now line 5)
    assert store.latest(uri) == (3, b"a\nb\nb2\nb3\nc\nxd\ne\n")
    edits = store.edits(uri)
    assert [line_before(edits, 1, n) for n in range(7)] == [0, None, None, None, 2, None, 4]
    assert [line_after(edits, 1, n) for n in range(5)] == [0, None, 4, None, 6]
    assert [line_before(edits, 2, n) for n in range(7)] == [0, 1, 2, 3, 4, None, 6]
    store.forget_edits(uri, 2)
    assert [e.version for e in store.edits(uri)] == [3]
    store.change(uri, 4, [types.TextDocumentContentChangeWholeDocument(text="new\n")])
    assert line_before(store.edits(uri), 3, 0) is None  # a whole new text: nothing is known


async def test_hover_answers_from_the_last_analysis_while_a_new_one_is_pending(fixed_env, worker):
    """A hover on a line no edit touched is answered at once from the last analysis, its range moved
    to where the use is now; a hover on an edited line gets no card at once (the old analysis does not
    know that text, and a hover never waits for the new one) rather than a wrong card."""
    from kb.analysis import Catalog, Engine
    from kb.query import KB
    from lsp import lookups
    from lsp.settings import ServerSettings

    kb = KB.open(db=Path(fixed_env["MSMAP_DB"]), data=Path(fixed_env["MSMAP_DATA"]))
    engine, settings = Engine(Catalog(kb)), ServerSettings()
    gate = Gate()

    def compute(doc):
        gate(doc)
        return engine.analyze(doc), None

    store, uri = DocumentStore(), "file:///hover.py"
    publisher = Publisher(store, compute, lambda u, v, payload: None, worker)
    store.open(uri, "import torch.nn as nn\n\nlayer = nn.Linear(3, 4)\n", 1)
    publisher.schedule(uri)
    await settle(publisher, uri)
    gate.open.clear()
    store.change(uri, 2, [change(1, 0, "x = 1\ny = 2\n")])  # two new lines above the use
    publisher.schedule(uri)
    assert await asyncio.to_thread(gate.started.wait, 10)

    async def hover(line: int, character: int) -> types.Hover | None:
        return await lookups.hover(publisher, store, None, uri, line, character, settings)

    found = await asyncio.wait_for(hover(4, 11), 1)  # answered while version 2 is being analysed
    assert publisher.snapshots[uri].version == 1
    assert found is not None and "mindspore.nn.Dense" in found.contents.value
    assert found.range == types.Range(start=types.Position(line=4, character=8),
                                      end=types.Position(line=4, character=17))
    assert await hover(1, 2) is None  # an edited line: the old analysis does not know it
    gate.open.set()
    await settle(publisher, uri)
    found = await hover(4, 11)
    assert found is not None and found.range.start.line == 4


async def test_a_storm_waits_for_a_pause_before_the_next_analysis(worker, monkeypatch):
    """Edits keep arriving while an analysis runs (a storm): the next analysis does not start at once
    (it would be superseded again, and would hold the interpreter while hovers wait) but once the
    edits pause for ``QUIET``; an edit after a pause is analysed at once again."""
    from lsp import publisher as module

    monkeypatch.setattr(module, "QUIET", 0.05)
    monkeypatch.setattr(module, "MAX_DELAY", 5.0)
    store, sent, gate, uri = DocumentStore(), [], Gate(), "file:///storm.py"
    publisher = Publisher(store, gate, lambda u, v, payload: sent.append(payload), worker)
    store.open(uri, "x = 1\n", 1)
    gate.open.clear()
    publisher.schedule(uri)
    assert await asyncio.to_thread(gate.started.wait, 10)
    store.change(uri, 2, [change(0, 5, "2")])
    publisher.schedule(uri)
    gate.open.set()  # version 1 ends superseded by version 2: a storm
    for version in range(3, 13):  # an edit every 10 ms: never a pause of QUIET
        await asyncio.sleep(0.01)
        store.change(uri, version, [change(0, 5, str(version))])
        publisher.schedule(uri)
        assert gate.versions == [1], gate.versions  # nothing analysed while the edits go on
    await settle(publisher, uri)
    assert gate.versions == [1, 12] and sent == [12]
    store.change(uri, 13, [change(0, 5, "13")])  # after the pause: analysed at once
    publisher.schedule(uri)
    await asyncio.sleep(0.01)
    await settle(publisher, uri)
    assert gate.versions == [1, 12, 13] and sent == [12, 13]


async def test_an_endless_storm_still_gets_diagnostics(worker, monkeypatch):
    from lsp import publisher as module

    monkeypatch.setattr(module, "QUIET", 0.05)
    monkeypatch.setattr(module, "MAX_DELAY", 0.1)
    store, sent, gate, uri = DocumentStore(), [], Gate(), "file:///endless.py"
    publisher = Publisher(store, gate, lambda u, v, payload: sent.append(payload), worker)
    store.open(uri, "x = 1\n", 1)
    gate.open.clear()
    publisher.schedule(uri)
    assert await asyncio.to_thread(gate.started.wait, 10)
    store.change(uri, 2, [change(0, 5, "2")])
    publisher.schedule(uri)
    gate.open.set()
    for version in range(3, 40):  # 370 ms of edits 10 ms apart
        await asyncio.sleep(0.01)
        store.change(uri, version, [change(0, 5, str(version))])
        publisher.schedule(uri)
    assert len(gate.versions) >= 3, gate.versions  # one analysis per MAX_DELAY at least
