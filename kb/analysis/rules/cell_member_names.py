"""``self.cells = nn.ModuleList(...)`` in a class that becomes a Cell: an attribute named like a Cell member.

MindSpore's ``Cell`` has members torch's ``Module`` lacks (``cells``, ``phase``, ``shard``, ``recompute`` ...: the
knowledge base's snapshot of ``mindspore.nn.Cell``). A layer or Parameter assigned to such a name raises KeyError
("the cells child cell already exists in the network": held-out batch 5's mLSTM network), and any other value hides
the method MindSpore itself calls on every cell (``set_train`` walks ``self.cells()``). Renaming the attribute
would change the names of the parameters under it, so a checkpoint with torch's names no longer loads: the
assignment is left for a human with the reason, never converted as if nothing happened.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.settingstatements import node_of
from kb.analysis.tensors import enclosing

CELL = "mindspore.nn.Cell."
MODULE = "torch.nn.Module."
REASON = ("'{name}' is a member of MindSpore's Cell (torch's Module has none): a layer or Parameter assigned to it "
          "raises KeyError and another value hides the method MindSpore calls; rename the attribute (its "
          "parameters' names change with it: map the checkpoint's keys)")


@register
class CellMemberNames(Rule):
    name = "cell-member-names"
    scope = "file"  # (a class's base decides its methods' assignments)
    record = {"torch": "torch.nn.Module"}
    title = "Rename the attribute named like a member of MindSpore's Cell"
    order = 70
    triggers = (b"self.",)
    example = """\
import torch.nn as nn
class Stack(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.cells = nn.ModuleList([nn.Linear(4, 4) for _ in range(n)])
"""

    def find(self, context: Context) -> Iterable[Finding]:
        known: dict[str, bool] = {}

        def clashes(name: str) -> bool:
            if name not in known:
                known[name] = not name.startswith("_") and context.catalog.lookup(MODULE + name) is None \
                    and _is_cell_member(context.catalog, CELL + name)
            return known[name]

        for use in context.uses_named(("torch.nn.Module",)):
            if use.torch_name != "torch.nn.Module":
                continue
            node = node_of(context.root, use)
            cls = enclosing(node, "class_definition") if node is not None else None
            bases = cls.child_by_field_name("superclasses") if cls is not None else None
            if bases is None or not (bases.start_byte <= use.start and use.end <= bases.end_byte):
                continue
            for assignment, name in _self_assignments(cls):
                if clashes(name):
                    yield Finding(assignment, reason=REASON.format(name=name))


def _is_cell_member(catalog: Any, name: str) -> bool:
    kb = getattr(catalog, "kb", None)
    reverse = getattr(kb, "reverse", None)
    try:
        return reverse is not None and reverse(name) is not None
    except Exception:  # (a knowledge base without the MindSpore snapshot answers nothing)
        return False


def _self_assignments(cls: Any) -> Iterable[tuple[Any, str]]:
    """(the assignment, the attribute) of each ``self.<attr> = ...`` in the class's own methods."""
    stack = [cls.child_by_field_name("body")]
    while stack:
        node = stack.pop()
        if node is None or node.type == "class_definition":
            continue
        if node.type == "assignment":
            left = node.child_by_field_name("left")
            owner = left.child_by_field_name("object") if left is not None and left.type == "attribute" else None
            if owner is not None and owner.text == b"self":
                yield node, left.child_by_field_name("attribute").text.decode()
        stack.extend(node.named_children)
