"""Expected texts of converted files without the stand-in's definition (``kb.analysis.standins``).

A converted file whose torch import is still referred to gets ``MsUnconverted``'s class and the reasons
table written once; tests compare the rest of the file, and read the reasons table on its own."""
from __future__ import annotations

import ast
import re

BLOCK = re.compile(r"class MsUnconverted:\n.*?\nMS_UNCONVERTED = \{\n(?P<table>.*?)\}\n\n*", re.S)


def without_definition(text: str) -> str:
    """``text`` with the stand-in's class and reasons table cut out (the stand-in assignments stay)."""
    return BLOCK.sub("", text, count=1)


def reasons(text: str) -> dict[str, str]:
    """The reasons table written with the stand-in: torch name -> why it was left ({} without one)."""
    found = BLOCK.search(text)
    return ast.literal_eval("{" + found["table"] + "}") if found else {}
