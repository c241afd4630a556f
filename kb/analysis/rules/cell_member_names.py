"""``self.cells = nn.ModuleList(...)`` in a class that becomes a Cell: an attribute named like a Cell member.

MindSpore's ``Cell`` has members torch's ``Module`` lacks (``cells``, ``phase``, ``shard``, ``recompute`` ...: the
knowledge base's snapshot of ``mindspore.nn.Cell``). A layer or Parameter assigned to such a name raises KeyError
("the cells child cell already exists in the network": held-out batch 5's mLSTM network), and any value given to a
method's name hides the method MindSpore itself calls on every cell (``set_train`` walks ``self.cells()``); a plain
value given to one of Cell's attributes (``self.phase = phase``) is left as it is. Renaming the attribute
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
        known: dict[str, str | None] = {}  # name -> "method" | "attribute" | None (no member of Cell alone)
        layers = {u.call_span for u in context.uses_named(("torch.nn.",))
                  if u.call_span and u.record is not None and u.record.get("kind") == "class"}

        def clashes(name: str, value: Any) -> bool:
            """A method of Cell (any value hides it), or an attribute given a layer or Parameter (KeyError)."""
            if name not in known:
                known[name] = None if name.startswith("_") or context.catalog.lookup(MODULE + name) is not None \
                    else _cell_member(context.catalog, CELL + name)
            layer = value is not None and (value.start_byte, value.end_byte) in layers
            return known[name] == "method" or (known[name] == "attribute" and layer)

        for use in context.uses_named(("torch.nn.Module",)):
            if use.torch_name != "torch.nn.Module":
                continue
            node = node_of(context.root, use)
            cls = enclosing(node, "class_definition") if node is not None else None
            bases = cls.child_by_field_name("superclasses") if cls is not None else None
            if bases is None or not (bases.start_byte <= use.start and use.end <= bases.end_byte):
                continue
            for assignment, name in _self_assignments(cls):
                if clashes(name, assignment.child_by_field_name("right")):
                    yield Finding(assignment, reason=REASON.format(name=name))


def _cell_member(catalog: Any, name: str) -> str | None:
    """"method" (it has a signature), "attribute", or None when the snapshot has no such member."""
    reverse = getattr(getattr(catalog, "kb", None), "reverse", None)
    try:
        found = reverse(name) if reverse is not None else None
    except Exception:  # (a knowledge base without the MindSpore snapshot answers nothing)
        return None
    return None if not found else "method" if found.get("ms_signature") is not None else "attribute"


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
            attribute = left.child_by_field_name("attribute") if owner is not None else None
            if owner is not None and owner.text == b"self" and attribute is not None:
                yield node, attribute.text.decode()
        stack.extend(node.named_children)
