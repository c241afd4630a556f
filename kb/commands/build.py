"""msmap build: rebuild the SQLite knowledge base from data/."""
from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", metavar="DIR", help="data folder (default: the bundled data/)")
    parser.add_argument("--db", metavar="PATH", help="where to write the DB (default: the cache location)")


def run(args: argparse.Namespace) -> int:
    from kb.build import build

    counts = build(Path(args.data) if args.data else None, Path(args.db) if args.db else None)
    print(f"built {counts['db']}: {counts['mappings']} mappings, {counts['targets']} targets, "
          f"{counts['caveats']} caveats, {counts['apis']} snapshot APIs in {counts['seconds']} s")
    return 0
