"""``weight_norm(self.conv)`` as a statement: ``self.conv = MsWeightNorm(self.conv)`` (spectral_norm alike).

torch's weight and spectral norms change the layer they are given and return it, so a call whose result is dropped
still normalises ``self.conv``. Their MindSpore forms (data/curated/recipes.yaml, ``MsWeightNorm``,
``MsSpectralNorm``) wrap the layer in a new Cell instead, so the wrapper must take the layer's place: the
statement becomes an assignment to the argument, when that is a name, an attribute or a subscript. With any
other argument (a new layer) the result is dropped on both sides, and the engine's own rewrite stands.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kb.analysis.adapters import insertion
from kb.analysis.arguments import read_arguments
from kb.analysis.rewrite import is_auto
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.settingstatements import node_of
from kb.analysis.templates import Blocked, render
from kb.analysis.text import TextEdit

IN_PLACE = ("torch.nn.utils.weight_norm", "torch.nn.utils.parametrizations.weight_norm", "torch.nn.utils.spectral_norm",
            "torch.nn.utils.parametrizations.spectral_norm")
TARGETS = ("identifier", "attribute", "subscript")
TITLE = "Put the weight-normed layer in the place of the layer torch changes in place"


@register
class WeightNormStatements(Rule):
    name = "weight-norm-statements"
    scope = "statement"
    record = {"torch": "torch.nn.utils.weight_norm"}
    title = TITLE
    order = 60
    triggers = (b"_norm",)
    example = """\
import torch.nn as nn
from torch.nn.utils import weight_norm
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 4, 3)
        weight_norm(self.conv)
"""

    def find(self, context: Context) -> Iterable[Finding]:
        if b"_norm" not in context.source:
            return
        for use in context.uses_named(IN_PLACE):
            if use.torch_name not in IN_PLACE or use.record is None:
                continue
            call = node_of(context.root, use)
            if call is None or call.type != "call":
                call = call.parent if call is not None and call.parent is not None else None
            if call is None or call.type != "call" or call.parent is None \
                    or call.parent.type != "expression_statement" or len(call.parent.named_children) != 1:
                continue
            layer = _layer(call)
            choice = context.choose(use.record)
            if layer is None or layer.type not in TARGETS or choice is None or not is_auto(choice) \
                    or not choice.target.get("template"):
                continue
            try:
                text = render(choice.target["template"], call, use.record, choice.target, context.alias, None)
            except Blocked:
                continue  # (the engine's use says why)
            edits = [TextEdit(call.start_byte, call.end_byte, f"{layer.text.decode('utf-8', 'replace')} = {text}")]
            helper = choice.target.get("helper")
            if helper:
                name = helper.split(None, 1)[1].split("(", 1)[0]
                added = insertion(call, context.source, name, helper.replace("{ms}", context.alias).rstrip("\n") + "\n")
                edits += [added] if added is not None else []
            yield Finding((use.start, use.end), edits, call_span=(call.start_byte, call.end_byte),
                          replaces=use.torch_name, record=use.record)


def _layer(call: Any) -> Any | None:
    """The node passed as torch's ``module`` (the first positional argument, or ``module=``); None with ``*args``."""
    args, _ = read_arguments(call)
    if any(a.star for a in args):
        return None
    first = next((a for a in args if a.keyword is None), None) or next((a for a in args if a.keyword == "module"), None)
    node = call.child_by_field_name("arguments")
    if node is None or first is None:
        return None
    for child in node.named_children:
        value = child.child_by_field_name("value") if child.type == "keyword_argument" else child
        if value is not None and value.start_byte == first.value_start:
            return value
    return None
