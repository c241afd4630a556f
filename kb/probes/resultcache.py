"""Results of executed call probes, remembered between runs (``kb.probes.calls.execute``).

A result is stored under a hash of everything that decides it: the torch snippet, the code the
engine emitted for it, the inputs, the comparison settings, the installed torch, MindSpore,
numpy and Python versions, and the source of the modules that run and compare the two sides.
A re-run after a data or engine change therefore executes only the calls whose emitted code
changed; anything else that could change a result changes the key.

Only settled results are kept (pass, wrong, crash, no_cpu_kernel, weights, torch_error); a
timeout or a lost worker is run again next time. The store is one SQLite file in msmap's cache
folder (``$XDG_CACHE_HOME/msmap/rewrites/results.sqlite``), never in the repository.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

SETTLED = ("pass", "wrong", "crash", "no_cpu_kernel", "weights", "torch_error")
FORMAT = 1  # bump when the meaning of a stored result changes
RUNNERS = ("sides.py", "outputs.py", "worker.py", "runner.py")  # code that runs and compares the sides


def default_folder() -> Path:
    from kb import paths

    return paths.cache_dir() / "rewrites"


def environment() -> dict[str, Any]:
    """What, besides the case itself, decides a result: library versions and the runners' source."""
    from kb.check.run import installed_version

    here = Path(__file__).parent
    runners = hashlib.sha256(b"".join((here / name).read_bytes() for name in RUNNERS)).hexdigest()
    return {"format": FORMAT, "python": sys.version.split()[0], "runners": runners,
            **{lib: installed_version(lib) for lib in ("mindspore", "torch", "numpy")}}


class ResultCache:
    """``get(case)`` -> (result, detail) or None; ``put(case)`` stores a settled result."""

    def __init__(self, folder: Path, env: dict[str, Any] | None = None) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "results.sqlite"
        self.env = env if env is not None else environment()
        self.conn = sqlite3.connect(self.path)
        self.conn.execute("CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, result TEXT, detail TEXT, "
                          "stored REAL)")
        self.hits = self.misses = 0

    def key(self, case: Any) -> str:
        text = json.dumps([self.env, case.source, case.converted, case.inputs, case.layer, case.compare, case.seed,
                           case.rtol, case.atol], sort_keys=True)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def get(self, case: Any) -> tuple[str, str] | None:
        row = self.conn.execute("SELECT result, detail FROM results WHERE key=?", (self.key(case),)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return row[0], row[1]

    def put(self, cases: list[Any]) -> int:
        rows = [(self.key(c), c.result, c.detail, time.time()) for c in cases if c.result in SETTLED]
        with self.conn:
            self.conn.executemany("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?)", rows)
        return len(rows)

    def close(self) -> None:
        self.conn.close()
