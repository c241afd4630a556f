"""``super().forward(x)`` follows its class's migration (``forward`` -> ``construct``): the MindSpore base, or
the user's migrated base, has only the new name (kb/analysis/layersubclass.py)."""
from __future__ import annotations

from typing import Any

from kb.analysis.layersubclass import super_renames
from kb.analysis.rules import RenameFollower, register
from kb.analysis.text import TextEdit


@register
class SuperCalls(RenameFollower):
    name = "super-calls"
    order = 10
    example = """\
import torch.nn as nn
class Base(nn.Module):
    def forward(self, x):
        return x
class Twice(Base):
    def forward(self, x):
        return super().forward(x) * 2
"""

    def follow(self, local_class: Any, old: str, new: str) -> list[TextEdit]:
        return super_renames(local_class, old, new)
