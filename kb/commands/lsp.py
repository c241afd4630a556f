"""msmap lsp: run the language server (stdio by default, or --tcp HOST:PORT)."""
from __future__ import annotations

import argparse
import gc
import logging
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default)")
    parser.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP socket instead of stdio")
    parser.add_argument("--log-file", metavar="PATH", help="write the server log here (default: stderr)")
    parser.add_argument("--log-level", default="INFO", choices=("TRACE", "DEBUG", "INFO", "WARNING", "ERROR"),
                        help="log verbosity (default INFO); DEBUG adds timings, TRACE every LSP message")
    parser.add_argument("--db", metavar="PATH", help="SQLite knowledge base to use (default: built from data/)")


def _host_port(text: str) -> tuple[str, int]:
    from kb.errors import MsmapError

    host, _, port = text.rpartition(":")
    if not port.isdigit():
        raise MsmapError(f"--tcp expects HOST:PORT, got {text!r}")
    return host or "127.0.0.1", int(port)


def run(args: argparse.Namespace) -> int:
    handler: logging.Handler = logging.FileHandler(args.log_file) if args.log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    level = logging.DEBUG if args.log_level == "TRACE" else getattr(logging, args.log_level)
    logging.basicConfig(level=level, handlers=[handler], force=True)
    if args.log_level != "TRACE":  # pygls logs every message it sends at INFO
        logging.getLogger("pygls").setLevel(logging.WARNING)
    # Start-up (lsprotocol's classes and converter, pydantic, the engine's modules, then the first
    # analysis) allocates long-lived objects and frees next to none: with the collector on, its full
    # collections walk them all again and again, ~130 ms of a cold start.  So collect nothing until then:
    # freeze what the imports built, and leave the collector off until the first publication settles
    # (``lsp.publisher.settle`` collects once, freezes the survivors and turns it back on; it runs a few
    # seconds after ``initialize`` at the latest, even if no document is opened).
    gc.disable()
    early = None
    if not args.tcp and sys.platform != "win32":  # answer initialize and publish the first diagnostics
        # before pygls is loaded (lsp.earlystart; it waits on stdin with select(), which Windows pipes lack)
        from lsp import earlystart

        early = earlystart.run(sys.stdin.fileno(), sys.stdout.buffer, db=args.db)
    from lsp import codecache

    codecache.install()  # before lsprotocol's ~570 classes are built: their generated code is reused
    from lsp.server import make_server
    from lsp.transport import start_stdio

    server = make_server(db=args.db, early=early)
    gc.freeze()
    if args.tcp:
        host, port = _host_port(args.tcp)
        server.start_tcp(host, port)
    else:
        start_stdio(server, prefix=early.raw if early is not None else b"")
    return 0
