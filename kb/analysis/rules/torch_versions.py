"""``torch.__version__`` read to choose a torch-version-specific path becomes the path of a modern torch.

The converted code runs no torch, so no torch version is true of it; what a version test asks is "is this torch
new enough for the modern path", and MindSpore code should take that path. The rule answers with the version
the knowledge base was built against (the torch snapshot of its build; ``MODERN_TORCH`` without one), a 2.x
release, and only where the use is a version test:

- a comparison with a literal (``torch.__version__ >= "1.5.0"``, ``"1.8" <= torch.__version__``,
  ``torch.__version__ < (1, 7)``, ``>= TorchVersion("1.9")``) becomes its answer, ``True`` or ``False``,
  computed as torch compares (``TorchVersion`` compares release numbers, not strings: ``"2.13" >= "2.2"`` holds);
- a split or parse (``torch.__version__.split(".")``, ``version.parse(torch.__version__)``,
  ``LooseVersion(torch.__version__)``) reads the version as a string literal (``"2.13.0"``), which those
  compare as versions themselves.

Anything else (``print(torch.__version__)``, a comparison with a variable, the value stored in a name) keeps the
marker: there the version is reported or kept, and a torch version would be a false statement about the code.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.text import TextEdit

NAME = "torch.__version__"
MODERN_TORCH = "2.0.0"  # without a torch snapshot in the knowledge base
TITLE = "Take a modern torch's path (the converted code runs no torch)"
STRING_METHODS = {"split", "rsplit", "partition", "startswith"}
PARSERS = {"parse", "Version", "LooseVersion", "StrictVersion", "parse_version"}
RELEASE = re.compile(r"\d+(?:\.\d+)*")
STRING = re.compile(r"""^[rRuU]?(['"])([^'"\\]*)\1$""")
# the orderings (TorchVersion's ``==`` compares versions but its ``!=`` is str's: equality tests keep the marker)
COMPARE = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
SWAPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def knowledge_torch(context: Context) -> str:
    """The torch release the knowledge base was built against (its local part dropped), or ``MODERN_TORCH``."""
    meta = getattr(getattr(context.catalog, "kb", None), "meta", None)
    found = meta.get("torch_version") if isinstance(meta, dict) else None
    match = RELEASE.match(found) if isinstance(found, str) else None
    return match.group(0) if match else MODERN_TORCH


def release(value: str | tuple[int, ...]) -> tuple[int, ...] | None:
    """A version's release numbers as torch's ``TorchVersion`` compares them, zero-padded by ``compare``; None
    for a text that is not a plain release (a pre-release or a word: no answer is folded)."""
    if isinstance(value, tuple):
        return value
    match = RELEASE.fullmatch(value.strip())
    return tuple(int(part) for part in match.group(0).split(".")) if match else None


def compare(ours: tuple[int, ...], operator: str, other: tuple[int, ...]) -> bool:
    width = max(len(ours), len(other))
    return COMPARE[operator](ours + (0,) * (width - len(ours)), other + (0,) * (width - len(other)))


def literal_version(node: Any, source: bytes) -> tuple[int, ...] | None:
    """The version a literal operand spells: a string (``"1.5.0"``) or a tuple of integers (``(1, 8)``)."""
    text = source[node.start_byte:node.end_byte].decode("utf-8", "replace")
    if node.type == "string":
        match = STRING.match(text)
        return release(match.group(2)) if match else None
    if node.type == "tuple" and node.named_children and all(c.type == "integer" for c in node.named_children):
        return tuple(int(c.text) for c in node.named_children)
    arguments = node.child_by_field_name("arguments") if node.type == "call" else None
    if arguments is not None and called_name(node) == "TorchVersion" \
            and [c.type for c in arguments.named_children] == ["string"]:  # (torch refuses a packaging Version)
        return literal_version(arguments.named_children[0], source)
    return None


def fold(node: Any, use_node: Any, source: bytes, ours: tuple[int, ...]) -> bool | None:
    """The answer of a two-operand comparison between the version and a literal, or None."""
    operands = node.named_children
    operators = [c.text.decode() for c in node.children if not c.is_named]
    if len(operands) != 2 or len(operators) != 1 or operators[0] not in COMPARE:
        return None
    operator = operators[0]
    if operands[1].id == use_node.id:
        operands, operator = operands[::-1], SWAPPED[operator]
    other = literal_version(operands[1], source) if operands[0].id == use_node.id else None
    return None if other is None else compare(ours, operator, other)


def called_name(call: Any) -> str:
    function = call.child_by_field_name("function")
    if function is None:
        return ""
    if function.type == "attribute":
        function = function.child_by_field_name("attribute")
    return function.text.decode() if function is not None and function.type == "identifier" else ""


@register
class TorchVersions(Rule):
    name = "torch-version-test"
    scope = "expression"
    record = {"torch": NAME}
    title = TITLE
    order = 40
    triggers = (b"__version__",)
    example = """\
import torch
from packaging import version
MAJOR = int(torch.__version__.split(".")[0])
NEW = torch.__version__ >= "1.5.0" and version.parse(torch.__version__) >= version.parse("1.8")
"""

    def find(self, context: Context) -> Iterable[Finding]:
        uses = [u for u in context.uses_named((NAME,)) if u.torch_name == NAME and u.kind != "import"]
        if not uses:
            return
        literal = knowledge_torch(context)
        ours = release(literal) or ()
        for use in uses:
            node = context.root.named_descendant_for_byte_range(use.start, use.end)
            parent = node.parent if node is not None else None
            if node is None or parent is None or (node.start_byte, node.end_byte) != (use.start, use.end):
                continue
            edit = None
            if parent.type == "comparison_operator":
                answer = fold(parent, node, context.source, ours)
                if answer is not None:
                    edit = TextEdit(parent.start_byte, parent.end_byte, str(answer))
            elif parent.type == "attribute" and parent.child_by_field_name("attribute") is not None \
                    and parent.child_by_field_name("attribute").text.decode() in STRING_METHODS:
                edit = TextEdit(use.start, use.end, f'"{literal}"')
            elif parent.type == "argument_list" and parent.parent is not None \
                    and called_name(parent.parent) in PARSERS and len(parent.named_children) == 1:
                edit = TextEdit(use.start, use.end, f'"{literal}"')
            if edit is not None:
                yield Finding((use.start, use.end), [edit], replaces=NAME, record=use.record,
                              call_span=(min(edit.start, use.start), max(edit.end, use.end)))
