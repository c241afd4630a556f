"""Benchmark ``msmap check`` and ``msmap probe`` against the cost of importing mindspore.

    python benchmarks/bench_check.py                 # check + the hand-written caveat probes
    python benchmarks/bench_check.py --probes all    # check + every probe (several minutes)

The baseline is measured in the same run: a bare ``import mindspore`` (and ``import
torch``) in a fresh interpreter, so the check's own cost is the difference.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), GLOG_v="3", PYTHONWARNINGS="ignore")
    env.pop("MSMAP_DEBUG", None)
    return env


def import_seconds(module: str, repeat: int = 3) -> float:
    """Best of ``repeat`` fresh-interpreter imports (best = least disturbed by other load)."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(),
                                 check=True).stdout.strip().splitlines()[-1]) for _ in range(repeat)]
    return min(runs)


def timed(args: list[str], db: Path) -> tuple[float, dict]:
    started = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "kb", *args, "--json"], capture_output=True, text=True, env=_env(),
                       cwd=ROOT, timeout=3600)
    seconds = time.perf_counter() - started
    if r.returncode not in (0, 1):
        raise SystemExit(f"msmap {' '.join(args)} failed ({r.returncode}): {r.stderr[-2000:]}")
    return seconds, json.loads(r.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--probes", default="caveat/*", help="probe pattern to run, or 'all' (default: caveat/*)")
    ap.add_argument("--jobs", type=int, default=2)
    opts = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "kb.sqlite"
        subprocess.run([sys.executable, "-m", "kb", "build", "--db", str(db)], env=_env(), cwd=ROOT, check=True,
                       capture_output=True)
        ms_import = import_seconds("mindspore")
        torch_import = import_seconds("torch")
        check_s, check = timed(["check", "--db", str(db)], db)
        probe_args = ["probe", "--jobs", str(opts.jobs)] + ([] if opts.probes == "all" else ["--only", opts.probes])
        probe_s, probe = timed(probe_args, db)

    t = check["totals"]
    counts: dict[str, int] = {}
    for r in probe["results"]:
        counts[r["result"]] = counts.get(r["result"], 0) + 1
    n = len(probe["results"])
    print(f"import mindspore (fresh interpreter, best of 3): {ms_import:6.2f} s")
    print(f"import torch     (fresh interpreter, best of 3): {torch_import:6.2f} s")
    print(f"msmap check: {check_s:6.2f} s wall for {t['checked']} facts "
          f"({t['pass']} pass, {t['drift']} drift, {t['not_checkable']} not checkable, "
          f"{t['skipped_out_of_range']} entries out of range)")
    print(f"  = {check_s / ms_import:.1f}x a bare mindspore import; own cost ~{check_s - ms_import:.2f} s "
          f"({1000 * max(check_s - ms_import, 0) / max(t['checked'], 1):.2f} ms per fact)")
    print(f"msmap probe ({opts.probes}, --jobs {opts.jobs}): {probe_s:6.2f} s wall for {n} probes "
          f"({', '.join(f'{v} {k}' for k, v in sorted(counts.items()))})")
    print(f"  = {probe_s / max(n, 1):.2f} s per probe; {probe_s / ms_import:.1f}x a bare mindspore import")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
