"""Benchmark: `msmap docs` over the whole knowledge base.

Baseline, measured in the same run: reading every record through kb.query (what any
consumer of the whole KB pays).  Then: rendering every page, writing them into an
empty folder, rewriting with nothing changed, and --check.  Median of N runs.
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = int(os.environ.get("BENCH_RUNS", "3"))


def _median(fn) -> tuple[float, object]:
    samples, result = [], None
    for _ in range(RUNS):
        t0 = time.perf_counter()
        result = fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples), result


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from kb.build import build
    from kb.docs import files, generate
    from kb.query import KB

    data = Path(os.environ.get("MSMAP_DATA") or ROOT / "data")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "kb.sqlite"
        counts = build(data, db)

        def read_all():
            kb = KB(db)
            return [kb.mapping(n) for n in sorted(kb.torch_names)]

        base, records = _median(read_all)
        gen, generated = _median(lambda: generate(KB(db)))

        def cold():
            out = Path(tempfile.mkdtemp(dir=tmp))
            return files.sync(out, generated), out

        write_cold, (_, out) = _median(cold)
        write_warm, warm = _median(lambda: files.sync(out, generated))
        check, problems = _median(lambda: files.diff(out, generated))

    kinds = {"api/": 0, "tables/": 0}
    for path in generated:
        for prefix in kinds:
            kinds[prefix] += path.startswith(prefix)
    size = sum(len(t.encode()) for t in generated.values())
    html = len(generated["mapping.html"].encode())
    print(f"data: {counts['mappings']} mappings, {counts['targets']} targets, {counts['caveats']} caveats "
          f"({data}); median of {RUNS} runs")
    print(f"files: {len(generated)} ({kinds['api/']} detail pages, {kinds['tables/']} namespace tables, "
          f"3 top-level); {size / 1e6:.2f} MB in all, mapping.html {html / 1e3:.0f} kB")
    print(f"baseline: read all {len(records)} records via kb.query  {base * 1000:8.1f} ms")
    print(f"generate every page (in memory)               {gen * 1000:8.1f} ms  ratio {gen / base:.2f}x")
    print(f"write into an empty folder                    {write_cold * 1000:8.1f} ms")
    print(f"rewrite, nothing changed ({warm.unchanged} unchanged)        {write_warm * 1000:8.1f} ms")
    print(f"--check comparison ({len(problems)} differences)           {check * 1000:8.1f} ms")
    print(f"total for `msmap docs` (generate + cold write) {(gen + write_cold) * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
