"""msmap probe: run fixed probe snippets in torch and MindSpore (CPU) and compare the outputs.

Exit codes: 0 every probe ran (whatever it found), 1 a probe errored or timed out,
2 mindspore is not installed.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

RESULTS = ("holds", "differs", "no_cpu_kernel", "error", "timeout")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--only", metavar="PATTERN", help="run probes whose id, torch or MindSpore name matches "
                        "(a glob, or a substring)")
    parser.add_argument("--jobs", type=int, default=2, metavar="N", help="worker processes (at most 2; default 2)")
    parser.add_argument("--batch", type=int, default=12, metavar="N", help="probes per worker process (default 12)")
    parser.add_argument("--record", action="store_true",
                        help="write results to DATA/probes/results-mindspore-<version>-cpu.jsonl")
    parser.add_argument("--data", metavar="DIR", help="data folder (default: the bundled data/)")
    parser.add_argument("--defs", metavar="DIR", help="probe definitions folder (default: DATA/probes/defs)")
    parser.add_argument("--json", action="store_true", help="print every result as JSON")
    parser.add_argument("--generate", action="store_true",
                        help="regenerate DATA/probes/defs/generated-*.yaml from the KB first (needs torch)")


def run(args: argparse.Namespace) -> int:
    from kb import paths
    from kb.check.run import installed_version
    from kb.commands._common import print_json
    from kb.commands.check import INSTALL_HINT
    from kb.probes import defs
    from kb.probes.runner import run_probes

    data = Path(args.data) if args.data else paths.data_dir()
    folder = Path(args.defs) if args.defs else data / "probes" / "defs"
    versions = {"mindspore": installed_version("mindspore"), "torch": installed_version("torch")}
    if versions["mindspore"] is None:
        sys.stderr.write(f"msmap probe: {INSTALL_HINT}\n")
        return 2
    if versions["torch"] is None:
        sys.stderr.write("msmap probe: torch is not installed; probes compare against torch (pip install torch)\n")
        return 2
    if args.generate:
        from kb.probes.generate import write_generated

        n = write_generated(data, folder)
        sys.stderr.write(f"msmap probe: generated {n} probe definitions in {folder}\n")
    probes = defs.select(defs.load_defs(folder), args.only)
    if not probes:
        sys.stderr.write(f"msmap probe: no probe matches {args.only!r} in {folder}\n")
        return 1
    started = time.perf_counter()
    done = [0]
    tty = sys.stderr.isatty()

    def tick(_r: dict) -> None:
        done[0] += 1
        if tty:
            sys.stderr.write(f"\rmsmap probe: {done[0]}/{len(probes)}")
            sys.stderr.flush()

    results = run_probes(probes, jobs=min(max(args.jobs, 1), 2), batch_size=max(args.batch, 1), on_result=tick)
    if tty:
        sys.stderr.write("\r" + " " * 40 + "\r")
    rows = defs.full_rows(results, probes, versions)
    seconds = time.perf_counter() - started
    if args.record:
        path = defs.record(rows, defs.results_path(data / "probes", versions["mindspore"]), replace_all=not args.only)
        sys.stderr.write(f"msmap probe: recorded {len(rows)} results in {path}\n")
    if args.json:
        print_json({"versions": versions, "seconds": round(seconds, 1), "results": rows})
    else:
        print(render(rows, versions, seconds))
    return 1 if any(r["result"] in ("error", "timeout") for r in rows) else 0


def render(rows: list[dict], versions: dict, seconds: float) -> str:
    counts = {k: sum(r["result"] == k for r in rows) for k in RESULTS}
    lines = [f"{len(rows)} probes on mindspore {versions['mindspore']} / torch {versions['torch']} (cpu) "
             f"in {seconds:.1f} s: " + ", ".join(f"{n} {k}" for k, n in counts.items() if n)]
    for kind in ("caveat", "equivalence"):
        sub = [r for r in rows if r["kind"] == kind]
        if sub:
            lines.append(f"  {kind}: " + ", ".join(f"{sum(r['result'] == k for r in sub)} {k}" for k in RESULTS
                                                    if any(r["result"] == k for r in sub)))
    for r in rows:
        if r["kind"] == "caveat" or r["result"] != "holds":
            lines.append(f"  {r['result']:<13} {r['probe']}: {r['detail']}")
    return "\n".join(lines)
