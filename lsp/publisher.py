"""Analysis off the event loop, newest version first, and diagnostics published per document.

Every analysis runs in one worker thread (the engine and its documents are only touched
there), so the event loop keeps reading messages and answering hovers while a document is
analysed.  At most one analysis runs at a time and none is queued per version: a change marks
its document *dirty*; when the worker is free, it takes the latest text of a dirty document.
Edits that arrive meanwhile supersede each other (a storm of keystrokes costs one analysis
per worker turn, not one per keystroke), and nothing waits behind a queue of old versions.

The first change is not delayed: the worker starts once the messages already received are
handled (the transport hands a burst over back to back, so a burst costs one analysis).  In a
storm (an analysis ended with its result already superseded by newer edits), the next analysis
waits until the edits pause for ``QUIET`` seconds, or at most ``MAX_DELAY`` after the oldest
change it covers: analyses that would be superseded again are not run back to back, so the
event loop (hovers, completions) is not starved of the interpreter while the user types.

When an analysis ends, its ``Snapshot`` (version, text, analysis, diagnostics) is kept:
hovers are answered from it, never waiting for a newer analysis (``lsp.documents`` maps places
of the latest text to it), and its diagnostics are published when the editor is still at
that version (results for a version the editor has moved past are dropped, not sent).
"""
from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from kb.analysis.document import Document
from kb.analysis.text import LineIndex
from lsp.documents import too_large, too_large_diagnostic
from lsp.safety import MARK

log = logging.getLogger(__name__)
QUIET = 0.05  # seconds without edits before the next analysis, in a storm
MAX_DELAY = 1.0  # seconds: in an endless storm, diagnostics still come this often (plus an analysis)


@dataclass
class Snapshot:
    """One analysed version of a document; never changed once made."""

    version: int
    source: bytes
    analysis: Any
    payload: Any  # what is published (the diagnostics)
    _lines: LineIndex | None = field(default=None, repr=False)

    _document: Document | None = field(default=None, repr=False)

    @property
    def lines(self) -> LineIndex:
        if self._lines is None:
            self._lines = LineIndex(self.source)
        return self._lines

    @property
    def document(self) -> Document:
        """Its text parsed (on the event loop, once: a hover on a MindSpore name reads it, never the worker's
        document, which may be at a newer text)."""
        if self._document is None:
            self._document = Document(self.source)
        return self._document


class Publisher:
    def __init__(self, documents: Any, compute: Callable[[Any], tuple[Any, Any]],
                 send: Callable[[str, int, Any], None], worker: Executor | None = None) -> None:
        self.documents = documents  # an ``lsp.documents.DocumentStore``
        self.compute = compute  # (engine document) -> (analysis, payload); runs in the worker
        self.send = send  # (uri, version, payload) -> None; runs on the event loop
        self.worker = worker  # None: the loop's default executor
        self.snapshots: dict[str, Snapshot] = {}
        self._dirty: dict[str, float] = {}  # uri -> when its oldest unanalysed change arrived
        self._changed: dict[str, float] = {}  # uri -> when its latest change arrived
        self._running: str | None = None  # the uri being analysed
        self._busy = False
        self._waiters: dict[str, list[tuple[int, asyncio.Future]]] = {}
        self.last_ms: float | None = None  # time spent in the last analysis (logs and benchmarks)

    # -- scheduling ------------------------------------------------------------------------
    def schedule(self, uri: str) -> None:
        """(Re)analyse ``uri`` at its latest text, then publish."""
        if uri not in self.documents:
            return
        now = time.perf_counter()
        self._dirty.setdefault(uri, now)
        self._changed[uri] = now
        self._kick()

    def schedule_all(self) -> None:
        for uri in self.documents:
            self.schedule(uri)

    def cancel(self, uri: str) -> None:
        """Forget ``uri`` (it was closed): nothing more is published for it."""
        self._dirty.pop(uri, None)
        self._changed.pop(uri, None)
        self.snapshots.pop(uri, None)
        for _, waiter in self._waiters.pop(uri, []):
            if not waiter.done():
                waiter.set_result(None)

    def _kick(self, storm: bool = False) -> None:
        if self._busy:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (unit tests): analyse at once
            while self._dirty:
                uri = next(iter(self._dirty))
                since = self._dirty.pop(uri)
                entry = self.documents.latest(uri)
                if entry is not None:
                    self._finish(uri, entry[0], since, self._analyse(uri, entry))
            return
        self._busy = True
        if storm:
            loop.call_later(QUIET, self._start_when_quiet)
        else:
            loop.call_soon(self._start)  # after the messages already received: a burst costs one analysis

    def _start_when_quiet(self) -> None:
        """Start the next analysis once the edits pause (see the module's doc)."""
        now = time.perf_counter()
        if self._dirty:
            latest = max(self._changed.get(uri, 0.0) for uri in self._dirty)
            oldest = min(self._dirty.values())
            if now - latest < QUIET and now - oldest < MAX_DELAY:
                asyncio.get_running_loop().call_later(QUIET - (now - latest), self._start_when_quiet)
                return
        self._start()

    def _start(self) -> None:
        while self._dirty:
            uri = next(iter(self._dirty))
            since = self._dirty.pop(uri)
            entry = self.documents.latest(uri)
            if entry is None:
                continue
            self._running = uri
            future = asyncio.get_running_loop().run_in_executor(self.worker, self._analyse, uri, entry)
            future.add_done_callback(functools.partial(self._done, uri, entry[0], since))
            return
        self._busy = False

    def _done(self, uri: str, version: int, since: float, future: asyncio.Future) -> None:
        self._running = None
        self._busy = False
        snapshot = None
        if not future.cancelled():
            snapshot = future.result()
        superseded = uri in self._dirty  # edited again while it ran: a storm
        self._finish(uri, version, since, snapshot)
        if self._dirty:
            self._kick(storm=superseded)

    # -- the worker's part -----------------------------------------------------------------
    def _analyse(self, uri: str, entry: tuple[int, bytes]) -> Snapshot | None:
        version, text = entry
        started = time.perf_counter()
        try:
            why = too_large(text)
            if why is not None:  # one diagnostic says so; nothing is parsed
                return Snapshot(version, text, None, [too_large_diagnostic(why)])
            doc = self.documents.synced(uri, version, text)
            if doc is None:
                return None
            analysis, payload = self.compute(doc)
        except Exception:
            log.exception("%s: diagnostics for %s", MARK, uri)
            return None
        self.last_ms = (time.perf_counter() - started) * 1000
        return Snapshot(version, text, analysis, payload)

    # -- back on the event loop ------------------------------------------------------------
    def _finish(self, uri: str, version: int, since: float, snapshot: Snapshot | None) -> None:
        if snapshot is not None and uri in self.documents:
            self.snapshots[uri] = snapshot
            self.documents.forget_edits(uri, version)
            if self.documents.version(uri) == version and uri not in self._dirty:
                self.send(uri, version, snapshot.payload)
                if log.isEnabledFor(logging.DEBUG):
                    log.debug("timing diagnostics %.3f ms", self.last_ms or 0.0)
                    log.debug("timing change-to-publish %.3f ms", (time.perf_counter() - since) * 1000)
        waiting = self._waiters.pop(uri, [])
        for wanted, waiter in waiting:
            if waiter.done():
                continue
            if snapshot is None or snapshot.version >= wanted:
                waiter.set_result(self.snapshots.get(uri))
            else:
                self._waiters.setdefault(uri, []).append((wanted, waiter))
        if uri in self._waiters and uri not in self._dirty and self._running != uri:
            self.schedule(uri)

    async def current(self, uri: str) -> Snapshot | None:
        """The snapshot of ``uri``'s latest text (waits for its analysis); None if not open."""
        version = self.documents.version(uri)
        if version is None:
            return None
        found = self.snapshots.get(uri)
        if found is not None and found.version >= version and uri not in self._dirty:
            return found
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(uri, []).append((version, waiter))
        if uri not in self._dirty and self._running != uri:
            self.schedule(uri)
        return await waiter

    async def run(self, uri: str, work: Callable[[Any], Any]) -> Any:
        """``work(document)`` in the worker, on the engine document brought to the latest text
        (code actions and fix-all plan edits of the text the editor has); None if not open."""
        entry = self.documents.latest(uri)
        if entry is None:
            return None

        def job() -> Any:
            doc = self.documents.synced(uri, *entry)
            return None if doc is None else work(doc)

        return await asyncio.get_running_loop().run_in_executor(self.worker, job)
