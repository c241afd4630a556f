"""Statements about torch's runtime environment rather than the model's math (a cuDNN flag, a device move, a
TorchScript marker): where the engine's use of such a name stands in its file, and the edits that take the
statement out. The registered rules that read them: kb/analysis/rules/backend_flags.py, device_moves.py,
jit_markers.py, attention_kernels.py."""
from __future__ import annotations

from typing import Any

from kb.analysis.text import TextEdit
from kb.analysis.uses import Use


def node_of(root: Any, use: Use) -> Any:
    """The tree node of a use: its call when it has one (``torch.jit.script(f)``), else what it underlines."""
    start, end = use.call_span if use.call_span else (use.start, use.end)
    node = root.named_descendant_for_byte_range(start, end)
    while node is not None and (node.start_byte, node.end_byte) != (start, end) and node.parent is not None \
            and node.parent.start_byte == start and node.parent.end_byte <= end:
        node = node.parent
    return node


def statement_of(node: Any) -> Any | None:
    """The expression statement ``node`` is the whole of (``x.to(d)``, ``flag = value``); None otherwise."""
    parent = node.parent
    if parent is not None and parent.type == "expression_statement" and len(parent.named_children) == 1:
        return parent
    return None


def commented(statement: Any, source: bytes, why: str) -> TextEdit:
    """``statement`` replaced by a comment saying ``why`` it went (``pass  # why`` when it was its block's only
    statement, so the block still parses; plain ``pass`` where other code shares its line)."""
    if not own_line(statement, source):
        return TextEdit(statement.start_byte, statement.end_byte, "pass")
    block = statement.parent
    alone = block is not None and block.type == "block" \
        and len([c for c in block.named_children if c.type != "comment"]) == 1
    return TextEdit(statement.start_byte, statement.end_byte, f"pass  # {why}" if alone else f"# {why}")


def own_line(statement: Any, source: bytes) -> bool:
    """Whether ``statement`` is alone on its lines (no ``a; b``), so removing it leaves no other code behind."""
    start = source.rfind(b"\n", 0, statement.start_byte) + 1
    end = source.find(b"\n", statement.end_byte)
    after = source[statement.end_byte:len(source) if end < 0 else end].strip()
    return not source[start:statement.start_byte].strip() and (not after or after.startswith(b"#"))
