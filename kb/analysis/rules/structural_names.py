"""Parameter names from the model's structure after ``self.features.add_module(...)`` in ``__init__``.

MindSpore names a cell's parameters when the cell is attached: ``self.features = nn.Sequential()``
attaches an empty cell, and what ``add_module`` puts into it afterwards is named ``weight`` instead of
``features.init_block.weight`` (a converted checkpoint does not load; two layers share a name). The
structure itself is right (``parameters_and_names()`` walks it), so at the end of such an ``__init__``
every parameter takes its structural name; a model holding this one prefixes them again when it attaches
it, as MindSpore does for any cell.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kb.analysis.adapters import insertion
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.text import TextEdit

HELPER = "ms_name_parameters"
DEFINITION = f'''def {HELPER}(cell):
    """Every parameter of cell named by its place in cell (written by msmap convert), as torch's state_dict
    keys: children added to an attached container are otherwise named without the container's path."""
    for name, parameter in cell.parameters_and_names():
        parameter.name = name
'''
RECORD: dict[str, Any] = {
    "torch": "torch.nn.Module.add_module", "kind": "method", "namespace": "torch.nn", "source": "curated",
    "targets": [], "caveats": [], "torch_signature": "(name, module)",
    "advice": "Children added to an attached container get their structural parameter names at the end of __init__.",
}
TITLE = "Name the parameters by their place in the model at the end of __init__"
WORDS = (b".add_module(", b".register_module(")


@register
class StructuralNames(Rule):
    name = "structural-parameter-names"
    scope = "function"
    record = RECORD
    title = TITLE
    order = 60
    triggers = (b"add_module", b"register_module")
    example = """\
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        layers = nn.Sequential()
        layers.add_module("block", nn.Linear(2, 2))
        self.features = layers
"""

    def find(self, context: Context) -> Iterable[Finding]:
        done: set[int] = set()
        start, end = context.within
        for word in WORDS:
            at = context.source.find(word, start, end)
            while at >= 0:
                init = _attached_container_init(context.root, at)
                if init is not None and init.id not in done:
                    done.add(init.id)
                    yield _finding(init, context.source)
                at = context.source.find(word, at + 1, end)


def _attached_container_init(root: Any, at: int) -> Any | None:
    """The ``__init__`` of a class holding ``X.add_module(...)`` at ``at``, when ``X`` is not ``self``
    (``self.add_module`` names from the cell being built, which its holder prefixes when it attaches it)."""
    node = root.named_descendant_for_byte_range(at + 1, at + 2)
    attribute = node.parent if node is not None else None
    if attribute is None or attribute.type != "attribute" or attribute.parent is None \
            or attribute.parent.type != "call":
        return None
    receiver = attribute.child_by_field_name("object")
    if receiver is None or receiver.text == b"self":
        return None
    function = attribute.parent
    while function is not None and function.type not in ("function_definition", "class_definition"):
        function = function.parent
    if function is None or function.type != "function_definition" \
            or function.child_by_field_name("name").text != b"__init__":
        return None
    holder = function.parent.parent if function.parent is not None else None  # block -> class
    if holder is None or holder.type != "class_definition":
        return None
    body = function.child_by_field_name("body")
    if body is None or not body.named_children or body.has_error or f"{HELPER}(self)".encode() in body.text:
        return None  # (a body being typed, with a syntax error, is left until it parses)
    return function


def _finding(init: Any, source: bytes) -> Finding:
    body = init.child_by_field_name("body")
    last = body.named_children[-1]
    indent = source[source.rfind(b"\n", 0, body.start_byte) + 1:body.start_byte].decode("utf-8", "replace")
    edits = [TextEdit(last.end_byte, last.end_byte, f"\n{indent}{HELPER}(self)")]
    added = insertion(init, source, HELPER, DEFINITION)
    name = init.child_by_field_name("name")
    return Finding(name, edits + ([added] if added is not None else []), call_span=(name.start_byte, name.end_byte))
