"""Debounced, per-document diagnostics.

Every change (re)starts the publication of its document; when it runs, the document is
analysed and its diagnostics published, but only if the document is still open and still
at the version it was scheduled for.  Results for a version the editor has moved past are
dropped instead of sent.

The debounce needs no timer: the transport (``lsp.transport``) hands over every message
already received back to back, before the event loop runs anything else, so a publication
scheduled "soon" runs after the whole burst and costs one analysis.  Keystrokes themselves
are tens of milliseconds apart, more than an analysis takes, so a timer (it used to be 5 ms)
merged nothing more and only delayed every publication.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from lsp.safety import MARK

log = logging.getLogger(__name__)

DELAY = 0.0  # seconds; 0: once the messages already received are handled (see above)


class Publisher:
    def __init__(self, documents: Any, compute: Callable[[Any], Any], send: Callable[[Any, Any], None],
                 delay: float = DELAY) -> None:
        self.documents = documents
        self.compute = compute  # document -> what to send (the serialized notification)
        self.send = send  # (document, what compute returned) -> None
        self.delay = delay
        self._timers: dict[str, asyncio.Handle] = {}
        self._since: dict[str, float] = {}  # first unpublished change per document (for timings)
        self.last_ms: float | None = None  # time spent in the last analysis, for logs and benchmarks

    def schedule(self, uri: str, delay: float | None = None) -> None:
        """Publish ``uri`` after ``delay`` seconds (default ``DELAY``); 0: once the messages already
        received are handled."""
        version = self.documents.version(uri)  # (not ``get``: the changes stay pending until the run)
        if version is None:
            return
        self.cancel(uri)
        self._since.setdefault(uri, time.perf_counter())
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (unit tests): publish at once
            self._run(uri, version)
            return
        delay = self.delay if delay is None else delay
        self._timers[uri] = loop.call_later(delay, self._run, uri, version) if delay > 0 \
            else loop.call_soon(self._run, uri, version)

    def schedule_all(self) -> None:
        for doc in self.documents:
            self.schedule(doc.uri)

    def cancel(self, uri: str) -> None:
        """Forget the pending publication of ``uri`` (it was closed, or a newer change restarts it)."""
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()

    def _run(self, uri: str, version: int) -> None:
        self._timers.pop(uri, None)
        if self.documents.version(uri) != version:
            return  # closed, or a newer change has its own timer
        doc = self.documents.get(uri)
        self._publish(uri, doc, version)

    def _publish(self, uri: str, doc: Any, version: int) -> None:
        started = time.perf_counter()
        try:
            payload = self.compute(doc)
        except Exception:
            log.exception("%s: diagnostics for %s", MARK, uri)
            return
        self.last_ms = (time.perf_counter() - started) * 1000
        if self.documents.get(uri) is doc and doc.version == version:
            self.send(doc, payload)
            since = self._since.pop(uri, started)
            if log.isEnabledFor(logging.DEBUG):
                log.debug("timing diagnostics %.3f ms", self.last_ms)
                log.debug("timing change-to-publish %.3f ms", (time.perf_counter() - since) * 1000)
