"""``loss.backward(); optimizer.step()`` becomes value_and_grad and ``optimizer(grads)`` (kb/analysis/trainsteps.py),
a GradScaler's ``scaler.scale(loss).backward(); scaler.step(optimizer)`` too; a backward that is no such step is left
for a human with the reason."""
from __future__ import annotations

from collections.abc import Hashable, Iterable

from kb.analysis.gradclipping import CLIPPING, clip_call
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.trainsteps import RECORD, SCALERS, TITLE, edits, fresh_names, scaler_calls, train_steps


@register
class TrainSteps(Rule):
    name = "train-step"
    scope = "function"
    record = RECORD
    title = TITLE
    order = 30
    triggers = (b"backward",)
    example = """\
def train(model, data, target, loss_fn, opt):
    opt.zero_grad()
    output = model(data)
    loss = loss_fn(output, target)
    loss.backward()
    opt.step()
"""

    def find(self, context: Context) -> Iterable[Finding]:
        clip_uses = {use.call_span[0]: use for use in context.uses_named(CLIPPING) if use.call_span}
        clips = {start: use.torch_name for start, use in clip_uses.items()}
        scaler_uses = {use.call_span[0]: use for use in context.uses_named(SCALERS) if use.call_span}
        for step in train_steps(context.root, context.source, *context.within, clips=clips):
            statement = step[0] if isinstance(step, tuple) else step.backward
            call = statement.named_children[0]
            method = call.child_by_field_name("function").child_by_field_name("attribute")  # the ``backward`` token
            # the step's own finding replaces the guess that ``L.backward`` is a tensor method
            if isinstance(step, tuple):
                yield Finding(method, reason=f"not a training step msmap converts: {step[1]}",
                              call_span=(call.start_byte, call.end_byte), replaces=RECORD["torch"])
                continue
            fix = edits(step, context.source, context.alias, clips)
            yield Finding(method, fix, call_span=(call.start_byte, call.end_byte), replaces=RECORD["torch"])
            for clipping in step.clipping:  # each clipping call is converted by the same fix (it needs its grads)
                found = clip_call(clipping, clips)
                use = clip_uses[found[0].start_byte] if found is not None else None
                if use is not None:
                    yield Finding((use.start, use.end), fix, title=TITLE, call_span=use.call_span,
                                  record=use.record, replaces=use.torch_name)
            for start in scaler_calls(step):  # and so are the GradScaler's scale, unscale_ and step calls
                use = scaler_uses.get(start)
                if use is not None:
                    yield Finding((use.start, use.end), fix, title=TITLE, call_span=use.call_span,
                                  record=use.record, replaces=use.torch_name)

    def inputs(self, context: Context) -> Hashable:
        """The fresh names its rewrites use (``grads`` becomes ``grads_`` in a file that says ``grads``)."""
        return fresh_names(context.source)
