"""Converting a snippet the way the rule tests check it: the output parses, and converting it again
changes nothing."""
from __future__ import annotations

import ast

from kb.analysis.convert import convert_source


def converted(engine, src: str) -> str:
    text = convert_source(engine, src).text
    ast.parse(text)
    assert convert_source(engine, text).text == text  # converting again changes nothing
    return text
