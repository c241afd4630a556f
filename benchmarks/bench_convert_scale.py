"""Benchmark: convert time against the number of rewritable calls in one file (1k, 4k, 16k).

Each file holds N copies of one rewritable call (``torch.cat([x, y], dim=0)`` -> ``ms.ops.cat``),
one per line, and the same N calls on a single line (``; ``-separated); the engine converts it
in this process (no start-up in the figures), best of a few runs.  Linear means the time per call
stays flat: the target is time per call at 16k <= 2x the time per call at 1k, on both shapes.
(Before fix-all bisected its taken edits, 4k calls took 10.9 s and 16k did not finish in minutes.)
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZES = (1000, 4000, 16000)
CALL = "x = torch.cat([x, y], dim=0)"


def source(n: int, one_line: bool) -> bytes:
    body = "; ".join([CALL] * n) if one_line else "\n    ".join([CALL] * n)
    return f"import torch\n\n\ndef f(x, y):\n    {body}\n    return x\n".encode()


def best(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from kb.analysis.convert import convert_source
    from kb.analysis.engine import Engine
    from kb.analysis.settings import EngineSettings
    from kb.query import KB

    data = Path(os.environ.get("MSMAP_DATA") or ROOT / "data")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        kb = KB.open(db=Path(tmp) / "kb.sqlite", data=data)
        print(f"{'shape':<10}{'calls':>8}{'seconds':>10}{'us/call':>10}{'converted':>11}")
        for one_line in (False, True):
            shape = "one line" if one_line else "lines"
            per_call = {}
            for n in SIZES:
                text = source(n, one_line)
                engine = Engine(kb, EngineSettings())  # a fresh engine: no caches from the last size
                result = convert_source(engine, text)
                runs = 3 if n < 16000 else 1
                seconds = best(lambda text=text: convert_source(Engine(kb, EngineSettings()), text), runs)
                per_call[n] = seconds / n
                print(f"{shape:<10}{n:>8}{seconds:>10.2f}{per_call[n] * 1e6:>10.0f}"
                      f"{result.found - len(result.left):>11}")
            ratio = per_call[SIZES[-1]] / per_call[SIZES[0]]
            verdict = "linear" if ratio <= 2 else "NOT linear"
            ok &= ratio <= 2
            print(f"{shape}: time per call at {SIZES[-1]:,} calls / at {SIZES[0]:,} calls = {ratio:.2f} "
                  f"(target <= 2; quadratic would be {SIZES[-1] // SIZES[0]}): {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
