"""``m.weight`` -> ``m.gamma`` inside ``if isinstance(m, nn.BatchNorm2d):``, carried by the class's rename.

Inside a branch that tests a layer's type the object's MindSpore class is known, so its parameter and
attribute names follow the knowledge base's weight rules (narrowing.py). The renames extend the fix of
the first class the test names (``nn.BatchNorm2d`` -> ``ms.nn.BatchNorm2d``); the branch is what they
depend on.
"""
from __future__ import annotations

from typing import Any

from kb.analysis.narrowing import branch_renames
from kb.analysis.rewrite import in_type_context
from kb.analysis.rules import Added, Context, Extension, register
from kb.analysis.uses import Use


@register
class BranchRenames(Extension):
    name = "branch-renames"
    extends = "attribute"
    order = 10
    example = """\
import torch.nn as nn
def init_norms(model):
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            nn.init.constant_(m.weight, 1)
            nn.init.constant_(m.bias, 0)
"""

    def extend(self, context: Context, pairs: list[tuple[Any, Use]]) -> dict[int, Added]:
        """The classes of one test belong together: the renames follow every class it names."""
        typed = {site.node.id: index for index, (site, use) in enumerate(pairs)
                 if use.choice is not None and use.choice.api and in_type_context(site.node)}
        if not typed:
            return {}
        found = branch_renames([(site.node, use.choice.api, use.edits[0].new_text)
                                for site, use in (pairs[index] for index in typed.values())
                                if use.choice is not None and use.choice.api], context.catalog.parameter_names())
        return {typed[node]: Added(reach, edits) for node, (reach, edits) in found.items()}
