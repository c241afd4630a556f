"""``torch.optim.X(model.parameters())``, or any class given ``model.parameters()`` first (a third-party
optimizer such as ``torch_optimizer.DiffGrad``): the cell's trainable_params() (kb/analysis/trainsteps.py)."""
from __future__ import annotations

from collections.abc import Iterable

from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.tensors import call_at
from kb.analysis.trainsteps import PARAMETERS_RECORD, PARAMETERS_TITLE, optimizer_classes, optimizer_parameters


@register
class OptimizerParameters(Rule):
    name = "optimizer-parameters"
    scope = "expression"
    record = PARAMETERS_RECORD
    title = PARAMETERS_TITLE
    order = 40
    triggers = (b"parameters",)
    example = """\
import torch
def make_optimizer(model):
    return torch.optim.SGD(model.parameters(), lr=0.1)
"""

    def find(self, context: Context) -> Iterable[Finding]:
        calls = [call_at(context.root, o.call_span) for o in context.uses_named(("torch.optim.",))
                 if o.record.get("kind") == "class" and o.call_span and not o.member]
        if context.has_torch_imports:  # ``DiffGrad(model.parameters(), ...)``: a class given a model's parameters
            calls += optimizer_classes(context.root, context.source, *context.within)
        done = set()
        for call in calls:
            edit = optimizer_parameters(call) if call is not None else None
            if edit is not None and edit.start not in done:
                done.add(edit.start)
                # (the module method's own rewrite, get_parameters, gives way: an optimizer takes trainable_params)
                yield Finding((edit.start, edit.end), [edit], call_span=(edit.start, edit.end),
                              replaces="torch.nn.Module.parameters")
