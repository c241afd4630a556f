"""``msmap`` command line: a thin dispatcher.

Each sub-command lives in ``kb/commands/<name>.py`` (the language server's in ``lsp/command.py``: the
library never imports the server; only this dispatcher names it) and exposes
``add_arguments(parser)`` and ``run(args) -> int``.  Only the module of the
command being run is imported, so ``msmap lookup`` stays lean (no pydantic,
no sqlite-utils, no mindspore/torch on the read path).

Exit codes: 0 success, 1 "not found" / drift / findings (per command),
2 bad usage (argparse) or bad input, 3 internal data problem (corrupt DB, bad data file).
"""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import NoReturn

# name -> (module, one-line help). Order is the order shown in --help.
COMMANDS: dict[str, tuple[str, str]] = {
    "lookup": ("kb.commands.lookup", "Show the MindSpore equivalent(s) of a torch API (or the reverse)."),
    "search": ("kb.commands.search", "Full-text search over API names, notes and caveats."),
    "stats": ("kb.commands.stats", "Count torch APIs with an entry, per namespace and relation."),
    "build": ("kb.commands.build", "Rebuild the SQLite knowledge base from data/."),
    "snapshot": ("kb.commands.snapshot", "Write installed mindspore/torch signatures to data/snapshots/."),
    "derive": ("kb.commands.derive", "Regenerate data/derived/ from the signature snapshots."),
    "check": ("kb.commands.check", "Verify every KB claim against the installed mindspore and torch."),
    "probe": ("kb.commands.probe", "Run executable probes (both frameworks, isolated subprocesses)."),
    "scan": ("kb.commands.scan", "Report torch API uses in files or projects."),
    "convert": ("kb.commands.convert", "Rewrite torch code to MindSpore where it is safe."),
    "docs": ("kb.commands.docs", "Generate the mapping-table docs from the knowledge base."),
    "serve": ("kb.commands.serve", "Browse the knowledge base in Datasette (optional extra)."),
    "lsp": ("lsp.command", "Start the language server (stdio, or --tcp HOST:PORT)."),
    "weights": ("kb.commands.weights", "Convert a torch checkpoint to a MindSpore .ckpt for a converted model."),
    "verify": ("kb.commands.verify", "Run a torch model and its MindSpore conversion on the same inputs and compare."),
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # exit 2 with a one-line message, no traceback
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def _available(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _version() -> str:
    """The installed distribution's version; a checkout that was never installed has the package's."""
    from importlib import metadata

    try:
        return metadata.version("msmap")
    except metadata.PackageNotFoundError:
        from kb import __version__

        return __version__


def make_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="msmap",
        description="Verified torch -> MindSpore API mappings and caveats.",
        epilog="Run 'msmap COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"msmap {_version()}",
                        help="print msmap's version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (module, help_text) in COMMANDS.items():
        if not _available(module):
            continue
        cmd = sub.add_parser(name, help=help_text, description=help_text)
        if only is None or only == name:
            importlib.import_module(module).add_arguments(cmd)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Only build the sub-parser of the command being run (keeps start-up lean).
    first = next((a for a in argv if not a.startswith("-")), None)
    parser = make_parser(only=first if first in COMMANDS else None)
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    module = importlib.import_module(COMMANDS[args.command][0])
    try:
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        sys.stderr.write("msmap: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # last resort: never show a traceback to a user
        from kb.errors import MsmapError

        if isinstance(exc, MsmapError):
            sys.stderr.write(f"msmap {args.command}: {exc}\n")
            return exc.exit_code
        import sqlite3

        if isinstance(exc, sqlite3.DatabaseError):  # damaged after it was opened and checked
            sys.stderr.write(f"msmap {args.command}: the knowledge base cannot be read ({exc}); "
                             "run 'msmap build' to rebuild it\n")
            return 3
        import os

        if os.environ.get("MSMAP_DEBUG"):
            raise
        sys.stderr.write(
            f"msmap {args.command}: internal error: {type(exc).__name__}: {exc}\n"
            "(this is a bug in msmap; run with MSMAP_DEBUG=1 to see the traceback)\n"
        )
        return 3


if __name__ == "__main__":
    raise SystemExit(main())
