"""``torch.optim.X(model.parameters())``: the cell's trainable_params() (kb/analysis/trainsteps.py)."""
from __future__ import annotations

from collections.abc import Iterable

from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.tensors import call_at
from kb.analysis.trainsteps import PARAMETERS_RECORD, PARAMETERS_TITLE, optimizer_parameters


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
        for optimizer in context.uses_named(("torch.optim.",)):
            if optimizer.record.get("kind") != "class" or not optimizer.call_span or optimizer.member:
                continue
            call = call_at(context.root, optimizer.call_span)
            edit = optimizer_parameters(call) if call is not None else None
            if edit is not None:
                yield Finding((edit.start, edit.end), [edit], call_span=(edit.start, edit.end))
