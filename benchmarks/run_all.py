"""Run every benchmark in this folder (bench_*.py), one after another."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    failed = 0
    for path in sorted(HERE.glob("bench_*.py")):
        print(f"\n=== {path.name}", flush=True)
        failed |= subprocess.run([sys.executable, str(path)]).returncode != 0
    sys.exit(1 if failed else 0)
