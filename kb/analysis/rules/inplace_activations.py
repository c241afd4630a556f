"""``inplace=True`` of an activation or dropout (``nn.ReLU(inplace=True)``, ``F.elu(x, inplace=True)``): the values
are torch's either way; only aliasing differs, since torch's call also overwrites its input. MindSpore has no such
switch, so the call converts without it (kb/analysis/arguments.py), and this rule marks the places where torch's
overwritten input could still be read. Nobody can read it when

- the result rebinds the input's name (``x = self.act(x)``, ``x = F.relu(x, inplace=True)``);
- the input is a fresh temporary: another layer's result (``self.act(self.bn(x))``), an operator's (``a + b``) or
  a call's other than a view of a tensor read later (``x.view(-1)``);
- the layer sits in ``nn.Sequential(...)`` or a list or tuple of layers after another one (its input is that
  layer's result).

A layer kept on ``self`` is judged by every use of that attribute in its class. Anything else (a layer appended to
a list, a local name, the first place of a Sequential, a functional call on a name read later) keeps the marker,
with the call converted, so the module still builds and runs."""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from kb.analysis.arguments import SWITCH, Blocked, read_arguments
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.transforms import literal, parse_signature

REASON = ("torch's inplace=True also overwrote the input, which may be read after this call: converted without "
          "the switch (same values); check nothing reads the input afterwards")
DISCARDED = ("torch's inplace=True call whose result is not used works only by overwriting its input, which "
             "MindSpore's call does not: assign its result")
CONTAINERS = ("list", "tuple")
# torch's view ops (docs: "Tensor Views"): their result shares its receiver's storage
VIEWS = frozenset({"view", "view_as", "reshape", "reshape_as", "transpose", "permute", "expand", "expand_as", "narrow",
                   "squeeze", "unsqueeze", "flatten", "unflatten", "contiguous", "t", "select", "split", "chunk",
                   "unbind", "movedim", "moveaxis", "swapaxes", "swapdims", "diagonal", "as_strided", "detach",
                   "unfold", "real", "imag", "split_with_sizes", "tensor_split", "hsplit", "vsplit", "mT", "mH"})


def _switch_gone(choice: Any) -> bool:
    """Whether the chosen target drops torch's ``inplace`` (MindSpore writes a new tensor)."""
    target = getattr(choice, "target", None) or {}
    found = next((p for p in target.get("params") or () if p.get("torch") == SWITCH), None)
    return found is not None and found.get("kind") in ("dropped", "unsupported")


def switch_on(call: Any, record: dict) -> bool:
    """Whether ``call`` passes torch's ``inplace`` as anything but a false literal (by keyword or position)."""
    try:
        args, _ = read_arguments(call)
    except Blocked:
        return False
    signature = parse_signature(record.get("torch_signature"))
    positional = signature.positional if signature is not None else []
    for index, arg in enumerate(args):
        if arg.star:
            return False
        if arg.keyword == SWITCH or (arg.keyword is None and index < len(positional) and positional[index] == SWITCH):
            return literal(arg.value) is not False
    return False


@register
class InplaceAliasing(Rule):
    name = "inplace-aliasing"
    scope = "class"  # a layer on ``self`` is judged by its uses in the class
    record = {"torch": "torch.nn.ReLU"}
    title = "Check the input is not read after the call (torch's inplace=True overwrote it)"
    order = 60
    triggers = (b"inplace",)
    example = """\
import torch.nn as nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ELU(inplace=True)
    def forward(self, x):
        y = self.act(x)
        return x + y
"""

    def find(self, context: Context) -> Iterable[Finding]:
        if b"inplace" not in context.source:
            return
        for use in context.uses_named(("torch.",)):
            if use.kind != "call" or not use.call_span or not use.edits or not _switch_gone(use.choice):
                continue
            call = context.root.named_descendant_for_byte_range(*use.call_span)
            if call is None or call.type != "call" or not switch_on(call, use.record) or _unobserved(call):
                continue
            statement = _statement(call)
            if statement.start_byte < call.start_byte:  # (the note on the statement's line, the call converted)
                yield Finding((statement.start_byte, call.start_byte), [], reason=REASON, record=use.record)
            elif call.parent == statement:  # ``F.relu(x, inplace=True)`` alone: it works only by overwriting x
                yield Finding(call.child_by_field_name("function") or call, [], reason=DISCARDED, record=use.record,
                              replaces=use.torch_name)


def _statement(node: Any) -> Any:
    """The statement holding ``node`` (the child of a block or the module)."""
    while node.parent is not None and node.parent.type not in ("block", "module"):
        node = node.parent
    return node


def _unobserved(call: Any) -> bool:
    """Whether nobody can read what ``call`` (a layer built, or a functional call) overwrites."""
    parent = call.parent
    if parent is not None and parent.type in ("argument_list", *CONTAINERS):
        return _after_another(call, parent)
    if parent is not None and parent.type == "call" and parent.child_by_field_name("function") == call:
        applied = parent.child_by_field_name("arguments")  # a layer built and called at once: nn.ReLU(True)(x)
        inputs = applied.named_children if applied is not None else []
        return len(inputs) == 1 and _applied_safely(parent, inputs[0])
    arguments = call.child_by_field_name("arguments")
    inputs = [a for a in arguments.named_children if a.type not in ("keyword_argument", "comment")] \
        if arguments is not None else []
    if inputs and inputs[0].type != "true" and _applied_safely(call, inputs[0]):
        return True
    if parent is not None and parent.type == "assignment" and parent.child_by_field_name("right") == call:
        left = parent.child_by_field_name("left")
        if left is not None and left.type == "attribute" and _self_attribute(left):
            return _later_in_sequential_class(parent) or _every_call_safe(left)
    return False


def _later_in_sequential_class(assignment: Any) -> bool:
    """``self.relu = nn.ReLU(inplace=True)`` in a subclass of ``nn.Sequential`` after another layer assigned on
    ``self`` (torchvision's ``_Transition``): the layers run in that order, so its input is that layer's result."""
    klass = assignment
    while klass is not None and klass.type != "class_definition":
        klass = klass.parent
    bases = klass.child_by_field_name("superclasses") if klass is not None else None
    if bases is None or not any(b.text.split(b".")[-1] == b"Sequential" for b in bases.named_children):
        return False
    statement = assignment.parent
    previous = statement.prev_named_sibling if statement is not None else None
    while previous is not None:
        earlier = previous.named_children[0] if previous.type == "expression_statement" and previous.named_children \
            else None
        if earlier is not None and earlier.type == "assignment":
            left, right = earlier.child_by_field_name("left"), earlier.child_by_field_name("right")
            if left is not None and left.type == "attribute" and _self_attribute(left) and right is not None \
                    and right.type == "call":
                return True
        previous = previous.prev_named_sibling
    return False


def _after_another(call: Any, holder: Any) -> bool:
    """A layer in ``nn.Sequential(...)``'s arguments, or in a list or tuple of layers, after another one."""
    if holder.type == "argument_list":
        outer = holder.parent
        function = outer.child_by_field_name("function") if outer is not None else None
        if function is None or function.text.split(b".")[-1] != b"Sequential":
            return False
    items = [a for a in holder.named_children if a.type not in ("keyword_argument", "comment")]
    return bool(items) and items[0] != call and call in items


def _self_attribute(node: Any) -> bool:
    obj = node.child_by_field_name("object")
    return obj is not None and obj.type == "identifier" and obj.text == b"self"


def _every_call_safe(attribute: Any) -> bool:
    """Every use of ``self.<name>`` in the class, other than its assignment, is a call whose input nobody reads."""
    klass = attribute.parent
    while klass is not None and klass.type != "class_definition":
        klass = klass.parent
    if klass is None:
        return False
    name = attribute.child_by_field_name("attribute").text
    pattern = re.compile(rb"\bself\s*\.\s*" + re.escape(name) + rb"\b")
    found = 0
    for match in pattern.finditer(klass.text):
        node = klass.named_descendant_for_byte_range(klass.start_byte + match.start(), klass.start_byte + match.end())
        while node is not None and node.type != "attribute":
            node = node.parent
        if node is None or node.id == attribute.id:
            continue
        call = node.parent
        if call is None or call.type != "call" or call.child_by_field_name("function") != node:
            return False
        arguments = call.child_by_field_name("arguments")
        inputs = arguments.named_children if arguments is not None else []
        if len(inputs) != 1 or inputs[0].type in ("keyword_argument", "list_splat", "dictionary_splat") \
                or not _applied_safely(call, inputs[0]):
            return False
        found += 1
    return found > 0


def _fresh(value: Any) -> bool:
    """A value made for the call: an operator's result, or a call's other than a view of its receiver
    (``x.view(-1)``, ``x.transpose(0, 1)``: torch's in-place write reaches ``x`` through it)."""
    while value.type == "parenthesized_expression" and value.named_children:
        value = value.named_children[0]
    if value.type in ("binary_operator", "unary_operator"):
        return True
    if value.type != "call":
        return False
    function = value.child_by_field_name("function")
    if function is not None and function.type == "attribute":
        if _self_attribute(function):
            return _layer_call(value)
        return function.child_by_field_name("attribute").text.decode() not in VIEWS
    return function is not None and function.type == "identifier"


def _applied_safely(call: Any, value: Any) -> bool:
    """The input ``value`` of ``call`` is a fresh temporary, or the call's result rebinds its name."""
    if _fresh(value):
        return True
    parent = call.parent
    if value.type == "identifier" and parent is not None and parent.type == "assignment" \
            and parent.child_by_field_name("right") == call:
        left = parent.child_by_field_name("left")
        return left is not None and left.type == "identifier" and left.text == value.text
    return False


def _layer_call(value: Any) -> bool:
    """``self.<layer>(...)`` where the class defines no method of that name: a submodule's result, a new tensor."""
    function = value.child_by_field_name("function")
    if function is None or function.type != "attribute" or not _self_attribute(function):
        return False
    klass = value.parent
    while klass is not None and klass.type != "class_definition":
        klass = klass.parent
    body = klass.child_by_field_name("body") if klass is not None else None
    name = function.child_by_field_name("attribute").text
    return body is not None and not any(
        (d.child_by_field_name("definition") if d.type == "decorated_definition" else d).type == "function_definition"
        and (d.child_by_field_name("definition") if d.type == "decorated_definition" else d)
        .child_by_field_name("name").text == name for d in body.named_children)
