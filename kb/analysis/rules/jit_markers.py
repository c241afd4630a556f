"""TorchScript markers: ``@torch.jit.ignore`` and ``@torch.jit.export`` (with or without arguments) only tell
the TorchScript compiler what to skip or keep, so the decorator goes and the method stays; and
``torch.jit.script(fn)`` called on a function this file defines becomes ``fn``, as the decorator
``@torch.jit.script`` is removed (data/curated/modes.yaml): the function runs as Python with the same results.
A call that scripts anything else (a model) keeps its marker, as the record says."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.settingstatements import node_of
from kb.analysis.templates import Blocked, removal
from kb.analysis.text import TextEdit

DECORATORS = ("torch.jit.ignore", "torch.jit.export")
SCRIPT = "torch.jit.script"
TITLE = "Remove the TorchScript marker: MindSpore runs the function as Python"


@register
class JitMarkers(Rule):
    name = "jit-markers"
    scope = "file"  # ``torch.jit.script(fn)``: whether ``fn`` is a function of this file
    record = {"torch": "torch.jit.ignore"}
    title = TITLE
    order = 40
    triggers = (b"jit", b"def ")
    example = """\
import torch
class Net(torch.nn.Module):
    @torch.jit.ignore
    def helper(self, x):
        return x
def halve(x):
    return x * 0.5
fast = torch.jit.script(halve)
"""

    def find(self, context: Context) -> Iterable[Finding]:
        if b"jit" not in context.source:
            return
        functions: set[str] | None = None
        for use in context.uses_named(DECORATORS + (SCRIPT,)):
            if use.torch_name not in DECORATORS + (SCRIPT,):
                continue
            node = node_of(context.root, use)
            if use.torch_name in DECORATORS:
                if node.parent is not None and node.parent.type == "call" \
                        and node.parent.child_by_field_name("function") == node:
                    node = node.parent  # ``@torch.jit.ignore(drop=True)``
                if node.parent is None or node.parent.type != "decorator":
                    continue
                try:
                    edits = removal(node, context.source)
                except Blocked:
                    continue
                yield Finding((use.start, use.end), edits, call_span=(node.parent.start_byte, node.parent.end_byte),
                              replaces=use.torch_name, record=use.record)
                continue
            if node.type != "call" or (node.parent is not None and node.parent.type == "decorator"):
                continue
            if functions is None:
                functions = _functions(context.root)
            argument = _only_argument(node)
            if argument is None or argument.text.decode("utf-8", "replace") not in functions:
                continue
            yield Finding((use.start, use.end), [TextEdit(node.start_byte, node.end_byte, argument.text.decode())],
                          call_span=(node.start_byte, node.end_byte), replaces=use.torch_name, record=use.record)


def _only_argument(call: Any) -> Any | None:
    arguments = call.child_by_field_name("arguments")
    found = [a for a in arguments.named_children if a.type != "comment"] if arguments is not None else []
    return found[0] if len(found) == 1 and found[0].type == "identifier" else None


def _functions(root: Any) -> set[str]:
    """Names bound by a ``def`` outside any class and by nothing else (no class, no assignment): functions,
    not methods nor models."""
    functions: set[str] = set()
    others: set[str] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        field = "left" if node.type == "assignment" else "name"
        bound = node.child_by_field_name(field) if node.type in ("class_definition", "function_definition",
                                                                 "assignment") else None
        if bound is None or bound.type != "identifier":
            pass
        elif node.type == "function_definition" and not _in_class(node):
            functions.add(bound.text.decode("utf-8", "replace"))
        else:
            others.add(bound.text.decode("utf-8", "replace"))
        stack.extend(node.named_children)
    return functions - others


def _in_class(function: Any) -> bool:
    parent = function.parent
    if parent is not None and parent.type == "decorated_definition":
        parent = parent.parent
    return parent is not None and parent.type == "block" and parent.parent is not None \
        and parent.parent.type == "class_definition"
