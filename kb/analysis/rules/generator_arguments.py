"""A container built from a bare generator (``nn.ModuleList(Block(d) for _ in range(n))``) converts like a list.

Python lets a generator be a call's only argument without its own parentheses; the call then has no argument
list to read, so the engine cannot place the argument and leaves a marker ("the call's arguments cannot be
read"). Where the chosen rewrite is a template that passes torch's one argument on unchanged
(``ms_ModuleList({modules})``, ``ms_ParameterList({values})``), the generator is that argument as written: the
callee is renamed, the template's helper written once, and the layers inside convert as anywhere else.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from kb.analysis.rewrite import is_auto
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.rules.init_views import helper_written
from kb.analysis.settingstatements import node_of
from kb.analysis.text import TextEdit

TITLE = "Build the container from the generator as torch does"
PASSED_ON = re.compile(r"^([A-Za-z_][\w.]*)\(\{(\w+)\}\)$")  # a template that passes one argument on: ``f({x})``


@register
class GeneratorArguments(Rule):
    name = "generator-arguments"
    scope = "expression"
    record = {"torch": "torch.nn.ModuleList"}
    title = TITLE
    order = 60
    triggers = (b"for",)
    example = """\
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(n))
"""

    def find(self, context: Context) -> Iterable[Finding]:
        for use in context.uses_named(("torch.nn.",)):
            if use.record is None or use.record.get("kind") != "class" or not use.call_span:
                continue
            call = node_of(context.root, use)
            arguments = call.child_by_field_name("arguments") if call is not None and call.type == "call" else None
            function = call.child_by_field_name("function") if arguments is not None else None
            if arguments is None or function is None or arguments.type != "generator_expression":
                continue
            choice = context.choose(use.record)
            templates = (choice.target.get("template") or []) if choice is not None and is_auto(choice) else []
            passed = PASSED_ON.match(templates[0]) if templates else None
            if passed is None or "{" in passed.group(1):
                continue
            name = passed.group(1)
            edits = [TextEdit(function.start_byte, function.end_byte, name.replace("{ms}", context.alias))]
            edits += helper_written(call, context, choice.target.get("helper") if choice is not None else None)
            yield Finding((use.start, use.end), edits, call_span=(call.start_byte, call.end_byte),
                          replaces=use.torch_name, record=use.record)
