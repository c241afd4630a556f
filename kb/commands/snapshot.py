"""``msmap snapshot``: write installed torch / MindSpore signatures to data/snapshots/."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from kb.paths import data_dir

    parser.add_argument(
        "framework", nargs="?", choices=("torch", "mindspore", "all"), default="all",
        help="which framework to snapshot (default: both)",
    )
    parser.add_argument(
        "--python", metavar="PATH",
        help="interpreter whose installed packages are snapshotted (default: this one), "
        "e.g. a venv with an older mindspore",
    )
    parser.add_argument("--out-dir", type=Path, default=data_dir() / "snapshots", metavar="DIR",
                        help="where to write <framework>-<version>.json (default: data/snapshots)")


def run(args: argparse.Namespace) -> int:
    from kb.introspect.runner import run_snapshot

    frameworks = ("torch", "mindspore") if args.framework == "all" else (args.framework,)
    for framework in frameworks:
        start = time.monotonic()
        path = run_snapshot(framework, args.out_dir, python=args.python,
                            log=lambda line: print(line, file=sys.stderr))
        print(f"wrote {path} in {time.monotonic() - start:.1f} s")
    return 0
