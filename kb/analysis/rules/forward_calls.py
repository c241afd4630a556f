"""A module's ``forward`` called by name: ``self.cell.forward(x, h)``, ``layer.forward(x)``, ``self.forward(x)``,
``Base.forward(self, x)``, ``nn.Linear.forward(self, x)``.

A converted class is a ``Cell`` whose method is ``construct``; ``Cell`` has no ``forward``, so the call raises
``AttributeError``. Calling ``forward`` by name skips torch's hooks, and so does ``construct`` (``cell(x)`` would
run MindSpore's), so the call becomes ``.construct``:

- where the receiver is known to be a converted module: ``self`` in a migrated class, a class of the file (or a
  sibling file's, siblingclasses.py) whose lineage reaches torch, ``self.<attr>`` its class builds from one, a torch
  layer class (``nn.Linear.forward(self, x)`` -> ``ms.nn.Dense.construct(self, x)``);
- else, on a receiver cheap to evaluate twice (kb/analysis/guarded.py), behind a runtime type test, so another
  object keeps its own ``forward``: ``(m.construct(x) if isinstance(m, ms.nn.Cell) else m.forward(x))``. GRAPH_MODE
  folds the test and compiles only the branch taken.

A receiver known not to be a module (``self.plain = Plain()``, ``Plain`` a class of the file on no base) keeps its
``forward``; any other receiver (``make().forward(x)``) is left for a human with the reason. ``super().forward``
follows its class's migration elsewhere (layersubclass.py).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from kb.analysis.guarded import in_runtime_test, runtime_test, simple
from kb.analysis.rewrite import spelled
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.tensors import enclosing
from kb.analysis.text import TextEdit
from kb.analysis.words import word_starts

NAME = "torch.nn.Module.forward"
RECORD: dict[str, Any] = {
    "torch": NAME, "kind": "method", "namespace": "torch.nn", "source": "curated", "targets": [], "caveats": [],
    "torch_signature": "(*input)",
    "advice": "A converted module is a Cell, whose forward is construct: a forward called by name calls construct.",
}
TITLE = "Call construct: a converted module is a Cell, which has no forward"
UNTYPED = "a module's forward called on an expression msmap cannot type (a converted module is a Cell: call construct)"


@register
class ForwardCalls(Rule):
    name = "forward-calls"
    scope = "file"  # a ``self`` attribute's class and the file's module classes decide a call anywhere
    record = RECORD
    title = TITLE
    order = 60
    triggers = (b"forward",)
    example = """\
import torch.nn as nn
class Cell(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
    def forward(self, x):
        return self.fc(x)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = Cell()
    def forward(self, x):
        return self.cell.forward(x)
"""

    def find(self, context: Context) -> Iterable[Finding]:
        if b".forward" not in context.source:
            return
        uses = context.uses_named(("torch.nn.",))  # (layer classes; the spans of every use below)
        taken = context.spans_of_uses()
        modules = _module_classes(context, uses, taken)
        for at in word_starts(context.source, b"forward"):
            found = _finding(context, at, modules, uses, taken)
            if found is not None:
                yield found


def _finding(context: Context, at: int, modules: dict[str, bool], uses: list, taken: set) -> Finding | None:
    member = context.root.named_descendant_for_byte_range(at, at + len(b"forward"))
    attribute = member.parent if member is not None and member.type == "identifier" else None
    if attribute is None or attribute.type != "attribute" or attribute.child_by_field_name("attribute") != member:
        return None
    if any(s < member.end_byte and member.start_byte < e for s, e in taken) or _assigned(attribute):
        return None  # (a typed receiver's forward is the engine's use: ``self.fc.forward`` -> ``.construct``)
    receiver = attribute.child_by_field_name("object")
    call = attribute.parent if attribute.parent is not None and attribute.parent.type == "call" \
        and attribute.parent.child_by_field_name("function") == attribute else None
    if receiver.type == "call" and receiver.child_by_field_name("function").text == b"super":
        return None  # (its class's migration renames it: layersubclass.super_renames)
    rename = Finding(attribute, [TextEdit(member.start_byte, member.end_byte, "construct")],
                     call_span=_span(call or attribute))
    torch_class = next((u for u in uses if (u.start, u.end) == (receiver.start_byte, receiver.end_byte)
                        and u.kind in ("attribute", "call") and u.torch_name.startswith("torch.nn.")
                        and (u.record or {}).get("kind") == "class"), None)
    if torch_class is not None:  # ``nn.Linear.forward(self, x)``: the MindSpore class's construct
        choice = context.choose(torch_class.record)
        if choice is None or not choice.api:
            return Finding(attribute, reason=f"{torch_class.torch_name} has no MindSpore class here",
                           replaces=torch_class.torch_name)
        new = f"{spelled(choice.api, context.alias)}.construct"
        return Finding((receiver.start_byte, receiver.end_byte), [TextEdit(receiver.start_byte, member.end_byte, new)],
                       call_span=_span(call or attribute), replaces=torch_class.torch_name)
    known = _known(receiver, modules, context.source)
    if known is True:
        return rename
    cell = f"{context.alias}.nn.Cell"
    if known is False or in_runtime_test(call or attribute, receiver, cell):
        return None
    if not simple(receiver):
        return Finding(attribute, reason=UNTYPED, call_span=_span(call or attribute))
    whole = call or attribute
    old = whole.text
    new = old[:member.start_byte - whole.start_byte] + b"construct" + old[member.end_byte - whole.start_byte:]
    return Finding(attribute, [TextEdit(whole.start_byte, whole.end_byte, runtime_test(new, old, receiver, cell))],
                   title=f"{TITLE} (if the receiver is a Cell, tested at run time)", call_span=_span(whole))


def _span(node: Any) -> tuple[int, int]:
    return node.start_byte, node.end_byte


def _assigned(attribute: Any) -> bool:
    """``m.forward = fn``: the attribute is written, not called."""
    parent = attribute.parent
    return parent is not None and parent.type in ("assignment", "augmented_assignment") \
        and parent.child_by_field_name("left") == attribute


def _module_classes(context: Context, uses: list, spans: set) -> dict[str, bool]:
    """Class name -> whether it is a converted module (True) or a class of the file known not to be one (False):
    the classes a torch layer base migrates (their ``torch.nn`` class-base use has a fix: not an autograd Function,
    whose forward stays), those deriving from them in the file, and
    the sibling classes whose lineage reaches torch. Another class of the file is not one when it defines its own
    ``forward`` (which it keeps: an autograd Function's, converted or not) or each base is ``object``, a torch class
    other than a layer, a MindSpore class or such a class; a base imported from elsewhere leaves it unknown."""
    classes: dict[str, Any] = {}
    for at in word_starts(context.source, b"class"):
        node = context.root.named_descendant_for_byte_range(at, at + 5)
        node = node if node is not None and node.type == "class_definition" else \
            (node.parent if node is not None and node.parent is not None else None)
        if node is not None and node.type == "class_definition" and node.start_byte == at:
            name = node.child_by_field_name("name")
            if name is not None:
                classes[name.text.decode("utf-8", "replace")] = node
    found = {name: True for name in context.torch_classes}
    migrated = {u.start for u in uses if u.kind == "class_base" and u.edits and u.torch_name.startswith("torch.nn.")}
    for name, node in classes.items():
        bases = node.child_by_field_name("superclasses")
        if bases is not None and any(b.start_byte in migrated for b in bases.named_children):
            found[name] = True
    grown = True
    while grown:  # ``class Child(Base)``, ``Base`` a module class of the file
        grown = False
        for name, node in classes.items():
            bases = node.child_by_field_name("superclasses")
            if name not in found and bases is not None \
                    and any(found.get(b.text.decode("utf-8", "replace")) is True for b in bases.named_children):
                found[name] = grown = True
    torch_bases = {start for start, _ in spans}  # (a base there is a torch class: a layer's is a module above)
    mindspore = f"{context.alias}.".encode()  # (MindSpore code already, msmap's helpers too: its forward is meant)
    grown = True
    while grown:
        grown = False
        for name, node in classes.items():
            bases = node.child_by_field_name("superclasses")
            if name not in found and (re.search(rb"(?m)^[ \t]+def[ \t]+forward[ \t]*\(", node.text) or all(
                    b.text == b"object" or b.start_byte in torch_bases or b.text.startswith(mindspore)
                    or found.get(b.text.decode("utf-8", "replace")) is False
                    for b in (bases.named_children if bases is not None else ()))):
                found[name], grown = False, True
    return found


def _known(receiver: Any, modules: dict[str, bool], source: bytes) -> bool | None:
    """True: the receiver is a converted module; False: known not to be one; None: not known."""
    text = receiver.text.decode("utf-8", "replace")
    if receiver.type == "identifier" and text in ("self", "cls"):
        owner = enclosing(receiver, "class_definition")
        name = owner.child_by_field_name("name") if owner is not None else None
        return modules.get(name.text.decode("utf-8", "replace")) if name is not None else None
    if receiver.type == "identifier" and text in modules:
        return modules[text]  # ``Base.forward(self, x)``
    if receiver.type == "attribute" and receiver.child_by_field_name("object").text == b"self":
        owner = enclosing(receiver, "class_definition")
        built = re.findall(re.escape(receiver.text) + rb"[ \t]*(?::[^=\n]+)?=[ \t]*([A-Za-z_]\w*)[ \t]*\(",
                           owner.text) if owner is not None else []
        kinds = {modules.get(name.decode("utf-8", "replace")) for name in built}
        if len(kinds) == 1:
            return kinds.pop()
    return None

