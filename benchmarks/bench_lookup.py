"""Benchmark: `msmap lookup` cold start vs `python -c "import sqlite3"`, and DB build time.

Both are measured in this run, on this machine, as fresh processes (median of N).
Target: lookup <= 3x the sqlite3 baseline.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = int(os.environ.get("BENCH_RUNS", "15"))


def _time(cmd: list[str], env: dict) -> float:
    samples = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from kb.build import build

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "kb.sqlite"
        t0 = time.perf_counter()
        data = Path(os.environ.get("MSMAP_DATA") or ROOT / "data")
        counts = build(data, db)
        build_s = time.perf_counter() - t0
        env = dict(os.environ, MSMAP_DB=str(db), MSMAP_DATA=str(data))
        base = _time([sys.executable, "-c", "import sqlite3"], env)
        lookups = {}
        for name in ("torch.nn.Dropout", "nn.Linear", "x.view"):
            lookups[name] = _time([sys.executable, "-m", "kb", "lookup", name], env)
    print(f"build: {build_s:.2f} s for {counts['mappings']} mappings, {counts['targets']} targets, "
          f"{counts['caveats']} caveats, {counts['apis']} snapshot APIs")
    print(f"baseline python -c 'import sqlite3': {base * 1000:.1f} ms (median of {RUNS})")
    for name, t in lookups.items():
        print(f"msmap lookup {name:<18} {t * 1000:7.1f} ms  ratio {t / base:.2f}x  (target <= 3.00x)")


if __name__ == "__main__":
    main()
