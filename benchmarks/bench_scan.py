"""Benchmark: `msmap scan` of the installed torch package vs single-threaded `ast.parse`.

Both are measured in this run, on the same files (read from disk each time).
The scan uses all cores (one worker process per core, each opening the knowledge
base once and taking the next file from a shared counter).  Target: scan time
<= 0.6 x the ast.parse baseline on 2 cores.
Torch is never imported: its sources are read as text from its install path.

Also printed (no target attached): the editor-side latency of the engine on
torch/nn/functional.py, a full analysis and the re-analysis after each keystroke
of typing ", foo=1" into calls (what the language server does on every change).
"""
from __future__ import annotations

import ast
import importlib.util
import os
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 0.6


def torch_files() -> list[Path]:
    from kb.analysis.project import python_files

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("torch is not installed")
    return list(python_files([list(spec.submodule_search_locations)[0]]))


def baseline(files: list[Path]) -> tuple[float, int]:
    lines = 0
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in files:
            data = path.read_bytes()
            lines += data.count(b"\n")
            try:
                ast.parse(data)
            except (SyntaxError, ValueError):
                pass
    return time.perf_counter() - started, lines


def editor_latency(files: list[Path], db: Path) -> None:
    import random
    import statistics

    from kb.analysis import Document, Engine
    from kb.query import KB

    path = next((f for f in files if f.as_posix().endswith("torch/nn/functional.py")), None)
    if path is None:
        return
    engine = Engine(KB(db))
    text = path.read_text(encoding="utf-8")
    engine.analyze(Document(text))  # warm the record cache, as a running server would be
    fulls = []
    for _ in range(5):
        started = time.perf_counter()
        analysis = engine.analyze(Document(text))
        fulls.append(time.perf_counter() - started)
    document = Document(text)
    engine.analyze(document)
    random.seed(7)
    lines = text.split("\n")
    candidates = [i for i, line in enumerate(lines) if line.rstrip().endswith(")") and "torch" in line]
    keystrokes, hovers = [], []
    for _ in range(20):
        index = random.choice(candidates)
        offset = len("\n".join(document.text.split("\n")[:index])) + len(document.text.split("\n")[index].rstrip())
        for char in ", foo=1":
            current = document.text
            document.update(current[:offset] + char + current[offset:])
            offset += 1
            started = time.perf_counter()
            result = engine.analyze(document)
            keystrokes.append(time.perf_counter() - started)
            started = time.perf_counter()
            result.use_at(len(current[:offset - 3].encode()))
            hovers.append(time.perf_counter() - started)
    keystrokes.sort()
    print(f"editor, nn/functional.py ({len(lines)} lines, {len(analysis.uses)} uses): full analysis "
          f"{statistics.median(fulls) * 1e3:.1f} ms; per keystroke median {keystrokes[len(keystrokes) // 2] * 1e3:.1f} ms, "
          f"p90 {keystrokes[int(len(keystrokes) * 0.9)] * 1e3:.1f} ms; use lookup {max(hovers) * 1e6:.0f} us max")


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from kb.analysis import EngineSettings
    from kb.analysis.project import scan_files
    from kb.analysis.reports import summarize
    from kb.query import ensure_db

    db = ensure_db()
    files = torch_files()
    jobs = os.cpu_count() or 1
    ast_s, lines = baseline(files)
    started = time.perf_counter()
    reports = scan_files(files, db, EngineSettings(), jobs=jobs)
    scan_s = time.perf_counter() - started
    summary = summarize(reports)
    ratio = scan_s / ast_s
    print(f"files: {len(files)}, lines: {lines}, cores: {jobs}")
    print(f"ast.parse, 1 thread : {ast_s:6.2f} s  {lines / ast_s:12,.0f} lines/s")
    print(f"msmap scan, {jobs} jobs : {scan_s:6.2f} s  {lines / scan_s:12,.0f} lines/s")
    print(f"uses found: {sum(summary.totals.values())} in {summary.files_with_uses} files; "
          f"unreadable: {summary.failed}")
    print(f"ratio scan / ast.parse: {ratio:.2f} (target <= {TARGET}) -> {'PASS' if ratio <= TARGET else 'FAIL'}")
    editor_latency(files, db)
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
