"""A class deriving from a torch layer (``class LayerNorm2d(nn.LayerNorm)``) takes torch's arguments.

With the migration of its base come the base's parameter map for its ``__init__`` (or one written for
it) and the MindSpore base's attribute names in its methods (layersubclass.py).
"""
from __future__ import annotations

from typing import Any

from kb.analysis.layersubclass import may_edit, subclass_edits
from kb.analysis.rules import Added, Context, Extension, register
from kb.analysis.uses import Use


@register
class LayerSubclasses(Extension):
    name = "layer-subclasses"
    extends = "class_base"
    order = 30
    example = """\
import torch.nn as nn
import torch.nn.functional as F
class LayerNorm2d(nn.LayerNorm):
    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)
"""

    def added(self, context: Context, site: Any, use: Use) -> Added | None:
        local, choice = site.local_class, use.choice
        if local is None or local.node is None or choice is None or not choice.api \
                or choice.relation == "context_change":
            return None
        names = context.catalog.parameter_names().get(choice.api, {})
        edits = subclass_edits(local, site.record, choice.target, context.alias, context.source, names)
        if not edits and not may_edit(choice.target, names):
            return None  # (nothing an edit of the class could change: ``class Net(nn.Module)`` keeps editing fast)
        return Added((local.node.start_byte, local.node.end_byte), edits)
