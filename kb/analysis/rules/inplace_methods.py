"""In-place tensor methods MindSpore cannot run as written get their out-of-place form:
``x.clamp_(0, 1)`` -> ``x = x.clamp(0, 1)`` (kb/analysis/inplace.py)."""
from __future__ import annotations

from typing import Any

from kb.analysis import inplace
from kb.analysis.rules import Fallback, Planning, register
from kb.analysis.text import TextEdit


@register
class InplaceMethods(Fallback):
    name = "inplace-methods"
    order = 10
    example = """\
def clip(x):
    y = x.clone()
    y.abs_()
    return y
"""

    def applies(self, site: Any, choice: Any) -> bool:
        return inplace.applies(site, choice)

    def plan(self, planning: Planning, site: Any, choice: Any) -> tuple[str, list[TextEdit]]:
        return inplace.plan(site, planning.lookup, planning.planned, planning.alias)
