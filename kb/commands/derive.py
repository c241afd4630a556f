"""``msmap derive``: regenerate data/derived/ from the signature snapshots."""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from kb.errors import MsmapError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from kb.paths import data_dir

    data = data_dir()
    parser.add_argument("--snapshots", type=Path, default=data / "snapshots", metavar="DIR",
                        help="directory holding torch-*.json and mindspore-*.json (default: data/snapshots)")
    parser.add_argument("--out-dir", type=Path, default=data / "derived", metavar="DIR",
                        help="where to write <namespace>.jsonl (default: data/derived)")


def run(args: argparse.Namespace) -> int:
    import json

    from kb.derive import derive, write_derived
    from kb.introspect.snapfile import find, load

    start = time.monotonic()
    torch_files = find(args.snapshots, "torch")
    ms_files = find(args.snapshots, "mindspore")
    if not torch_files or not ms_files:
        missing = "torch" if not torch_files else "mindspore"
        raise MsmapError(f"no {missing} snapshot in {args.snapshots}; run `msmap snapshot` first")
    try:
        torch_snap = load(torch_files[-1])
        ms_snaps = [load(path) for path in ms_files]
    except (OSError, json.JSONDecodeError) as exc:
        raise MsmapError(f"cannot read a snapshot in {args.snapshots}: {exc}", exit_code=3) from None
    derived = derive(torch_snap, ms_snaps)
    written = write_derived(derived, args.out_dir)
    count = sum(len(rows) for rows in derived.values())
    versions = ", ".join(s["version"] for s in ms_snaps)
    print(f"derived {count} torch APIs into {len(written)} files in {args.out_dir} "
          f"(torch {torch_snap['version']}; mindspore {versions}) in {time.monotonic() - start:.1f} s")
    return 0
