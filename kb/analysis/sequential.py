"""Layers a subclass of ``nn.Sequential`` sets as attributes: ``self.norm = nn.BatchNorm2d(c)``.

torch registers a module assigned to an attribute of a ``Sequential`` in its ordered modules,
so ``forward`` runs it (torchvision's densenet ``_Transition`` is built this way).
``SequentialCell.construct`` runs only its ``cell_list``, which attribute assignment does not
touch: converted as it is, the block would return its input unchanged. Inside the methods of
such a class, an assignment of a layer (a torch class or a local torch class, as the resolver
recorded it: ``LocalClass.attribute_types``) becomes a call of the ``add_module`` rewrite's own
function (``ms_add_module(self, "norm", ...)``), which registers, names and runs the cell.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kb.analysis.classes import LocalClass
from kb.analysis.text import TextEdit

SEQUENTIAL = "torch.nn.Sequential"


def sequential_assignments(local: LocalClass) -> Iterable[tuple[Any, Any, str]]:
    """(statement, value node, attribute) for ``self.<attr> = <layer>`` statements in the class's
    methods, when the class derives from ``nn.Sequential``."""
    if SEQUENTIAL not in local.torch_types():
        return
    for method in local.methods.values():
        owner = _first_parameter(method)
        body = method.child_by_field_name("body")
        if owner is None or body is None:
            continue
        for statement in _statements(body):
            assignment = statement.named_children[0] if statement.named_children else None
            if assignment is None or assignment.type != "assignment":
                continue
            left, right = assignment.child_by_field_name("left"), assignment.child_by_field_name("right")
            if left is None or right is None or left.type != "attribute":
                continue
            obj, attr = left.child_by_field_name("object"), left.child_by_field_name("attribute")
            if obj is None or attr is None or obj.text != owner:
                continue
            name = attr.text.decode("utf-8", "replace")
            if local.attribute_type(name) is not None:
                yield statement, right, name


def add_module_edits(statement: Any, value: Any, attr: str, function: str) -> list[TextEdit]:
    """``self.norm = <value>`` -> ``function(self, "norm", <value>)``: two edits around the value,
    so a rewrite of the value itself stays separate."""
    owner = statement.named_children[0].child_by_field_name("left").child_by_field_name("object")
    head = f'{function}({owner.text.decode("utf-8", "replace")}, "{attr}", '
    return [TextEdit(statement.start_byte, value.start_byte, head), TextEdit(value.end_byte, value.end_byte, ")")]


def _first_parameter(method: Any) -> bytes | None:
    params = method.child_by_field_name("parameters")
    first = params.named_children[0] if params is not None and params.named_children else None
    return first.text if first is not None and first.type == "identifier" else None


def _statements(body: Any) -> Iterable[Any]:
    """Expression statements of a function body, nested blocks included, nested functions not."""
    stack = list(reversed(body.named_children))
    while stack:
        node = stack.pop()
        if node.type in ("function_definition", "class_definition", "lambda"):
            continue
        if node.type == "expression_statement":
            yield node
            continue
        stack.extend(reversed(node.named_children))
