"""``self.norm = nn.BatchNorm2d(c)`` in a subclass of ``nn.Sequential``: ``ms_add_module(self, "norm", ...)``.

``SequentialCell.construct`` runs only its ``cell_list``, which attribute assignment does not touch
(sequential.py): the layers a subclass assigns go through the ``add_module`` rewrite's function, written
once into the file, carried by the class's migration.
"""
from __future__ import annotations

from typing import Any

from kb.analysis.adapters import insertion
from kb.analysis.rules import Added, Context, Extension, register
from kb.analysis.sequential import SEQUENTIAL, add_module_edits, sequential_assignments
from kb.analysis.uses import Use

ADD_MODULE = "torch.nn.Module.add_module"


@register
class SequentialAssignments(Extension):
    name = "sequential-assignments"
    extends = "class_base"
    order = 20
    example = """\
import torch.nn as nn
class Transition(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__()
        self.norm = nn.BatchNorm2d(cin)
        self.conv = nn.Conv2d(cin, cout, kernel_size=1)
"""

    def added(self, context: Context, site: Any, use: Use) -> Added | None:
        local = site.local_class
        if local is None or local.node is None or SEQUENTIAL not in local.torch_types():
            return None
        record = context.catalog.lookup(ADD_MODULE)
        choice = context.choose(record) if record else None
        helper = choice.target.get("helper") if choice is not None else None
        if not helper:
            return None
        name = helper.split(None, 1)[1].split("(", 1)[0]
        edits = [e for statement, value, attr in sequential_assignments(local)
                 for e in add_module_edits(statement, value, attr, name)]
        if edits:
            added = insertion(site.node, context.source, name,
                              helper.replace("{ms}", context.alias).rstrip("\n") + "\n")
            edits += [added] if added is not None else []
        return Added((local.node.start_byte, local.node.end_byte), edits)
