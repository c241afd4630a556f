"""Stdio transport that lets ``$/cancelRequest`` reach queued requests in time.

pygls' own stdio reader hands every header line and body to a thread-pool round trip, so
the event loop runs each request's task before it has even read the next message, and a
cancel notification that is already waiting in the pipe arrives too late.  Here a reader
thread feeds whole chunks into an ``asyncio.StreamReader``: messages already received are
parsed back to back, a request's handler task starts only after them, and pygls cancels a
task whose cancel notification was in the same burst (it answers ``RequestCancelled``).

The reader thread also checks the framing (``Framer``) and hands pygls only well-formed frames.
A malformed header (no or a non-numeric ``Content-Length``, garbage between messages) is
skipped up to the next ``Content-Length`` header; a length that runs into the next message's
header, or stops short of it, is corrected when what lies between is one JSON message, and that
message is skipped otherwise.  Each case is logged as an error naming what was wrong; the
server goes on reading, so the messages after it are answered.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import sys
import threading
from typing import BinaryIO

from pygls.io_ import StdoutWriter, run_async

log = logging.getLogger(__name__)
# bytes: a Content-Length above this is taken as a framing error (its message is skipped).  A parsed
# message costs about 4x its size (60 MB: 244 MB peak), and a document this large is not analysed anyway.
MAX_BODY = 1 << 26
MAX_HEAD = 1 << 16  # bytes without a blank line: not a header
# a Content-Length line: never inside a JSON text (a raw line break cannot be in a string); bounded
# in length, so a search that goes on where the last one stopped need only step back OVERLAP bytes
NEXT_HEADER = re.compile(rb"(content-length:[ \t]{0,16}\d{1,20}[ \t]{0,16}\r\n)", re.IGNORECASE)
OVERLAP = 80  # > the longest NEXT_HEADER match
HEADER_START = re.compile(rb"[A-Za-z][A-Za-z0-9-]*:")


def canonical(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def is_json(body: bytes) -> bool:
    try:
        json.loads(body)
    except ValueError:
        return False
    return True


class Framer:
    """Bytes from the client in, well-formed frames out (see the module's doc)."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        # (start, end): a search for the next header from ``start`` found none before ``end``.  A
        # long message arrives in many chunks; each search goes on from there, so reading it is
        # linear in its size (searching from its start again per chunk was quadratic: 56 s for 20 MB).
        self.searched: tuple[int, int] | None = None

    def _consume(self, count: int) -> None:
        del self.buffer[:count]
        self.searched = None

    def feed(self, chunk: bytes) -> list[bytes]:
        self.buffer += chunk
        frames: list[bytes] = []
        while True:
            progress, frame = self._step()
            if frame is not None:
                frames.append(frame)
            if not progress:
                return frames

    def _next_header(self, start: int, end: int | None = None) -> int | None:
        """Where the next ``Content-Length`` header line begins, at or after ``start``."""
        stop = len(self.buffer) if end is None else end
        begin = start
        if self.searched is not None and self.searched[0] == start:
            begin = max(start, self.searched[1] - OVERLAP)
        # A header line ends with CR LF, which a JSON text holds only as whitespace between tokens:
        # look for those (a plain byte search) and match the pattern just before each.
        line_end = self.buffer.find(b"\r\n", begin, stop)
        while line_end >= 0:
            found = NEXT_HEADER.search(self.buffer, max(begin, line_end + 2 - OVERLAP), line_end + 2)
            if found:
                return found.start(1)
            line_end = self.buffer.find(b"\r\n", line_end + 1, stop)
        self.searched = (start, max(stop, self.searched[1] if self.searched and self.searched[0] == start else 0))
        return None

    def _resync(self, why: str) -> bool:
        at = self._next_header(1)
        if at is None:
            keep = self.buffer[-32:] if len(self.buffer) > 32 else b""
            log.error("framing error: %s; skipped %d bytes while looking for the next header", why,
                      len(self.buffer) - len(keep))
            self.buffer = bytearray(keep)
            self.searched = None
            return False
        log.error("framing error: %s; skipped %d bytes up to the next header", why, at)
        self._consume(at)
        return True

    def _step(self) -> tuple[bool, bytes | None]:
        """(whether to go on, a frame or None)."""
        buf = self.buffer
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            if len(buf) > MAX_HEAD or (buf[:1] and not HEADER_START.match(buf[:64]) and b"\n" in buf):
                return self._resync("no message header"), None
            return False, None
        length, problem = None, None
        for line in bytes(buf[:end]).split(b"\r\n"):
            name, colon, value = line.partition(b":")
            if not colon or not HEADER_START.match(line):
                problem = f"not a header line: {line[:60]!r}"
            elif name.strip().lower() == b"content-length":
                value = value.strip()
                length = int(value) if value.isdigit() and len(value) <= 10 else None
                if length is None:
                    problem = f"Content-Length is not a number: {value[:30]!r}"
        if problem is None and length is None:
            problem = "no Content-Length header"
        if problem is None and length is not None and length > MAX_BODY:
            problem = f"Content-Length {length} is too large"
        if problem is not None or length is None:
            return self._resync(problem or "bad header"), None
        start = end + 4
        inside = self._next_header(start, min(len(buf), start + length + 32))
        if inside is not None and inside < start + length:  # the next message begins inside this one
            return True, self._recover(start, inside, f"Content-Length {length} runs into the next message")
        if len(buf) < start + length:
            return False, None
        after = buf[start + length:start + length + 64].lstrip(b"\r\n")
        if after and not HEADER_START.match(after) and not is_json(bytes(buf[start:start + length])):
            # the body goes on: the length is too small
            following = self._next_header(start + length)
            if following is None:
                return False, None  # wait for the next header to tell where this message ends
            return True, self._recover(start, following, f"Content-Length {length} stops short of the message")
        body = bytes(buf[start:start + length])
        self._consume(start + length)
        return True, canonical(body)

    def _recover(self, start: int, stop: int, why: str) -> bytes | None:
        body = bytes(self.buffer[start:stop]).strip()
        self._consume(stop)
        if is_json(body):
            log.error("framing error: %s; read the %d bytes before it as the message", why, len(body))
            return canonical(body)
        log.error("framing error: %s; skipped %d bytes that are not a JSON message", why, len(body))
        return None


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
    framer = Framer()
    try:
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            frames = framer.feed(chunk)
            if frames:
                loop.call_soon_threadsafe(stream.feed_data, b"".join(frames))
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


def start_stdio(server, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
    """Serve ``server`` (a pygls ``LanguageServer``) over stdin/stdout until exit; returns the exit
    code (0 after ``shutdown`` then ``exit``, 1 otherwise)."""
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    code = 1
    try:
        asyncio.run(_serve(server, stdin or sys.stdin.buffer, threading.Event()))
    except BrokenPipeError:
        log.error("connection to the client is lost; shutting down")
    except KeyboardInterrupt:
        pass
    except SystemExit as exit_:  # the ``exit`` notification
        code = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        server.shutdown()
    return code
