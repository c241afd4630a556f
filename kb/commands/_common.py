"""Options and helpers shared by the query commands (same flags everywhere)."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_db_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", metavar="PATH", help="SQLite knowledge base to use (default: built from data/ into the cache)")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON (stable shape, see DESIGN.md)")


def open_kb(args: argparse.Namespace):
    from pathlib import Path

    from kb.query import KB

    return KB.open(db=Path(args.db) if getattr(args, "db", None) else None, quiet=False)


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2, ensure_ascii=False, sort_keys=False)
    sys.stdout.write("\n")
