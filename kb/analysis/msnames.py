"""The MindSpore name under the cursor (``ms.nn.Dense``, ``nn.Dense`` with ``from mindspore import nn``).

Torch names are found by the resolver (``Analysis.use_at``); a MindSpore name under the cursor
(hover in migrated code) is read here: the dotted expression at an offset, its first name
expanded through the file's imports (``ImportTable``).
"""
from __future__ import annotations

from typing import Any

from kb.analysis.imports import ImportTable

MS = "mindspore"


def dotted_at(root: Any, offset: int) -> tuple[list[str], Any] | None:
    """(['ms', 'nn', 'Dense'], node spanning them) for the identifier at ``offset``."""
    node = root.named_descendant_for_byte_range(offset, offset)
    if node is None or node.type != "identifier":
        if offset > 0:
            node = root.named_descendant_for_byte_range(offset - 1, offset - 1)
        if node is None or node.type != "identifier":
            return None
    parent = node.parent
    if parent is not None and parent.type == "attribute" and parent.child_by_field_name("attribute") == node:
        node = parent
    parts: list[str] = []
    current = node
    while current is not None and current.type == "attribute":
        attr = current.child_by_field_name("attribute")
        if attr is None:
            return None
        parts.append(attr.text.decode("utf-8", "replace"))
        current = current.child_by_field_name("object")
    if current is None or current.type != "identifier":
        return None
    parts.append(current.text.decode("utf-8", "replace"))
    return parts[::-1], node


def imports_of(document: Any) -> ImportTable:
    """The document's import table, kept until the document changes."""
    found = document.cache.get("msnames.imports")
    if found is None or found[0] != document.revision:
        found = document.cache["msnames.imports"] = (document.revision,
                                                     ImportTable.build(document.tree.root_node, document.source))
    return found[1]


def mindspore_name_at(document: Any, offset: int) -> tuple[str, int, int] | None:
    """(full MindSpore name, start byte, end byte) of the expression under the cursor."""
    found = dotted_at(document.tree.root_node, offset)
    if found is None:
        return None
    parts, node = found
    head = parts[0]
    targets = {n.bound: n.target for _, n in imports_of(document).names if n.target}
    base = targets.get(head)
    if base is None or not (base == MS or base.startswith(MS + ".")):
        return None
    return ".".join([base] + parts[1:]), node.start_byte, node.end_byte
