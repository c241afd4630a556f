"""``python -m kb.introspect FRAMEWORK --out-dir DIR``: write one snapshot.

Run by ``msmap snapshot`` in a subprocess (possibly another interpreter).
Prints the written path as its last stdout line.  Exit 2 with a one-line
message on stderr when the framework is not installed.
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from kb.introspect import FrameworkMissing, snapshot
from kb.introspect.snapfile import FRAMEWORKS, write


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kb.introspect")
    parser.add_argument("framework", choices=FRAMEWORKS)
    parser.add_argument("--out-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # deprecation noise from touching every API
    try:
        snap = snapshot(args.framework, log=lambda line: print(line, file=sys.stderr))
    except FrameworkMissing as exc:
        print(exc, file=sys.stderr)
        return 2
    path = write(snap, args.out_dir)
    print(f"{len(snap['apis'])} APIs", file=sys.stderr)
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
