"""``dd = {'device': device, 'dtype': dtype}`` keeps only a dtype that is not None (kb/analysis/factorykwargs.py)."""
from __future__ import annotations

from collections.abc import Iterable

from kb.analysis.factorykwargs import RECORD, TITLE, factory_dicts
from kb.analysis.rules import Context, Finding, Rule, register


@register
class FactoryDicts(Rule):
    name = "factory-dict"
    scope = "function"
    record = RECORD
    title = TITLE
    order = 70
    triggers = (b"device", b"dtype")
    example = """\
import torch
def zeros_for(device, dtype, n):
    dd = {"device": device, "dtype": dtype}
    return torch.zeros(n, **dd)
"""

    def find(self, context: Context) -> Iterable[Finding]:
        for found in factory_dicts(context.root, context.source, *context.within):
            edit = found.edit()
            if edit is not None:
                yield Finding(found.value, [edit])
