"""``optimizer.param_groups[i]['lr']`` read as a float (kb/analysis/trainloop.py)."""
from __future__ import annotations

from collections.abc import Iterable

from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.trainloop import LR_RECORD, LR_TITLE, learning_rate_reads


@register
class LearningRates(Rule):
    name = "learning-rate-read"
    scope = "expression"
    record = LR_RECORD
    title = LR_TITLE
    order = 50
    triggers = (b"param_groups",)
    example = """\
def current_lr(opt):
    return opt.param_groups[0]["lr"]
"""

    def find(self, context: Context) -> Iterable[Finding]:
        for read, edit in learning_rate_reads(context.root, context.source):
            yield Finding(read, [edit])
