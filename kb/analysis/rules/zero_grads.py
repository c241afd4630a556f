"""``optimizer.zero_grad()`` / ``model.zero_grad()`` / ``p.grad = None`` loops away from a training step: removed
where the file's training step converts or the receiver is a known torch optimizer or module
(kb/analysis/zerograds.py)."""
from __future__ import annotations

from collections.abc import Hashable, Iterable

from kb.analysis.gradclipping import CLIPPING
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.stepparts import only_call, removal
from kb.analysis.trainsteps import TrainStep, train_steps
from kb.analysis.zerograds import NAMES, RECORD, TITLE, known_receiver, zero_grads


@register
class ZeroGrads(Rule):
    name = "zero-grad"
    scope = "function"  # and whether the file has a training step that converts (inputs)
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
        source = context.source
        if b"zero_grad" not in source and b".grad = None" not in source:
            return
        start, end = context.within
        node = context.root.descendant_for_byte_range(start, max(start, end - 1))
        while node is not None and node.type != "function_definition":
            node = node.parent
        # (the steps of a function hold its own statements only; a module's steps reach all of its statements)
        steps = self._steps(context, *((start, end) if node is not None else (0, len(source))))
        taken = {z.id for s in steps for z in s.zero_grads}
        has_step = bool(steps) or context.inputs_of(self)
        resolved = {use.call_span[0]: use for use in context.uses_named(NAMES) if use.call_span}
        for statement in zero_grads(context.root, source, start, end):
            if statement.id in taken:
                continue
            call = only_call(statement)
            use = resolved.get(call.start_byte) if call is not None else None
            if not (has_step or use is not None or (call is not None and known_receiver(statement))):
                continue
            edit = removal(statement, context.source)
            if use is not None:
                yield Finding((use.start, use.end), [edit], call_span=(statement.start_byte, statement.end_byte),
                              replaces=use.torch_name, record=use.record)
            else:
                head = call.child_by_field_name("function") if call is not None else statement.child(0)
                yield Finding(head, [edit], call_span=(statement.start_byte, statement.end_byte))

    def inputs(self, context: Context) -> Hashable:
        """Whether the file has a training step that converts (then every zero_grad goes)."""
        if b"zero_grad" not in context.source and b".grad = None" not in context.source:
            return False
        return bool(self._steps(context, 0, len(context.source), first=True))

    @staticmethod
    def _steps(context: Context, start: int, end: int, first: bool = False) -> list[TrainStep]:
        """The training steps that convert whose backward lies in ``start..end`` (``first``: the first one)."""
        clips = {use.call_span[0]: use.torch_name for use in context.uses_named(CLIPPING) if use.call_span}
        found = []
        for step in train_steps(context.root, context.source, start, end, clips=clips):
            if isinstance(step, TrainStep):
                found.append(step)
                if first:
                    break
        return found
