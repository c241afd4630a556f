"""A torch tensor type passed to ``Tensor.type`` (``x.type(torch.FloatTensor)``, ``x.type(dtype=torch.LongTensor)``)
names a dtype: it becomes torch's type name as a string (``'torch.FloatTensor'``), which ``ms_tensor_type`` (the
rewrite of ``Tensor.type``, data/curated/tensor_ops.yaml) casts to, as torch does on CPU (a ``.cuda`` type is read as
the CPU one: MindSpore places tensors by its context). As a value anywhere else the class keeps its own conversion."""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.text import TextEdit

# torch's legacy tensor types: torch.FloatTensor, torch.cuda.LongTensor, ... (torch.Tensor itself is no dtype)
TYPE_NAME = re.compile(r"^torch\.(?:cuda\.)?([A-Z][A-Za-z0-9]*Tensor)$")


@register
class TensorTypeNames(Rule):
    name = "tensor-type-names"
    scope = "expression"
    record = {"torch": "torch.Tensor.type"}
    title = "Pass torch's type name (ms_tensor_type casts to its dtype)"
    order = 40
    triggers = (b"Tensor", b"type")
    example = """\
import torch
def cast(x):
    return x.type(torch.DoubleTensor)
"""

    def find(self, context: Context) -> Iterable[Finding]:
        for use in context.uses_named(("torch.",)):
            match = TYPE_NAME.match(use.torch_name)
            if not match or use.call_span or use.kind == "import":
                continue
            node = context.root.named_descendant_for_byte_range(use.start, use.end)
            if node is not None and _type_argument(node):
                yield Finding((use.start, use.end), [TextEdit(use.start, use.end, f"'torch.{match[1]}'")],
                              replaces=use.torch_name, record=use.record)


def _type_argument(node: Any) -> bool:
    """Whether ``node`` is the dtype of a ``<receiver>.type(...)`` call: its one positional argument or ``dtype=``."""
    parent = node.parent
    if parent is not None and parent.type == "keyword_argument":
        key = parent.child_by_field_name("name")
        if key is None or key.text != b"dtype":
            return False
        parent = parent.parent
    elif parent is None or parent.type != "argument_list" or parent.named_children[0] != node:
        return False
    call = parent.parent if parent is not None else None
    function = call.child_by_field_name("function") if call is not None and call.type == "call" else None
    attribute = function.child_by_field_name("attribute") if function is not None and function.type == "attribute" \
        else None
    return attribute is not None and attribute.text == b"type"
