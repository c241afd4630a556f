"""Stdio transport that lets ``$/cancelRequest`` reach queued requests in time.

pygls' own stdio reader hands every header line and body to a thread-pool round trip, so
the event loop runs each request's task before it has even read the next message, and a
cancel notification that is already waiting in the pipe arrives too late.  Here a reader
thread feeds whole chunks into an ``asyncio.StreamReader``: messages already received are
parsed back to back, a request's handler task starts only after them, and pygls cancels a
task whose cancel notification was in the same burst (it answers ``RequestCancelled``).
"""
from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from typing import BinaryIO, Optional

from pygls.io_ import StdoutWriter, run_async

log = logging.getLogger(__name__)


class ChunkReader:
    """The ``readline``/``readexactly`` pair pygls' message loop awaits."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.stream = stream

    async def readline(self) -> bytes:
        return await self.stream.readline()

    async def readexactly(self, n: int) -> bytes:
        try:
            return await self.stream.readexactly(n)
        except asyncio.IncompleteReadError:
            return b""


def _pump(fd: int, loop: asyncio.AbstractEventLoop, stream: asyncio.StreamReader) -> None:
    try:
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            loop.call_soon_threadsafe(stream.feed_data, chunk)
    except (OSError, RuntimeError) as exc:  # closed pipe, or the loop is gone
        log.debug("stdin reader stopped: %s", exc)
    finally:
        try:
            loop.call_soon_threadsafe(stream.feed_eof)
        except RuntimeError:
            pass


async def _serve(server, stdin: BinaryIO, stop: threading.Event) -> None:
    loop = asyncio.get_running_loop()
    stream = asyncio.StreamReader(limit=1 << 24)
    threading.Thread(target=_pump, args=(stdin.fileno(), loop, stream), name="msmap-stdin", daemon=True).start()
    await run_async(stop_event=stop, reader=ChunkReader(stream), protocol=server.protocol,
                    logger=log, error_handler=server.report_server_error)


def start_stdio(server, stdin: Optional[BinaryIO] = None, stdout: Optional[BinaryIO] = None) -> None:
    """Serve ``server`` (a pygls ``LanguageServer``) over stdin/stdout until exit."""
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    try:
        asyncio.run(_serve(server, stdin or sys.stdin.buffer, threading.Event()))
    except BrokenPipeError:
        log.error("connection to the client is lost; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()
