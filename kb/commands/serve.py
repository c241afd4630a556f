"""msmap serve: browse the knowledge base in Datasette, read-only, on localhost by default, with
bounded queries (``SETTINGS``: no arbitrary SQL, 1 s and 1,000 rows per query).

Datasette is an optional extra (``pip install "msmap[serve]"``).  The command prepares a
served copy of the DB with per-table search indexes and a metadata file (see
``kb.docs.datasette``), then hands the process over to Datasette.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys

INSTALL = 'pip install "msmap[serve]"'
# Datasette's public settings (``datasette serve --help-settings``): every query it runs is one of its
# own (tables, facets, full-text search), bounded in time and rows.  Arbitrary SQL is off: one
# ``select zeroblob(2000000000)`` is a single SQLite step the time limit cannot interrupt (it ran
# 11 s and took 2.4 GB), and ``_where=`` fragments would allow the same.
SETTINGS = {
    "default_allow_sql": "off",  # no ?sql= and no _where= for anyone
    "sql_time_limit_ms": "1000",
    "max_returned_rows": "1000",
    "facet_time_limit_ms": "200",
    "allow_csv_stream": "off",  # (streams every row, past max_returned_rows)
    "num_sql_threads": "2",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from kb.commands._common import db_file, int_in

    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int_in(0, 65535), default=8001,
                        help="port to listen on (default 8001; 0 picks a free one)")
    parser.add_argument("--db", metavar="PATH", type=db_file,
                        help="SQLite knowledge base to serve (default: built from data/ into the cache)")


def datasette_available() -> bool:
    try:
        return importlib.util.find_spec("datasette") is not None
    except (ImportError, ValueError):
        return False


def command(args: argparse.Namespace) -> list[str]:
    """The Datasette command line for these arguments (prepares the served copy first)."""
    from kb.commands._common import open_kb
    from kb.docs import datasette

    db = open_kb(args).path
    folder = datasette.cache_dir(db)
    copy = datasette.served_copy(db, folder)
    meta = datasette.write_metadata(copy, folder)
    settings = [part for name, value in SETTINGS.items() for part in ("--setting", name, value)]
    return [sys.executable, "-m", "datasette", "serve", "--immutable", str(copy), "--metadata", str(meta),
            *settings, "--host", args.host, "--port", str(args.port)]


def run(args: argparse.Namespace) -> int:
    if not datasette_available():
        sys.stderr.write(f"msmap serve: Datasette is not installed; install it with: {INSTALL}\n")
        return 2
    cmd = command(args)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        sys.stderr.write(f"msmap serve: listening on {args.host}: other machines can reach this server\n")
    where = f"http://{args.host}:{args.port}/msmap" if args.port else "a free port (Datasette prints it)"
    sys.stderr.write(f"msmap serve: {where} (read-only; Ctrl-C stops)\n")
    sys.stderr.flush()
    sys.stdout.flush()
    if os.name == "posix":
        os.execv(sys.executable, cmd)  # signals reach Datasette directly; nothing to clean up after
    import subprocess

    try:
        return subprocess.call(cmd)
    except KeyboardInterrupt:
        return 130
