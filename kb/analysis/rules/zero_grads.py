"""``optimizer.zero_grad()`` / ``model.zero_grad()`` / ``p.grad = None`` loops away from a training step: removed
where the file's training step converts or the receiver is a known torch optimizer or module
(kb/analysis/zerograds.py)."""
from __future__ import annotations

from collections.abc import Iterable

from kb.analysis.gradclipping import CLIPPING
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.stepparts import only_call, removal
from kb.analysis.trainsteps import TrainStep, train_steps
from kb.analysis.zerograds import NAMES, RECORD, TITLE, known_receiver, zero_grads


@register
class ZeroGrads(Rule):
    name = "zero-grad"
    scope = "file"
    record = RECORD
    title = TITLE
    order = 35
    triggers = (b"zero_grad", b"grad", b"backward")
    example = """\
def train(model, batches, loss_fn, opt):
    opt.zero_grad()
    for data, target in batches:
        loss = loss_fn(model(data), target)
        loss.backward()
        opt.step()
        opt.zero_grad()
"""

    def find(self, context: Context) -> Iterable[Finding]:
        if b"zero_grad" not in context.source and b".grad = None" not in context.source:
            return
        clips = {use.call_span[0]: use.torch_name for use in context.uses_named(CLIPPING) if use.call_span}
        steps = [s for s in train_steps(context.root, context.source, clips=clips) if isinstance(s, TrainStep)]
        taken = {z.id for s in steps for z in s.zero_grads}
        resolved = {use.call_span[0]: use for use in context.uses_named(NAMES) if use.call_span}
        for statement in zero_grads(context.root, context.source):
            if statement.id in taken:
                continue
            call = only_call(statement)
            use = resolved.get(call.start_byte) if call is not None else None
            if not (steps or use is not None or (call is not None and known_receiver(statement))):
                continue
            edit = removal(statement, context.source)
            if use is not None:
                yield Finding((use.start, use.end), [edit], call_span=(statement.start_byte, statement.end_byte),
                              replaces=use.torch_name, record=use.record)
            else:
                head = call.child_by_field_name("function") if call is not None else statement.child(0)
                yield Finding(head, [edit], call_span=(statement.start_byte, statement.end_byte))
