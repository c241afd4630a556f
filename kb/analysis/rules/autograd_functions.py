"""A custom ``torch.autograd.Function`` keeps its forward and its backward: every reference to the base
(``class F(Function)``, ``isinstance(f, autograd.Function)``) becomes the record's helper class, written into
the file (``MsFunction`` in data/curated/autograd.yaml: a Cell whose ``bprop`` runs the class's
``backward``), so ``F.apply(...)`` and ``ctx`` work as they are. The import goes with its last use."""
from __future__ import annotations

from collections.abc import Iterable

from kb.analysis.adapters import insertion
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.text import TextEdit

FUNCTION = "torch.autograd.Function"
KINDS = ("class_base", "attribute", "call")  # (an import is the engine's, dropped with its last use)


@register
class AutogradFunctions(Rule):
    name = "autograd-function"
    scope = "expression"  # a finding is one reference; the engine's use of it says what it names
    record = {"torch": FUNCTION}
    title = "Derive from MsFunction (the class's own backward as the Cell's bprop)"
    needs_torch_imports = True
    order = 30
    example = """\
import torch
from torch.autograd import Function
class Sign(Function):
    @staticmethod
    def forward(ctx, x):
        return torch.sign(x)

    @staticmethod
    def backward(ctx, grad):
        return grad
"""

    def find(self, context: Context) -> Iterable[Finding]:
        for use in context.uses_named((FUNCTION,)):
            target = use.target or {}
            helper = target.get("helper") if target.get("auto") else None
            if use.torch_name != FUNCTION or use.kind not in KINDS or not helper:
                continue
            name = helper.split(None, 1)[1].split("(", 1)[0]  # class NAME(
            node = context.root.named_descendant_for_byte_range(use.start, use.end)
            added = insertion(node, context.source, name, helper.replace("{ms}", context.alias).rstrip("\n") + "\n")
            yield Finding((use.start, use.end), [TextEdit(use.start, use.end, name)] + ([added] if added else []),
                          record=use.record, call_span=(use.start, use.end), replaces=FUNCTION)
