"""msmap build: rebuild the SQLite knowledge base from data/."""
from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from kb.commands._common import db_file

    parser.add_argument("--data", metavar="DIR", help="data folder (default: the bundled data/)")
    parser.add_argument("--db", metavar="PATH", type=db_file,
                        help="where to write the DB (default: the cache location)")
    parser.add_argument("--force", action="store_true",
                        help="replace the --db file even if it is not an msmap knowledge base")


def run(args: argparse.Namespace) -> int:
    from kb.build import build

    counts = build(Path(args.data) if args.data else None, args.db, force=args.force)
    print(f"built {counts['db']}: {counts['mappings']} mappings, {counts['targets']} targets, "
          f"{counts['caveats']} caveats, {counts['apis']} snapshot APIs in {counts['seconds']} s")
    return 0
