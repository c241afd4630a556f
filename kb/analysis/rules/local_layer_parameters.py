"""``m.weight`` where a function assigned ``m = nn.Embedding(...)``: the parameter's MindSpore name.

A factory function that builds a layer, initialises it and returns it (``m = nn.Embedding(n, d);
m.weight.data.normal_(0, std); return m``) reads the layer's parameters by torch's names; the MindSpore class the
layer becomes may call them otherwise (classic ``Embedding.embedding_table``, ``BatchNorm``'s ``gamma``: the
knowledge base's weight rules). Where a name is bound in its function only to layers (every binding of it there
is an assignment of a torch layer, and the classes agree on the rename), every ``<name>.<parameter>`` in that
function gets the MindSpore name. A name bound to anything else as well (a parameter, a loop variable, another
value) is left as it is: its layer is not certain. ``self.<attr>`` layers are layer_parameters.py's.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.rules.layer_parameters import RECORD, TITLE, _converted_layers
from kb.analysis.tensors import call_at, enclosing
from kb.analysis.text import TextEdit

FUNCTIONS = ("function_definition", "lambda")
# the nodes that bind an identifier child (a parameter, a loop or comprehension variable, an ``as`` target ...)
BINDERS = ("parameters", "default_parameter", "typed_parameter", "typed_default_parameter", "for_statement",
           "for_in_clause", "pattern_list", "tuple_pattern", "list_pattern", "as_pattern_target", "named_expression",
           "global_statement", "nonlocal_statement", "list_splat_pattern", "dictionary_splat_pattern", "with_item",
           "import_from_statement", "aliased_import", "import_statement", "except_clause")


@register
class LocalLayerParameters(Rule):
    name = "local-layer-parameter-names"
    scope = "function"
    record = RECORD
    title = TITLE
    order = 70
    example = """\
import torch.nn as nn
def Embedding(num, dim, std=0.01):
    m = nn.Embedding(num, dim)
    m.weight.data.normal_(0, std)
    return m
"""

    def find(self, context: Context) -> Iterable[Finding]:
        names = context.catalog.parameter_names()
        bound: dict[tuple[int, str], tuple[Any, list[Any], set[str]]] = {}  # (function, name) -> assignments, classes
        calls = [(call_at(context.root, u.call_span), u.choice.api) for u in context.uses_named(("torch.nn.",))
                 if u.record.get("kind") == "class" and u.call_span and u.choice is not None and u.choice.api]
        calls += [(call, "mindspore" + call.child_by_field_name("function").text.decode("utf-8", "replace")
                   [len(context.alias):]) for call in _converted_layers(context.root, context.source, context.alias,
                                                                         *context.within)]
        for call, api in calls:
            found = _name_assigned(call) if call is not None else None
            if found is not None:
                function, target = found
                entry = bound.setdefault((function.start_byte, target.text.decode()), (function, [], set()))
                entry[1].append(target)
                entry[2].add(api)
        for (_, name), (function, targets, apis) in bound.items():
            each = [names.get(api, {}) for api in apis]
            renames = {t: m for t, m in each[0].items() if t != m and all(n.get(t) == m for n in each[1:])}
            if renames and _bound_only_at(function, name, {t.start_byte for t in targets}):
                yield from _renamed(function, name, renames)


def _name_assigned(call: Any) -> tuple[Any, Any] | None:
    """(the function, the name's node) of ``name = <call>`` directly in a function's body."""
    value = call
    while value.parent is not None and value.parent.type in ("conditional_expression", "parenthesized_expression"):
        value = value.parent
    assignment = value.parent
    if assignment is None or assignment.type != "assignment" or assignment.child_by_field_name("right") != value:
        return None
    left = assignment.child_by_field_name("left")
    function = enclosing(assignment, "function_definition")
    if left is None or left.type != "identifier" or function is None:
        return None
    return function, left


def _bound_only_at(function: Any, name: str, layer_targets: set[int]) -> bool:
    """Whether every binding of ``name`` in ``function`` (outside nested functions) is one of the layer
    assignments (starting at ``layer_targets``)."""
    stack = list(function.named_children)
    while stack:
        node = stack.pop()
        if node.type in FUNCTIONS:
            continue  # (a nested function binds its own names)
        if node.type == "identifier" and node.text.decode() == name and node.start_byte not in layer_targets:
            parent = node.parent
            if parent is not None and (parent.type in BINDERS or (
                    parent.type in ("assignment", "augmented_assignment")
                    and parent.child_by_field_name("left") == node)):
                return False
        stack.extend(node.named_children)
    parameters = function.child_by_field_name("parameters")
    return parameters is None or all(p.text.decode().split(":")[0].split("=")[0].strip().lstrip("*") != name
                                     for p in parameters.named_children)


def _renamed(function: Any, name: str, renames: dict[str, str]) -> Iterable[Finding]:
    stack = [function.child_by_field_name("body")]
    while stack:
        node = stack.pop()
        if node is None or node.type in FUNCTIONS:
            continue
        if node.type == "attribute":
            owner, attribute = node.child_by_field_name("object"), node.child_by_field_name("attribute")
            if owner is not None and attribute is not None and owner.type == "identifier" \
                    and owner.text.decode() == name and attribute.text.decode() in renames:
                new = renames[attribute.text.decode()]
                yield Finding(node, [TextEdit(attribute.start_byte, attribute.end_byte, new)],
                              title=f"Rename .{attribute.text.decode()} to .{new} (the MindSpore layer's name)")
        stack.extend(node.named_children)
