"""Early start: the first diagnostics are published before pygls and lsprotocol are loaded.

Loading the protocol library is most of a start (lsprotocol builds ~570 classes).  A client sends
``initialize``, waits for the answer, then sends ``initialized`` and opens its first document.
pygls' answer to ``initialize`` depends only on the client's capabilities (for one version of
msmap, pygls and lsprotocol), so the server keeps the answer it gave (``remember``).  A start that
finds the answer for its client's capabilities gives it at once, reads the first ``didOpen`` of a
Python file, analyses the file and publishes its diagnostics with the engine and serializer the
server uses, and only then loads pygls.  Everything read from stdin is handed to pygls as if it
had just arrived; the server skips what was done here (``Handover``) and does not answer
``initialize`` twice.  Any other course - no remembered answer, settings to warn about, another
message first, a non-Python document, a malformed message, a silent client - ends the early
start where it is, and pygls takes over from the same bytes.  This module imports neither pygls nor lsprotocol.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import select
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Optional

log = logging.getLogger(__name__)
WAIT = 0.1  # seconds to wait for the client's next message once it has the initialize answer
KEPT = 20  # answers remembered (one per set of client capabilities)


@dataclass
class Handover:
    """What the early start read, answered and built, for the server to take over."""

    raw: bytes = b""  # every byte read from stdin, for pygls to read again
    answered: Any = None  # the id of the initialize request answered here (pygls must not answer again)
    key: Optional[str] = None  # the capabilities' key: where pygls' own answer is remembered
    kb: Any = None
    engine: Any = None
    serializer: Any = None
    document: Any = None  # the first document, analysed, its diagnostics published


def answers_path() -> Path:
    from kb.paths import cache_dir

    return cache_dir() / "lsp-initialize.json"


def capabilities_key(params: Any) -> str:
    """The client's capabilities, with what else makes pygls' answer: the files of pygls, lsprotocol
    and this server (their sizes and times: an upgrade or an edit of the features changes the key)."""
    import importlib.util

    folders = [Path(__file__).parent]
    for package in ("pygls", "lsprotocol"):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            folders.append(Path(list(spec.submodule_search_locations)[0]))
    folders.append(folders[1] / "protocol" if len(folders) > 1 else folders[0])
    stamps = [[folder.name, sorted((e.name, *_size_and_time(e)) for e in os.scandir(folder) if e.name.endswith(".py"))]
              for folder in folders if folder.is_dir()]
    capabilities = params.get("capabilities") if isinstance(params, dict) else None
    text = json.dumps([stamps, capabilities], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _size_and_time(entry: os.DirEntry) -> tuple[int, int]:
    stat = entry.stat()
    return stat.st_size, stat.st_mtime_ns


def _answers(path: Path) -> dict[str, Any]:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def remember(key: str, result: Any, path: Optional[Path] = None) -> None:
    """Keep pygls' answer to an ``initialize`` with these capabilities (the server calls this)."""
    path = path or answers_path()
    found = _answers(path)
    if found.get(key) == result:
        return
    if key in found:  # (cannot happen unless the files' stamps lie: it is corrected for the next start)
        log.warning("the remembered answer to initialize was out of date; corrected in %s", path)
    found.pop(key, None)
    found[key] = result
    while len(found) > KEPT:
        found.pop(next(iter(found)))
    from kb.paths import write_atomically

    try:
        write_atomically(path, json.dumps(found).encode())
    except OSError as exc:
        log.warning("cannot remember the initialize answer in %s: %s", path, exc)


class Frames:
    """LSP messages read from a file descriptor; every byte read is kept for the handover."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.data = bytearray()
        self.at = 0  # start of the first message not yet returned

    def next(self, timeout: Optional[float]) -> Optional[dict]:
        """The next message, or None (nothing within ``timeout``, end of input, or not a plain message)."""
        while True:
            head_end = self.data.find(b"\r\n\r\n", self.at)
            if head_end >= 0:
                length = self._length(bytes(self.data[self.at:head_end]))
                if length is None:
                    return None
                start = head_end + 4
                if len(self.data) >= start + length:
                    try:
                        message = json.loads(bytes(self.data[start:start + length]))
                    except ValueError:
                        return None
                    self.at = start + length
                    return message if isinstance(message, dict) else None
            if not self._read(timeout):
                return None

    @staticmethod
    def _length(head: bytes) -> Optional[int]:
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length" and value.strip().isdigit():
                return int(value.strip())
        return None

    def _read(self, timeout: Optional[float]) -> bool:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return False
        chunk = os.read(self.fd, 1 << 16)
        self.data += chunk
        return bool(chunk)


def run(fd: int, out: BinaryIO, db: Optional[str] = None, answers: Optional[Path] = None) -> Handover:
    """Serve the start of a session on ``fd``/``out`` as far as it goes without pygls (see above)."""
    frames = Frames(fd)
    handover = Handover()
    try:
        _serve(frames, out, db, answers or answers_path(), handover)
    except Exception:  # the early start only saves time: never let it cost the session
        log.exception("early start stopped; the server takes over")
    handover.raw = bytes(frames.data)
    return handover


def _serve(frames: Frames, out: BinaryIO, db: Optional[str], answers: Path, handover: Handover) -> None:
    first = frames.next(None)
    if first is None or first.get("method") != "initialize" or "id" not in first:
        return
    params = first.get("params") if isinstance(first.get("params"), dict) else {}
    handover.key = capabilities_key(params)
    answer = _answers(answers).get(handover.key)
    if answer is None:
        return  # pygls answers, and ``remember`` keeps its answer for the next start
    _write(out, json.dumps({"jsonrpc": "2.0", "id": first["id"], "result": answer}))
    handover.answered = first["id"]

    from lsp.diagnostics import Serializer
    from lsp.documents import is_python
    from lsp.settings import parse_settings, section_of

    settings, warnings = parse_settings(section_of(params.get("initializationOptions")))
    if warnings:  # the server shows them on ``initialized``, before any diagnostics: leave it all to it
        return
    _open_engine(db, settings, handover)
    second = frames.next(WAIT)
    if second is None or second.get("method") != "initialized":
        return
    third = frames.next(WAIT)
    item = (third.get("params") or {}).get("textDocument") if third and third.get("method") == "textDocument/didOpen" \
        else None
    if not isinstance(item, dict) or handover.engine is None or not is_python(item.get("languageId"), item.get("uri")):
        return
    from kb.analysis import Document

    text, uri, version = item.get("text"), item.get("uri"), item.get("version")
    if not isinstance(text, str) or not isinstance(uri, str) or not isinstance(version, int):
        return
    document = Document(text, uri=uri, version=version)
    handover.serializer = Serializer(settings)
    _write(out, handover.serializer.publish_json(uri, version, handover.engine.analyze(document).uses))
    handover.document = document


def _open_engine(db: Optional[str], settings: Any, handover: Handover) -> None:
    from kb.analysis import Engine
    from kb.query import KB

    started = time.perf_counter()
    try:
        handover.kb = KB.open(db=Path(db) if db else None)
    except Exception as exc:  # the server reports it when it tries again
        log.info("early start: no knowledge base (%s)", exc)
        return
    log.info("knowledge base %s opened in %.0f ms (early start)", handover.kb.path, (time.perf_counter() - started) * 1000)
    handover.engine = Engine(handover.kb, settings.engine())


def _write(out: BinaryIO, body: str) -> None:
    """One framed message (``body`` is ASCII JSON, as ``json.dumps`` writes it)."""
    out.write(f"Content-Length: {len(body)}\r\n\r\n{body}".encode("ascii"))
    out.flush()
