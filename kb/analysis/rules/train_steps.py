"""``loss.backward(); optimizer.step()`` becomes value_and_grad and ``optimizer(grads)`` (kb/analysis/trainsteps.py)."""
from __future__ import annotations

from collections.abc import Iterable

from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.trainsteps import RECORD, TITLE, edits, train_steps


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
        for step in train_steps(context.root, context.source, *context.within):
            call = step.backward.named_children[0]
            method = call.child_by_field_name("function").child_by_field_name("attribute")  # the ``backward`` token
            # the step's own finding replaces the guess that ``L.backward`` is a tensor method
            yield Finding(method, edits(step, context.source, context.alias),
                          call_span=(call.start_byte, call.end_byte), replaces=RECORD["torch"])
