"""``msmap probe --timing``: measure, print the table, record, and check for drift."""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from kb.probes import timing


def run_timing(args: argparse.Namespace, data: Path) -> int:
    from kb.commands._common import print_json

    folder = data / "timing"
    try:
        ops = timing.select(timing.load_ops(folder / "ops.yaml"), args.only)
    except timing.TimingDataError as exc:
        sys.stderr.write(f"msmap probe: {exc}\n")
        return 2
    if not ops:
        sys.stderr.write(f"msmap probe: no timing op matches {args.only!r} in {folder / 'ops.yaml'}\n")
        return 1
    torch_version = timing.framework_version(sys.executable, "torch")
    if torch_version is None:
        sys.stderr.write("msmap probe: torch is not installed; timings are ratios to torch (pip install torch)\n")
        return 2
    pythons = args.python or [sys.executable]
    report: list[dict] = []
    drifted: list[dict] = []
    failed = False
    for python in pythons:
        ms_version = timing.framework_version(python, "mindspore")
        if ms_version is None:
            sys.stderr.write(f"msmap probe: {python}: no mindspore installed for this interpreter\n")
            return 2
        started = time.perf_counter()
        got = timing.measure(ops, python, on_result=_progress(ms_version))
        if sys.stderr.isatty():
            sys.stderr.write("\r" + " " * 70 + "\r")
        rows = timing.rows(ops, got, {"mindspore": ms_version, "torch": torch_version})
        failed |= any(r["result"] in ("error", "timeout") for r in rows)
        path = timing.results_path(folder, ms_version)
        if args.check:
            recorded = timing.load_rows(path) if path.exists() else []
            if not recorded:
                sys.stderr.write(f"msmap probe: nothing recorded in {path} to check against\n")
            drifted += timing.drift(recorded, rows)
        if args.record:
            timing.record(rows, path, replace_all=not args.only)
            sys.stderr.write(f"msmap probe: recorded {len(rows)} timings in {path}\n")
        report += rows
        sys.stderr.write(f"msmap probe: mindspore {ms_version}: {len(rows)} timings in "
                         f"{time.perf_counter() - started:.0f} s\n")
    if args.json:
        print_json({"torch_version": torch_version, "rows": report, "drift": drifted if args.check else None})
    else:
        print(render_table(report))
        if args.check:
            print(render_drift(drifted))
    if args.check and drifted:
        return 1
    return 1 if failed else 0


def _progress(ms_version: str) -> Callable[[dict], None]:
    """A per-result callback that counts measurements on a terminal's stderr line."""
    done = 0

    def tick(_r: dict) -> None:
        nonlocal done
        done += 1
        if sys.stderr.isatty():
            sys.stderr.write(f"\rmsmap probe --timing: mindspore {ms_version}: {done} measurements")
            sys.stderr.flush()

    return tick


def render_table(rows: list[dict]) -> str:
    """One line per measurement: op, shape, family, version, MindSpore ms, torch ms, ratio."""
    head = f"{'op':<22} {'shape':<34} {'family':<7} {'mindspore':<9} {'ms (ms)':>10} {'torch (ms)':>10} {'ratio':>9}"
    lines = [head, "-" * len(head)]
    for r in sorted(rows, key=lambda r: (r["op"], r["shape"], r["family"], r["ms_version"])):
        if r["result"] == "timed":
            ms = f"{r['ms']:.3f}"
            ratio = f"{r['ratio']:.2f}x" if r.get("ratio") is not None else "-"
        else:
            ms, ratio = r["result"], "-"
        torch_ms = f"{r['torch_ms']:.3f}" if r.get("torch_ms") is not None else "-"
        lines.append(f"{r['op']:<22} {r['shape'][:34]:<34} {r['family']:<7} {r['ms_version']:<9} {ms:>10} "
                     f"{torch_ms:>10} {ratio:>9}")
    return "\n".join(lines)


def render_drift(drifted: list[dict]) -> str:
    if not drifted:
        return "no drift: every ratio is within the recorded spread"
    return "\n".join([f"{len(drifted)} timing(s) drifted:"] + [
        f"  {d['op']} [{d['family']}, {d['shape']}, mindspore {d['ms_version']}]: {d['was']} -> {d['now']} ({d['why']})"
        for d in drifted])


def render_pivot(rows: list[dict]) -> str:
    """The recorded table: one line per (op, shape, family), the ratio to torch per MindSpore version."""
    from kb.timings import versions

    vs = versions(rows) or sorted({r["ms_version"] for r in rows})
    index = {(r["op"], r["shape"], r["family"], r["ms_version"]): r for r in rows}
    head = f"{'op':<22} {'shape':<34} {'family':<7} " + " ".join(f"{v:>14}" for v in vs)
    lines = [head + "   (MindSpore time / torch time, same run)", "-" * len(head)]
    for op, shape, fam in sorted({(r["op"], r["shape"], r["family"]) for r in rows}):
        cells = []
        for v in vs:
            r = index.get((op, shape, fam, v))
            cells.append("-" if r is None else "no kernel" if r["result"] == "no_cpu_kernel"
                         else f"{r['ratio']:.2f}x" if r.get("ratio") is not None else r["result"])
        lines.append(f"{op:<22} {shape[:34]:<34} {fam:<7} " + " ".join(f"{c:>14}" for c in cells))
    return "\n".join(lines)
