"""msmap lsp: run the language server (stdio by default, or --tcp HOST:PORT).

It lives beside the server, not in kb/commands: the ``kb`` library never imports ``lsp``; the CLI
dispatcher (kb/cli.py) names this module and imports it only when ``msmap lsp`` runs."""
from __future__ import annotations

import argparse
import logging
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from kb.commands._common import db_file, host_port, new_file

    parser.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default)")
    parser.add_argument("--tcp", metavar="HOST:PORT", type=host_port, help="listen on a TCP socket instead of stdio")
    parser.add_argument("--log-file", metavar="PATH", type=new_file, help="write the server log here (default: stderr)")
    parser.add_argument("--log-level", default="INFO", choices=("TRACE", "DEBUG", "INFO", "WARNING", "ERROR"),
                        help="log verbosity (default INFO); DEBUG adds timings, TRACE every LSP message")
    parser.add_argument("--db", metavar="PATH", type=db_file,
                        help="SQLite knowledge base to use (default: built from data/)")


def run(args: argparse.Namespace) -> int:
    from kb.errors import MsmapError

    try:
        handler: logging.Handler = (logging.FileHandler(args.log_file) if args.log_file
                                    else logging.StreamHandler(sys.stderr))
    except OSError as exc:
        raise MsmapError(f"--log-file {args.log_file}: cannot write: {exc.strerror or exc}") from None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    level = logging.DEBUG if args.log_level == "TRACE" else getattr(logging, args.log_level)
    logging.basicConfig(level=level, handlers=[handler], force=True)
    if args.log_level != "TRACE":  # pygls logs every message it sends at INFO
        logging.getLogger("pygls").setLevel(logging.WARNING)
    from lsp import logfilters

    logfilters.install()
    from lsp.server import make_server
    from lsp.transport import start_stdio

    server = make_server(db=args.db)
    if args.tcp:
        host, port = args.tcp
        try:
            server.start_tcp(host, port)
        except OSError as exc:  # a host that does not resolve, a port in use or not allowed
            raise MsmapError(f"--tcp {host}:{port}: cannot listen: {exc.strerror or exc}") from None
        return 0
    return start_stdio(server)  # 0 after shutdown then exit, 1 otherwise
