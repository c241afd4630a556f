"""Op costs in MindSpore against torch: measure, record, print the table (the docs' numbers).

    python benchmarks/bench_ops.py                                   # installed mindspore (~10-20 min)
    python benchmarks/bench_ops.py --python /tmp/ms-2.7.1/bin/python # another version, from its own venv
    python benchmarks/bench_ops.py --only conv                       # some ops (glob or substring)
    python benchmarks/bench_ops.py --table                           # print what is recorded, measure nothing

Each op and shape is timed in torch (this interpreter) and in each MindSpore family (the
interpreter given) in the same run, each side in its own process, one thread per side; the
ratio MindSpore / torch is the benchmark's result.  Results are written to
data/timing/timing-mindspore-<version>-cpu.jsonl; `msmap docs` turns them into
docs/performance.md and `msmap lookup`, hovers and `msmap scan` report the cliffs.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    from kb.probes import timing
    from kb.probes.timing_command import render_pivot

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append", metavar="PATH", help="interpreter with the mindspore to time")
    parser.add_argument("--only", metavar="PATTERN", help="ops whose id or torch API matches")
    parser.add_argument("--table", action="store_true", help="print the recorded table only")
    args = parser.parse_args()
    if not args.table:
        cmd = [sys.executable, "-m", "kb", "probe", "--timing", "--record", "--json"]
        cmd += [a for p in args.python or [] for a in ("--python", p)]
        cmd += ["--only", args.only] if args.only else []
        code = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL).returncode  # the table follows
        if code not in (0, 1):
            return code
    rows = [r for path in sorted((ROOT / "data" / "timing").glob("timing-*.jsonl")) for r in timing.load_rows(path)]
    print(render_pivot(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
