"""Convert every .py file of the installed torch package; check every result.

    python benchmarks/convert_corpus.py [--sample N] [--jobs N] [--family classic|mint]

For each file: the converted text must parse (``ast.parse``) and converting it
again must change nothing.  Files that do not parse to begin with (none in a
normal install) are left unchanged and counted apart.  Torch's sources are read
as text from its install directory; torch is never imported here.
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import multiprocessing
import os
import re
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kb.analysis import Engine, EngineSettings  # noqa: E402
from kb.analysis.convert import convert_source  # noqa: E402
from kb.analysis.project import open_kb, python_files, read_source  # noqa: E402

_ENGINE = None


def torch_dir() -> Path:
    spec = importlib.util.find_spec("torch")  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("torch is not installed")
    return Path(list(spec.submodule_search_locations)[0])


def corpus(sample: int = 0) -> list[Path]:
    files = sorted(python_files([torch_dir()]), key=lambda p: p.as_posix())
    if sample and sample < len(files):
        step = len(files) / sample  # deterministic, spread over the whole tree
        files = [files[int(i * step)] for i in range(sample)]
    return files


def _init(spec, settings) -> None:
    global _ENGINE
    _ENGINE = Engine(open_kb(spec), settings)


def _parses(data: bytes) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(data)
    except (SyntaxError, ValueError):
        return False
    return True


def check_file(path: str) -> dict:
    data, error = read_source(path)
    row = {"path": path, "lines": 0, "found": 0, "converted": 0, "changed": False, "problem": None,
           "skipped": error}
    if data is None:
        return row
    row["lines"] = data.count(b"\n")
    if not _parses(data):
        row["skipped"] = "does not parse"
        return row
    first = convert_source(_ENGINE, data)
    row.update(found=first.found, converted=first.converted, changed=first.changed)
    if not _parses(first.source):
        row["problem"] = "converted text does not parse"
    else:
        second = convert_source(_ENGINE, first.source).source
        # a converted class is a Cell, so a second analysis may guess at more tensor methods and add notes or
        # runtime type tests around them (kb/analysis/guarded.py); the code itself must not change otherwise
        if _without_guards(_without_notes(second)) != _without_guards(_without_notes(first.source)):
            row["problem"] = "second convert changed the text"
        row["notes_added"] = second.count(b"# msmap:") - first.source.count(b"# msmap:")
    return row


_NOTE = re.compile(rb"  # msmap: [^\n]*")


def _without_notes(data: bytes) -> bytes:
    return _NOTE.sub(b"", data)


_GUARD = re.compile(rb" if isinstance\([^()]*, \w+\.Tensor\) else ")


def _without_guards(data: bytes) -> bytes:
    """``(NEW if isinstance(r, ms.Tensor) else OLD)`` written as ``OLD``: the call as it was."""
    while True:
        match = _GUARD.search(data)
        if match is None:
            return data
        start, depth = match.start(), 0
        while start > 0 and depth >= 0:  # back to the guard's own opening parenthesis
            start -= 1
            depth += {41: 1, 40: -1}.get(data[start], 0)
        end, depth = match.end(), 0
        while end < len(data) and depth >= 0:  # on to its closing one
            depth += {40: 1, 41: -1}.get(data[end], 0)
            end += 1
        data = data[:start] + data[match.end():end - 1] + data[end:]


def run(files: list[Path], spec, settings: EngineSettings, jobs: int) -> list[dict]:
    names = [str(f) for f in files]
    if jobs <= 1:
        _init(spec, settings)
        return [check_file(n) for n in names]
    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    with context.Pool(jobs, initializer=_init, initargs=(spec, settings)) as pool:
        return list(pool.imap_unordered(check_file, names, chunksize=4))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sample", type=int, default=0, help="check N files spread over the corpus (0: all)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--family", choices=("classic", "mint"), default="classic")
    parser.add_argument("--db", help="knowledge base (default: built from data/)")
    args = parser.parse_args(argv)
    from kb.query import ensure_db

    spec = ensure_db(db=Path(args.db) if args.db else None)
    files = corpus(args.sample)
    started = time.perf_counter()
    rows = run(files, spec, EngineSettings(family=args.family), args.jobs)
    elapsed = time.perf_counter() - started
    problems = [r for r in rows if r["problem"]]
    checked = [r for r in rows if not r["skipped"]]
    found = sum(r["found"] for r in rows)
    converted = sum(r["converted"] for r in rows)
    print(f"torch corpus: {len(rows)} files ({sum(r['lines'] for r in rows)} lines) in {elapsed:.1f}s "
          f"with {args.jobs} jobs")
    print(f"  checked: {len(checked)}, skipped: {len(rows) - len(checked)}, changed by convert: "
          f"{sum(r['changed'] for r in rows)}")
    print(f"  torch uses found: {found}, converted: {converted} "
          f"({converted / found:.1%})" if found else "  no torch uses found")
    print(f"  outputs that parse: {len(checked) - sum(r['problem'] == 'converted text does not parse' for r in rows)}"
          f"/{len(checked)}; second convert keeps the code (notes aside): "
          f"{len(checked) - sum(r['problem'] == 'second convert changed the text' for r in rows)}/{len(checked)}")
    for row in problems:
        print(f"  PROBLEM {row['path']}: {row['problem']}")
    for row in rows:
        if row["skipped"]:
            print(f"  skipped {row['path']}: {row['skipped']}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
