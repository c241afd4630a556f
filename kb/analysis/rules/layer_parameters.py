"""``self.emb.weight`` where ``self.emb = nn.Embedding(...)``: the parameter's MindSpore name.

A layer held in an attribute keeps its torch parameter and attribute names in torch code
(``self.emb.weight``, ``self.bn.running_mean``, ``self.fc.in_features``); the MindSpore class the
layer becomes may call them otherwise (classic ``Embedding.embedding_table``, ``BatchNorm``'s
``gamma``/``moving_mean``, ``Dense.in_channels``: the knowledge base's weight rules). Where every layer
class a class assigns to an attribute renames a name alike, every ``self.<attr>.<name>`` in that class
gets the MindSpore name (weight tying such as ``self.out.weight = self.emb.weight`` then works); where
they disagree (a LayerNorm's ``gamma``, an Embedding's ``embedding_table``) the name is left.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.tensors import call_at, enclosing
from kb.analysis.text import TextEdit

RECORD: dict[str, Any] = {
    "torch": "torch.nn.Module.__getattr__", "kind": "method", "namespace": "torch.nn", "source": "curated",
    "targets": [], "caveats": [], "torch_signature": None,
    "advice": "A layer's parameter or attribute has another name on the MindSpore class it becomes.",
}
TITLE = "Use the MindSpore name of the layer's parameter"
# containers whose elements are read by index (torch's, and what a pass of fix-all made of them)
CONTAINERS = (b"ModuleList", b"Sequential", b"ms_ModuleList", b"CellList", b"SequentialCell")


@register
class LayerParameters(Rule):
    name = "layer-parameter-names"
    scope = "class"  # an attribute's layer is assigned in one method, its parameters read in others
    record = RECORD
    title = TITLE
    order = 70
    example = """\
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.out = nn.Linear(4, 10, bias=False)
        self.out.weight = self.emb.weight
"""

    def find(self, context: Context) -> Iterable[Finding]:
        start, end = context.within
        if b"class" not in context.source[start:end]:
            return  # (its findings are in classes)
        names = context.catalog.parameter_names()
        held: dict[tuple[int, str], tuple[Any, set[str]]] = {}  # (class, attribute) -> MindSpore classes assigned
        calls = [(call_at(context.root, u.call_span), u.choice.api) for u in context.uses_named(("torch.nn.",))
                 if u.record.get("kind") == "class" and u.call_span and u.choice is not None and u.choice.api]
        calls += [(call, "mindspore" + call.child_by_field_name("function").text.decode("utf-8", "replace")
                   [len(context.alias):]) for call in _converted_layers(context.root, context.source, context.alias,
                                                                         *context.within)]
        for call, api in calls:  # (torch layers, and layers an earlier pass has converted already)
            if call is not None and call.child_by_field_name("function").text.split(b".")[-1] in CONTAINERS:
                continue  # (a container: its layers say what its elements are called)
            found = _self_attribute_assigned(call) if call is not None else None
            if found is not None:
                holder, attribute = found
                held.setdefault((holder.start_byte, attribute), (holder, set()))[1].add(api)
        for (_, attribute), (holder, apis) in held.items():
            each = [names.get(api, {}) for api in apis]  # every class the attribute may hold must agree
            renames = {t: m for t, m in each[0].items() if t != m and all(n.get(t) == m for n in each[1:])}
            if renames:
                yield from _renamed(holder, attribute, renames, context.source)


def _held(call: Any) -> Any:
    """The value assigned that holds the layer ``call``: the call itself, or the container call (``nn.ModuleList``,
    ``nn.Sequential``) whose list, comprehension or arguments it is in; its attribute is then read by index
    (``self.embeddings[0].embedding_dim``)."""
    value = call
    while value.parent is not None and value.parent.type in ("list", "list_comprehension", "argument_list",
                                                             "generator_expression"):
        holder = value.parent
        if holder.type in ("list", "list_comprehension") and holder.parent is not None \
                and holder.parent.type == "argument_list":
            holder = holder.parent
        outer = holder.parent if holder.type in ("argument_list", "generator_expression") else None
        function = outer.child_by_field_name("function") if outer is not None and outer.type == "call" else None
        if function is None or function.text.split(b".")[-1] not in CONTAINERS:
            return value
        value = outer
    return value


def _self_attribute_assigned(call: Any) -> tuple[Any, str] | None:
    """(the class, ``attr``) of ``self.attr = <call>`` inside a class's method."""
    value = _held(call)
    while value.parent is not None and value.parent.type in ("conditional_expression", "parenthesized_expression"):
        value = value.parent  # ``self.norm = nn.LayerNorm(d) if pre else nn.Identity()``: either class
    assignment = value.parent
    if assignment is None or assignment.type != "assignment" or assignment.child_by_field_name("right") != value:
        return None
    left = assignment.child_by_field_name("left")
    if left is None or left.type != "attribute" or left.child_by_field_name("object").text != b"self":
        return None
    holder = enclosing(assignment, "class_definition")
    if holder is None:
        return None
    return holder, left.child_by_field_name("attribute").text.decode("utf-8", "replace")


def _converted_layers(root: Any, source: bytes, alias: str, start: int = 0, end: int | None = None) -> list[Any]:
    """Calls of ``<alias>.nn.X(...)`` / ``<alias>.mint.nn.X(...)`` in ``source[start:end]``: layers a fix has
    converted already."""
    found = []
    layer = re.compile(rb"(?<![\w.])(" + re.escape(alias.encode()) + rb"\.(?:mint\.)?nn\.[A-Za-z_]\w*)\(")
    for match in layer.finditer(source, start, len(source) if end is None else end):
        node = root.named_descendant_for_byte_range(match.start(1), match.end(1))
        call = node.parent if node is not None else None
        if call is not None and call.type == "call" and call.child_by_field_name("function") == node:
            found.append(call)
    return found


def _renamed(holder: Any, attribute: str, renames: dict[str, str], source: bytes) -> Iterable[Finding]:
    pattern = re.compile(rb"\bself\." + attribute.encode() + rb"(?:\[[^\]\n]*\])?\.(" + b"|".join(
        re.escape(t.encode()) for t in sorted(renames)) + rb")\b")
    for found in pattern.finditer(source, holder.start_byte, holder.end_byte):
        node = holder.named_descendant_for_byte_range(found.start(1), found.end(1))
        outer = node.parent if node is not None else None
        if node is None or node.type != "identifier" or outer is None or outer.type != "attribute" \
                or outer.child_by_field_name("attribute") != node or not _reads(outer.child_by_field_name("object"),
                                                                                attribute):
            continue
        new = renames[found.group(1).decode()]
        yield Finding(outer, [TextEdit(node.start_byte, node.end_byte, new)],
                      title=f"Rename .{found.group(1).decode()} to .{new} (the MindSpore layer's name)")
    yield from _looped(holder, attribute, renames, source)


def _looped(holder: Any, attribute: str, renames: dict[str, str], source: bytes) -> Iterable[Finding]:
    """``for m in self.<attribute>: ... m.weight ...``: each element of the container, by its MindSpore names, where
    the loop body never binds ``m`` again."""
    loop = re.compile(rb"\bfor\s+([A-Za-z_]\w*)\s+in\s+self\." + attribute.encode() + rb"\s*:")
    for found in loop.finditer(source, holder.start_byte, holder.end_byte):
        statement = holder.named_descendant_for_byte_range(found.start(), found.start() + 3)
        while statement is not None and statement.type != "for_statement":
            statement = statement.parent
        body = statement.child_by_field_name("body") if statement is not None else None
        if body is None:
            continue
        name = found.group(1)
        if re.search(rb"\b" + name + rb"\s*(?:,[^=\n]*)?=(?!=)|\bfor\s+" + name + rb"\b|\bas\s+" + name + rb"\b",
                     source[body.start_byte:body.end_byte]):
            continue  # (bound again in the body: not the element any more)
        read = re.compile(rb"(?<![\w.])" + name + rb"\.(" + b"|".join(re.escape(t.encode()) for t in sorted(renames))
                          + rb")\b")
        for use in read.finditer(source, body.start_byte, body.end_byte):
            node = holder.named_descendant_for_byte_range(use.start(1), use.end(1))
            if node is None or node.type != "identifier" or node.parent is None or node.parent.type != "attribute":
                continue
            new = renames[use.group(1).decode()]
            yield Finding(node.parent, [TextEdit(node.start_byte, node.end_byte, new)],
                          title=f"Rename .{use.group(1).decode()} to .{new} (the MindSpore layer's name)")


def _reads(obj: Any, attribute: str) -> bool:
    """``self.<attribute>``, or ``self.<attribute>[i]`` when the attribute holds a container of the layers."""
    if obj.type == "subscript":
        obj = obj.child_by_field_name("value")
    return obj is not None and obj.text == f"self.{attribute}".encode()
