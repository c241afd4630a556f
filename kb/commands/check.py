"""msmap check: verify every KB fact against the installed mindspore (and torch, when installed).

Exit codes: 0 clean, 1 drift found, 2 mindspore is not installed.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

INSTALL_HINT = 'mindspore is not installed; install the checker\'s extra with: pip install "msmap[check]"'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from kb.commands._common import db_file

    parser.add_argument("--data", metavar="DIR", help="data folder to build the KB from (default: the bundled data/)")
    parser.add_argument("--db", metavar="PATH", type=db_file,
                        help="SQLite knowledge base to check (default: built from data/)")
    parser.add_argument("--json", action="store_true", help="print the full result as JSON")
    parser.add_argument("--record", action="store_true",
                        help="write the results to DATA/checks/mindspore-<version>.jsonl (loaded by the build)")
    parser.add_argument("--verbose", "-v", action="store_true", help="also list the facts that could not be checked")


def run(args: argparse.Namespace) -> int:
    from kb import paths
    from kb.check import report
    from kb.check.run import NotInstalled, check
    from kb.commands._common import print_json
    from kb.query import KB

    data = Path(args.data) if args.data else paths.data_dir()
    kb = KB.open(db=Path(args.db) if args.db else None, data=data, quiet=False)
    try:
        outcome = check(kb)
    except NotInstalled as exc:
        sys.stderr.write(f"msmap check: {INSTALL_HINT}\n  ({exc})\n")
        return 2
    if args.record:
        path = report.record(outcome, data / "checks")
        sys.stderr.write(f"msmap check: recorded {len(outcome['rows'])} results in {path}\n")
    if args.json:
        print_json(report.as_json(outcome))
    else:
        print(report.render(outcome, verbose=args.verbose))
    return 1 if any(r["result"] == "drift" for r in outcome["rows"]) else 0
