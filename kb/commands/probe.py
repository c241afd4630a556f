"""msmap probe: run fixed probe snippets in torch and MindSpore (CPU) and compare the outputs.

Exit codes: 0 every probe ran (whatever it found), 1 a probe errored or timed out,
2 mindspore is not installed.  With --timing (op costs against torch, kb.probes.timing): 1 also
when --check finds drift.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

RESULTS = ("holds", "differs", "no_cpu_kernel", "error", "timeout")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from kb.commands._common import int_in

    parser.add_argument("--only", metavar="PATTERN", help="run probes whose id, torch or MindSpore name matches "
                        "(a glob, or a substring)")
    parser.add_argument("--jobs", type=int_in(1, 2), default=2, metavar="N",
                        help="worker processes (at most 2; default 2)")
    parser.add_argument("--batch", type=int_in(1, 10_000), default=12, metavar="N",
                        help="probes per worker process (default 12)")
    parser.add_argument("--record", action="store_true",
                        help="write results to DATA/probes/results-mindspore-<version>-cpu.jsonl")
    parser.add_argument("--data", metavar="DIR", help="data folder (default: the bundled data/)")
    parser.add_argument("--defs", metavar="DIR", help="probe definitions folder (default: DATA/probes/defs)")
    parser.add_argument("--json", action="store_true", help="print every result as JSON")
    parser.add_argument("--generate", action="store_true",
                        help="regenerate DATA/probes/defs/generated-*.yaml from the KB first (needs torch)")
    parser.add_argument("--timing", action="store_true",
                        help="time ops (DATA/timing/ops.yaml) in torch and each MindSpore family instead; "
                             "with --record writes DATA/timing/timing-mindspore-<version>-cpu.jsonl")
    parser.add_argument("--python", action="append", metavar="PATH",
                        help="with --timing: an interpreter whose mindspore to time (repeatable; e.g. a venv "
                             "with mindspore 2.7.1; default: this one)")
    parser.add_argument("--rewrites", action="store_true",
                        help="instead: execute the engine's own rewrite of every auto target in four call styles "
                             "plus the KB example, next to torch (kb.probes.rewrites; many minutes); with --record "
                             "writes DATA/probes/rewrites-mindspore-<version>-cpu.jsonl; --only is a substring of "
                             "the torch name")
    parser.add_argument("--no-cache", action="store_true",
                        help="with --rewrites: execute every call again instead of reusing results stored for "
                             "the same emitted code and library versions (in msmap's cache folder)")
    parser.add_argument("--check", action="store_true",
                        help="with --timing: compare with the recorded timings; exit 1 when a ratio to torch "
                             "moved by more than the recorded spread or a result changed")


def run(args: argparse.Namespace) -> int:
    from kb import paths
    from kb.check.run import installed_version
    from kb.commands._common import print_json
    from kb.commands.check import INSTALL_HINT
    from kb.probes import defs
    from kb.probes.runner import run_probes

    data = Path(args.data) if args.data else paths.data_dir()
    if args.timing:
        from kb.probes.timing_command import run_timing

        return run_timing(args, data)
    if args.rewrites:
        return run_rewrites(args, data)
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


def run_rewrites(args: argparse.Namespace, data: Path) -> int:
    from collections import Counter

    from kb.check.run import installed_version
    from kb.commands._common import print_json
    from kb.probes import defs, rewrites
    from kb.probes.resultcache import default_folder

    version = installed_version("mindspore")
    if version is None or installed_version("torch") is None:
        sys.stderr.write("msmap probe --rewrites: needs both mindspore and torch installed\n")
        return 2

    def tick(text: str) -> None:
        sys.stderr.write(f"msmap probe --rewrites: {text}\n")

    started = time.perf_counter()
    rows = rewrites.run_rewrite_probes(data, only=args.only, jobs=min(max(args.jobs, 1), 2), tick=tick,
                                       cache=None if args.no_cache else default_folder())
    if args.record:
        path = defs.record(rows, rewrites.results_path(data / "probes", version), replace_all=not args.only,
                           fields=rewrites.RECORD_FIELDS)
        sys.stderr.write(f"msmap probe --rewrites: recorded {len(rows)} targets in {path}\n")
    if args.json:
        print_json({"seconds": round(time.perf_counter() - started, 1), "results": rows})
        return 0
    print(f"{len(rows)} targets in {time.perf_counter() - started:.0f} s")
    for fam in ("classic", "mint"):
        counts = Counter(r["result"] for r in rows if r["family"] == fam)
        print(f"{fam}: {sum(counts.values())} auto targets: "
              + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    for r in rows:
        if r["result"] == "failed":
            emitted = next((s["emitted"] for s in r["styles"].values() if s["result"] in ("wrong", "crash")), "")
            print(f"  failed {r['family']:<7} {r['torch']}: {r['detail']}\n      emitted: {emitted}")
    return 0
