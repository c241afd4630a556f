"""Options, argument types and helpers shared by the commands (same flags, same checks everywhere).

Every numeric or path argument is checked by an ``argparse`` type below, so a bad value exits 2
with one line naming the argument (``msmap scan: error: argument --jobs/-j: must be 0 or more,
got -3``), whichever command it was given to.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

MAX_JOBS = 256
VERSION = re.compile(r"\d+(\.\d+){0,2}")


def int_in(low: int, high: int, what: str = "") -> Callable[[str], int]:
    """An integer argument in [low, high]."""

    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text[:40]!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low} and {high}{what}, got {text[:40]}")
        return value

    parse.__name__ = "number"
    return parse


JOBS = int_in(0, MAX_JOBS, " (0: all cores)")


def float_in(low: float, high: float, low_open: bool = False) -> Callable[[str], float]:
    """A finite number in [low, high] (or (low, high] with ``low_open``)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text[:40]!r}") from None
        if not (low < value if low_open else low <= value) or not value <= high:
            bound = "more than" if low_open else "at least"
            raise argparse.ArgumentTypeError(f"must be {bound} {low:g} and at most {high:g}, got {text[:40]}")
        return value

    parse.__name__ = "number"
    return parse


def megabytes(text: str) -> int:
    """A size in megabytes (decimals allowed), as a byte count."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of megabytes, got {text[:40]!r}") from None
    if not 0 < value <= 100_000:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most 100000 (MB), got {text[:40]}")
    return int(value * 1_000_000)


MAX_NAME = 300  # characters of an API name (the longest torch name has about 80)


def api_name(text: str) -> str:
    """An API name as typed: bounded in length (a 100,000-character name is a mistake)."""
    if len(text) > MAX_NAME:
        raise argparse.ArgumentTypeError(f"an API name is at most {MAX_NAME} characters, got {len(text):,}")
    return text


def ms_version(text: str) -> str:
    """A MindSpore version: X, X.Y or X.Y.Z."""
    if not VERSION.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(f"expected a version like 2.10.0, got {text[:40]!r}")
    return text.strip()


def host_port(text: str) -> tuple[str, int]:
    """HOST:PORT (HOST defaults to 127.0.0.1; IPv6 hosts in brackets)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT with a port from 0 to 65535, got {text[:60]!r}")
    host = host.strip("[]") or "127.0.0.1"
    if any(c.isspace() for c in host) or "/" in host:
        raise argparse.ArgumentTypeError(f"not a host name or address: {host[:60]!r}")
    return host, int(port)


def db_file(text: str) -> Path:
    """A knowledge-base file: not a directory, in a folder that exists or can be made."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a directory; give a file path such as {path / 'kb.sqlite'}")
    _parent_usable(path, text)
    return path


def out_dir(text: str) -> Path:
    """An output folder: a directory, or a path that does not exist yet (never an existing file)."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} exists and is not a directory")
    _parent_usable(path, text)
    return path


def new_file(text: str) -> Path:
    """A file to write (a log): its folder must exist."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a directory")
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(f"folder {path.parent} does not exist")
    return path


def _parent_usable(path: Path, text: str) -> None:
    for parent in path.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise argparse.ArgumentTypeError(f"{text}: {parent} is not a directory")
            return


def add_db_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", metavar="PATH", type=db_file,
                        help="SQLite knowledge base to use (default: built from data/ into the cache)")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON (stable shape, see DESIGN.md)")


def open_kb(args: argparse.Namespace):
    from kb.query import KB

    return KB.open(db=getattr(args, "db", None), quiet=False)


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2, ensure_ascii=False, sort_keys=False)
    sys.stdout.write("\n")
