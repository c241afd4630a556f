"""An optimizer group's learning rate read as a float and written into the optimizer's Parameter
(kb/analysis/grouprates.py)."""
from __future__ import annotations

from collections.abc import Iterable

from kb.analysis.grouprates import RECORD, TITLE, group_rates
from kb.analysis.rules import Context, Finding, Rule, register


@register
class LearningRates(Rule):
    name = "learning-rate-read"
    scope = "function"  # a loop over param_groups names the groups its body reads and writes
    record = RECORD
    title = TITLE
    order = 50
    triggers = (b"param_groups", b"lr")
    example = """\
def current_lr(opt):
    return opt.param_groups[0]["lr"]


def dampen(opt, lrs, omega):
    for group, lr in zip(opt.param_groups, lrs):
        group["lr"] = lr * omega
"""

    def find(self, context: Context) -> Iterable[Finding]:
        for node, edits in group_rates(context.root, context.source, context.alias, *context.within):
            yield Finding(node, edits)
