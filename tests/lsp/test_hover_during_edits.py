"""Hover never waits for an analysis (issue 27): during a storm of edits, with the analysis of the newest text
held in the worker, every hover is answered from the last analysis, the cursor mapped through the edits made
since to that analysis's text and the name's range back to the latest text; a place the edits made or touched
gets no card. Deterministic: the worker is blocked on an event, and the test counts the analyses that ran."""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest
from lsprotocol import types

from lsp.documents import DocumentStore, LineEdit, position_before, range_after
from lsp.publisher import Publisher
from tests.lsp.test_publisher import Gate


SOURCE = """\
import mindspore as ms
import torch.nn as nn

layer = nn.Linear(3, 4)
dense = ms.nn.Dense(3, 4)
total = 0
"""


def change(line: int, character: int, text: str, end: tuple[int, int] | None = None):
    stop = types.Position(line=end[0], character=end[1]) if end else types.Position(line=line, character=character)
    return types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(line=line, character=character), end=stop), text=text)


class Held(Gate):
    """The worker's analysis (``Gate``: it records each analysed version and blocks while ``open`` is clear)."""

    def __init__(self, engine) -> None:
        super().__init__()
        self.engine = engine

    def __call__(self, doc):
        super().__call__(doc)
        return self.engine.analyze(doc), None


@pytest.fixture
def worker():
    pool = ThreadPoolExecutor(max_workers=1)
    yield pool
    pool.shutdown(wait=True)


def span(found: types.Hover) -> tuple[int, int, int, int]:
    r = found.range
    return r.start.line, r.start.character, r.end.line, r.end.character


async def test_hover_answers_during_a_storm_without_waiting_for_the_analysis(real_kb, worker):
    from kb.analysis import Engine, EngineSettings
    from lsp import lookups
    from lsp.settings import ServerSettings

    held = Held(Engine(real_kb, EngineSettings(device="CPU")))
    store, uri, settings = DocumentStore(), "file:///storm.py", ServerSettings()
    publisher = Publisher(store, held, lambda u, v, payload: None, worker)
    store.open(uri, SOURCE, 1)
    publisher.schedule(uri)
    await asyncio.wait_for(publisher.current(uri), 30)
    held.open.clear()  # the next analysis starts and does not end until the test says so
    store.change(uri, 2, [change(5, 9, " + 1")])  # total = 0 + 1
    publisher.schedule(uri)
    assert await asyncio.to_thread(held.started.wait, 30)

    async def hover(line: int, character: int) -> types.Hover | None:
        # (a bound only against a hang: a hover that waited for the held analysis would never return)
        return await asyncio.wait_for(lookups.hover(publisher, store, real_kb, uri, line, character, settings), 30)

    try:
        lines_above = await storm(store, publisher, hover)
    finally:
        held.open.set()  # (whatever happened, the worker ends)
    assert held.versions[:2] == [1, 2]
    await asyncio.wait_for(publisher.current(uri), 30)
    found = await hover(3 + lines_above, 30)
    assert found is not None and "mindspore.nn.Dense" in found.contents.value


async def storm(store, publisher, hover) -> int:
    """60 edits, a hover after each (the analysis of version 2 held); the lines added above the use."""
    uri, version, lines_above = "file:///storm.py", 2, 0
    for step in range(60):  # the storm: typing after the use, before it on its line, and new lines above it
        version += 1
        if step % 3 == 0:  # layer = nn.Linear(3, 4) and spaces typed at its end
            end = len(store.latest(uri)[1].decode().splitlines()[3 + lines_above])
            store.change(uri, version, [change(3 + lines_above, end, " ")])
        elif step % 3 == 1:
            store.change(uri, version, [change(3 + lines_above, 0, "x")])  # xlayer, xxlayer ... before the use
        else:
            store.change(uri, version, [change(2, 0, "# note\n")])  # a new line above
            lines_above += 1
        publisher.schedule(uri)
        row, typed = 3 + lines_above, (step + 2) // 3  # the use's line now, and the x's typed before it
        found = await hover(row, typed + 11)  # on ``Linear``
        assert found is not None and "mindspore.nn.Dense" in found.contents.value
        assert span(found) == (row, typed + 8, row, typed + 17)
        assert await hover(row, 0) is None or typed == 0  # the x's typed since: no card
        dense = await hover(row + 1, 15)  # a MindSpore name, from the last analysis's text too
        assert dense is not None and span(dense) == (row + 1, 8, row + 1, 19)  # ms.nn.Dense
    held = publisher.compute
    assert held.versions == [1, 2]  # no hover ran or waited for an analysis: version 2's is still held
    assert publisher.snapshots[uri].version == 1
    return lines_above


async def test_hover_before_the_first_analysis_gives_up_after_the_first_wait(real_kb, worker):
    """A just-opened document has nothing older to answer from: hover waits for the first analysis, but no longer
    than ``lookups.FIRST_WAIT``; held past that, no card (and no second analysis was started for it)."""
    from kb.analysis import Engine
    from lsp import lookups
    from lsp.settings import ServerSettings

    held = Held(Engine(real_kb))
    held.open.clear()
    store, uri = DocumentStore(), "file:///first.py"
    publisher = Publisher(store, held, lambda u, v, payload: None, worker)
    store.open(uri, SOURCE, 1)
    publisher.schedule(uri)
    assert await asyncio.to_thread(held.started.wait, 30)
    try:
        assert await asyncio.wait_for(lookups.hover(publisher, store, real_kb, uri, 3, 11, ServerSettings()), 30) \
            is None
    finally:
        held.open.set()
    await asyncio.wait_for(publisher.current(uri), 30)
    assert held.versions == [1]


def test_positions_and_ranges_follow_the_edits():
    store, uri = DocumentStore(), "file:///map.py"
    store.open(uri, "abcdef\nuvwxyz\n", 1)
    store.change(uri, 2, [change(0, 2, "12")])  # ab12cdef
    store.change(uri, 3, [change(1, 3, "\nQ")])  # uvw / Qxyz
    store.change(uri, 4, [change(0, 0, "", end=(0, 1))])  # b12cdef
    edits = store.edits(uri)
    assert store.latest(uri)[1] == b"b12cdef\nuvw\nQxyz\n"
    assert position_before(edits, 1, 0, 0) == (0, 1)  # b
    assert position_before(edits, 1, 0, 1) is None  # 1 (typed)
    assert position_before(edits, 1, 0, 3) == (0, 2)  # c
    assert position_before(edits, 1, 1, 2) == (1, 2)  # w
    assert position_before(edits, 1, 2, 0) is None  # Q (typed)
    assert position_before(edits, 1, 2, 1) == (1, 3)  # x
    assert position_before(edits, 2, 0, 3) == (0, 4)  # c, in version 2's ab12cdef
    rng = types.Range(start=types.Position(line=0, character=3), end=types.Position(line=0, character=6))  # def
    assert range_after(edits, 1, rng) == ((0, 4), (0, 7))
    rng = types.Range(start=types.Position(line=1, character=4), end=types.Position(line=1, character=6))  # yz
    assert range_after(edits, 1, rng) == ((2, 2), (2, 4))
    rng = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=2))  # ab
    assert range_after(edits, 1, rng) is None  # typed into, and its first letter deleted
    rng = types.Range(start=types.Position(line=1, character=0), end=types.Position(line=1, character=3))  # uvw
    assert range_after(edits, 1, rng) is None  # a name typed on at its end is another name
    whole = [LineEdit(5, 0, 0, 0)]  # (a whole new text: nothing is known)
    assert position_before(whole, 4, 0, 0) is None
