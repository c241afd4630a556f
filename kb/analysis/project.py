"""Files of a project: which to look at, how to read them, and scanning them in parallel.

Directory walks skip hidden directories, virtual environments (``venv``,
``.venv``, any directory holding ``pyvenv.cfg``), ``__pycache__`` and
``site-packages``, plus ``--exclude`` globs.  Directory symlinks are not
followed, so a symlink loop cannot trap the walk; a file that cannot be read
(dangling link, link loop, permission, a directory named ``x.py``, binary,
not UTF-8) becomes a per-file error and the scan goes on.

Scans run in worker processes: each opens the knowledge base once, takes the next
file (largest first) from a shared counter and sends its reports back in batches;
a worker that dies costs the files it had not reported, which say so, never the
scan.  Conversions use a process pool (their output is streamed in order).  A
file without the word ``torch`` is never parsed, unless it belongs to a project that
imports torch elsewhere (``project_settings``): its tensor methods are guessed then.
"""
from __future__ import annotations

import fnmatch
import multiprocessing
import multiprocessing.connection
import operator
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kb.analysis import lineends
from kb.analysis.imports import mentions_roots
from kb.analysis.leftovers import left_by_convert, unmarked_references
from kb.analysis.settings import EngineSettings
from kb.analysis.siblingclasses import imported_classes
from kb.analysis.sourcefile import BOM as BOM  # re-exported for msmap convert
from kb.analysis.sourcefile import MAX_SOURCE_BYTES, read_source, set_limit
from kb.analysis.starimports import explicit_star_imports

SKIP_DIRS = frozenset({"venv", ".venv", "__pycache__", "site-packages", "node_modules"})


USE_FIELDS = ("torch", "kind", "category", "guess", "line", "column", "end_line", "end_column",
              "target", "relation", "reason", "fix", "left")  # the keys of a ``use_row``
_ROW_VALUES = operator.itemgetter(*USE_FIELDS)


@dataclass
class FileReport:
    path: str
    uses: list[dict[str, Any]] = field(default_factory=list)  # ``use_row``s
    error: str | None = None
    lines: int = 0

    def __reduce__(self) -> tuple:
        # From a scan worker to the parent, rows travel as tuples: the parent spends a third of
        # the time it would unpickling dicts, time taken from the workers on a 2-core machine.
        return _report, (self.path, [_ROW_VALUES(row) for row in self.uses], self.error, self.lines)


def _report(path: str, rows: list[tuple], error: str | None, lines: int) -> FileReport:
    return FileReport(path, [dict(zip(USE_FIELDS, row, strict=True)) for row in rows], error, lines)


def excluded(path: Path, root: Path, patterns: list[str]) -> bool:
    if not patterns:
        return False
    try:
        relative = path.relative_to(root).as_posix()
    except ValueError:
        relative = path.as_posix()
    return any(fnmatch.fnmatch(relative, p) or fnmatch.fnmatch(path.name, p) or fnmatch.fnmatch(path.as_posix(), p)
               for p in patterns)


def python_files(paths: Iterable[str | Path], exclude: Iterable[str] = ()) -> Iterator[Path]:
    """Python files under ``paths`` in a stable order (files given by name are always kept)."""
    patterns = list(exclude)
    for given in paths:
        given = Path(given)
        if given.is_dir():
            yield from _walk(given, patterns)
        else:
            yield given


def _walk(root: Path, patterns: list[str]) -> Iterator[Path]:
    unreadable: list[str] = []  # folders os.walk could not list: yielded, so each is reported
    for folder, dirs, files in os.walk(root, followlinks=False, onerror=lambda exc: unreadable.append(exc.filename)):
        yield from (Path(name) for name in unreadable)
        unreadable.clear()
        here = Path(folder)
        # A directory named like a module (x.py) is reported as a file that cannot be read.
        files = files + [d for d in dirs if d.endswith(".py")]
        dirs[:] = sorted(
            d for d in dirs
            if not d.startswith(".") and d not in SKIP_DIRS and not d.endswith(".py")
            and not os.path.exists(here / d / "pyvenv.cfg")  # False, not an error, when unreadable
            and not excluded(here / d, root, patterns)
        )
        for name in sorted(files):
            if name.endswith(".py") and not excluded(here / name, root, patterns):
                yield here / name
    yield from (Path(name) for name in unreadable)


def use_row(use: Any, left: bool = False) -> dict[str, Any]:
    """A use as plain data for reports (1-based lines and UTF-16 columns); ``left``: convert leaves it
    for a human (``leftovers.left_by_convert``)."""
    return {
        "torch": use.torch_name, "kind": use.kind, "category": use.category, "guess": use.guess,
        "line": use.range.start.line + 1, "column": use.range.start.character + 1,
        "end_line": use.range.end.line + 1, "end_column": use.range.end.character + 1,
        "target": use.api, "relation": use.relation, "reason": use.reason, "fix": use.title or None, "left": left,
    }


# -- workers -------------------------------------------------------------------------
_ENGINE: Any = None


def open_kb(spec: Any) -> Any:
    """A knowledge base from a spec: a DB path (opened here, without verification results, which
    analysis never reads) or a ready object."""
    if isinstance(spec, (str, Path)):
        from kb.query import KB

        return KB(Path(spec), results=False)
    return spec


def _init_worker(spec: Any, settings: EngineSettings, max_bytes: int = MAX_SOURCE_BYTES) -> None:
    global _ENGINE
    from kb.analysis.engine import Engine

    _ENGINE = Engine(open_kb(spec), settings)
    set_limit(max_bytes)  # inputs and the siblings they follow alike


def project_settings(files: Iterable[str | Path], settings: EngineSettings,
                     max_bytes: int = MAX_SOURCE_BYTES) -> EngineSettings:
    """``settings`` for the files of one project: when one of them imports torch, the others
    (a ``utils.py`` with ``output.topk(5, 1)``) receive its tensors, so their tensor methods are
    guessed as in a file that imports torch (``EngineSettings.project_tensor_files``)."""
    for path in files:
        data, _ = read_source(path, max_bytes)
        if data is not None and TORCH_IMPORT.search(data):
            return replace(settings, project_tensor_files=True)
    return settings


def _worth_analysing(engine: Any, data: bytes) -> bool:
    settings = getattr(engine, "settings", None)
    return mentions_roots(data) or bool(getattr(settings, "project_tensor_files", False))


def _init_child(spec: Any, settings: EngineSettings, max_bytes: int) -> None:
    """A worker process: Ctrl-C is the parent's to handle (it stops the workers), so a worker
    never prints a traceback of its own."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _init_worker(spec, settings, max_bytes)


def scan_file(engine: Any, path: str | Path) -> FileReport:
    report = FileReport(str(path))
    data, error = read_source(path)
    if data is None:
        report.error = error
        return report
    data = lineends.for_analysis(data)
    report.lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    if not _worth_analysing(engine, data):
        return report
    try:
        analysis = engine.analyze(data)
        left = left_by_convert(analysis)
        report.uses = [use_row(u, id(u) in left) for u in analysis.uses if u.counts]
    except Exception as exc:  # never lose the whole scan to one file
        report.error = f"internal error while analysing: {type(exc).__name__}: {exc}"
        return report
    if getattr(analysis, "error", None):  # the engine failed softly (a broken KB): never "0 uses"
        report.error = f"internal error while analysing: {analysis.error}"
    return report


def _scan_one(path: str) -> FileReport:
    return scan_file(_ENGINE, path)


def scan_files(files: list[Path], spec: Any, settings: EngineSettings, jobs: int | None = None,
               progress: Callable[[int, int], None] | None = None,
               max_bytes: int = MAX_SOURCE_BYTES) -> list[FileReport]:
    """Scan ``files`` (in parallel when worth it); results keep the input order."""
    jobs = max(1, jobs or os.cpu_count() or 1)
    names = [str(f) for f in files]
    results: list[FileReport] = []
    if jobs == 1 or len(names) < 4 * jobs:
        _init_worker(spec, settings, max_bytes)
        for index, name in enumerate(names):
            results.append(_scan_one(name))
            if progress:
                progress(index + 1, len(names))
        return results
    # Largest files first, so no worker is left with a big file at the end.  Workers take the
    # next file from a shared counter and send results back in batches: no message per file
    # (multiprocessing.Pool's per-chunk messages cost the parent, which shares the cores, and the
    # workers ~0.3 s of CPU on torch's sources).  Results are put back in the input order.
    order = sorted(range(len(names)), key=lambda i: -_size(names[i]))
    context = multiprocessing.get_context("fork") if sys.platform.startswith("linux") \
        else multiprocessing.get_context("spawn")
    counter = context.Value("q", 0)
    readers: dict[Any, Any] = {}
    for _ in range(jobs):
        reader, writer = context.Pipe(duplex=False)
        worker = context.Process(target=_scan_worker, args=(spec, settings, max_bytes, names, order, counter, writer),
                                 daemon=True)
        worker.start()
        writer.close()
        readers[reader] = worker
    slots: list[FileReport | None] = [None] * len(names)
    why = "the worker process scanning it stopped unexpectedly"
    while readers:
        ready: list[Any] = multiprocessing.connection.wait(list(readers), timeout=0.1)
        for reader in ready:
            try:
                batch = reader.recv()
            except (EOFError, OSError):
                batch = None
            if isinstance(batch, str):  # the worker could not start
                why, batch = batch, None
            if batch is None:  # the worker is done (or died: what it had not sent is reported below)
                reader.close()
                readers.pop(reader).join()
                continue
            for index, report in batch:
                slots[index] = report
        if progress:
            progress(min(counter.value, len(names)), len(names))
    return [report if report is not None else FileReport(names[index], error=f"not scanned: {why}")
            for index, report in enumerate(slots)]


RESULT_BATCH = 64  # files per message from a worker


def _scan_worker(spec: Any, settings: EngineSettings, max_bytes: int, names: list[str], order: list[int],
                 counter: Any, writer: Any) -> None:
    try:
        _init_child(spec, settings, max_bytes)
    except Exception as exc:  # e.g. the knowledge base cannot be opened: say so once, for every file
        writer.send(f"the scan worker could not start: {type(exc).__name__}: {exc}")
        writer.close()
        return
    batch: list[tuple[int, FileReport]] = []
    try:
        while True:
            with counter.get_lock():
                taken = counter.value
                counter.value = taken + 1
            if taken >= len(order):
                break
            index = order[taken]
            batch.append((index, _scan_one(names[index])))
            if len(batch) >= RESULT_BATCH:
                writer.send(batch)
                batch = []
        if batch:
            writer.send(batch)
        writer.send(None)
    finally:
        writer.close()


def _size(name: str) -> int:
    try:
        return os.stat(name).st_size
    except OSError:
        return 0


# -- conversion ------------------------------------------------------------------------
@dataclass
class FileConversion:
    path: str
    original: bytes | None = None
    converted: bytes | None = None  # None when the file was left as it is
    found: int = 0
    guarded: int = 0  # of ``found``: tensor methods rewritten behind a runtime type test (guarded.py)
    apis: dict[str, int] = field(default_factory=dict)  # torch name -> uses found
    left: list[tuple[str, int, str]] = field(default_factory=list)  # (torch name, line, reason)
    unsure: list[tuple[str, int, str]] = field(default_factory=list)  # marked possible tensor methods
    torch_imports: int = 0  # torch import statements still in the converted text
    references: list[tuple[str, int, str]] = field(default_factory=list)  # torch left with no marker (leftovers.py)
    error: str | None = None
    bom: bool = False

    @property
    def changed(self) -> bool:
        return self.converted is not None and self.converted != self.original

    @property
    def complete(self) -> bool:
        """Converted with nothing left: no use for a human, no marker, no torch import."""
        return self.error is None and not (self.left or self.unsure or self.torch_imports or self.references)


def convert_file(engine: Any, path: str | Path) -> FileConversion:
    from kb.analysis.convert import convert_source

    result = FileConversion(str(path))
    data, error = read_source(path)
    if data is None:
        result.error = error
        return result
    try:  # a regular file (read_source said so): this cannot block
        with open(path, "rb") as handle:
            result.bom = handle.read(3) == BOM
    except OSError:
        pass
    result.original = data
    data = explicit_star_imports(Path(path), lineends.for_analysis(data))  # torch names `from .x import *` brings
    if not _worth_analysing(engine, data):
        return result
    try:
        converted = convert_source(engine, data, imported_classes(Path(path), data))
    except Exception as exc:  # never lose the whole run to one file
        result.error = f"internal error while converting: {type(exc).__name__}: {exc}"
        return result
    if converted.error:
        result.error = converted.error
        return result
    result.converted = lineends.as_original(result.original, converted.source)
    result.found, result.guarded = converted.found, converted.guarded
    result.apis = converted.apis
    result.left = [(left.torch_name, left.line, left.reason) for left in converted.left]
    result.unsure = [(left.torch_name, left.line, left.reason) for left in converted.unsure]
    result.torch_imports = len(TORCH_IMPORT.findall(converted.source))
    if mentions_roots(converted.source):
        result.references = unmarked_references(converted.source)
    return result


TORCH_IMPORT = re.compile(rb"(?m)^[ \t]*(?:import[ \t]+torch\b|from[ \t]+torch(?:\.[\w.]+)?[ \t]+import\b)")


def _convert_one(path: str) -> FileConversion:
    return convert_file(_ENGINE, path)


def convert_files(files: list[Path], spec: Any, settings: EngineSettings, jobs: int | None = None,
                  max_bytes: int = MAX_SOURCE_BYTES) -> Iterator[FileConversion]:
    """Convert ``files`` (in parallel when worth it), yielding results in input order."""
    jobs = max(1, jobs or os.cpu_count() or 1)
    names = [str(f) for f in files]
    if jobs == 1 or len(names) < 4 * jobs:
        _init_worker(spec, settings, max_bytes)
        for name in names:
            yield _convert_one(name)
        return
    chunk = max(1, min(16, len(names) // (jobs * 8)))
    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    with context.Pool(jobs, initializer=_init_child, initargs=(spec, settings, max_bytes)) as pool:
        yield from pool.imap(_convert_one, names, chunksize=chunk)
