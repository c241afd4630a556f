"""The CLI reference in README.md: every command's ``--help``, between two marker lines.

Help text is rendered in-process at 100 columns with colour off, so the block is the
same on every machine running the same Python minor version (argparse's layout
changes a little between Python releases).
"""
from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator

from kb.errors import MsmapError

START = "<!-- cli-reference:start -->"
END = "<!-- cli-reference:end -->"
COLUMNS = "100"


class MarkersMissing(MsmapError):
    """README.md lacks the marker pair (or has it twice, or in the wrong order)."""

    exit_code = 1


@contextlib.contextmanager
def _stable_terminal() -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in ("COLUMNS", "NO_COLOR", "PYTHON_COLORS")}
    os.environ.update(COLUMNS=COLUMNS, NO_COLOR="1", PYTHON_COLORS="0")
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def help_texts() -> dict[str, str]:
    """'msmap' and 'msmap <command>' -> help text, in the order `msmap --help` lists them."""
    from kb import cli

    with _stable_terminal():
        parser = cli.make_parser()
        out = {"msmap": parser.format_help()}
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    out[f"msmap {name}"] = sub.format_help()
    return out


def block() -> str:
    parts = ["Generated from each command's `--help` by `msmap docs`; edit the commands, not this block."]
    for title, text in help_texts().items():
        parts += ["", f"### `{title}`", "", "```text", text.rstrip(), "```"]
    return "\n".join(parts)


def splice(readme: str, content: str, where: str = "README.md") -> str:
    """README text with the marked block replaced by ``content``."""
    starts, ends = readme.count(START), readme.count(END)
    if starts != 1 or ends != 1 or readme.index(START) > readme.index(END):
        found = f"found {starts} start and {ends} end marker(s)"
        raise MarkersMissing(
            f"{where}: cannot place the CLI reference ({found}); add one line '{START}' and, below it, "
            f"one line '{END}' where the reference belongs, or pass --no-readme")
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{content}\n{END}{tail}"
