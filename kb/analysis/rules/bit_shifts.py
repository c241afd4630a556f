"""``a >> b`` and ``a << b`` (squeezeformer's ``input_lengths >> 2``): MindSpore 2.10's Tensor has neither operator
(TypeError for every dtype, on a tensor of either side), while ``ops.bitwise_right_shift``/``bitwise_left_shift`` give
torch's values and dtype for integer tensors. Each shift in a file that uses torch becomes ``ms_right_shift(a, b)`` /
``ms_left_shift(a, b)`` (``a >>= b``: ``a = ms_right_shift(a, b)``): the op where either side is a MindSpore tensor,
Python's operator otherwise, so it is right whatever the operands are. ``&``, ``|`` and ``^`` of a tensor run as
torch's and stay; ``~`` of an integer tensor is a logical not in MindSpore (not converted: the operand's dtype is
not known here)."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kb.analysis.adapters import insertion
from kb.analysis.guarded import written_by_msmap
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.text import TextEdit

SHIFTS = {b">>": ("ms_right_shift", "bitwise_right_shift", "torch.bitwise_right_shift"),
          b"<<": ("ms_left_shift", "bitwise_left_shift", "torch.bitwise_left_shift")}
HELPER = '''def {name}(a, b):
    """a {symbol} b as torch computes it (written by msmap convert): MindSpore's Tensor has no {symbol} operator, so
    ops.{op} where either side is a tensor, Python's {symbol} otherwise."""
    if isinstance(a, {{ms}}.Tensor) or isinstance(b, {{ms}}.Tensor):
        return {{ms}}.ops.{op}(a, b)
    return a {symbol} b
'''


@register
class BitShifts(Rule):
    name = "bit-shifts"
    scope = "statement"
    record = {"torch": "torch.bitwise_right_shift"}
    title = "Shift with MindSpore's op (its Tensor has no >> or <<)"
    order = 50
    triggers = (b">>", b"<<")
    example = """\
import torch
def lengths(x):
    n = x.sum(-1).long()
    n >>= 1
    return (n >> 2) + (n << 1)
"""

    def find(self, context: Context) -> Iterable[Finding]:
        source, (start, end) = context.source, context.within
        end = end or len(source)
        seen: set[int] = set()
        for symbol in SHIFTS:
            at = source.find(symbol, start, end)
            while at >= 0:
                node = context.root.descendant_for_byte_range(at, at + 2)
                operation = node.parent if node is not None else None
                if operation is not None and operation.id not in seen \
                        and operation.type in ("binary_operator", "augmented_assignment"):
                    seen.add(operation.id)
                    found = _finding(operation, node, symbol, context)
                    if found is not None:
                        yield found
                at = source.find(symbol, at + 2, end)


def _finding(operation: Any, operator: Any, symbol: bytes, context: Context) -> Finding | None:
    name, op, torch_name = SHIFTS[symbol]
    if operator.type not in (symbol.decode(), symbol.decode() + "="):
        return None
    left = operation.child_by_field_name("left")
    right = operation.child_by_field_name("right")
    if left is None or right is None or (left.type == "integer" and right.type == "integer") \
            or written_by_msmap(operation):
        return None  # (two int literals: Python's own shift; a helper msmap wrote shifts Python's values)
    helper = HELPER.format(name=name, symbol=symbol.decode(), op=op).replace("{ms}", context.alias)
    edits = [TextEdit(left.end_byte, right.start_byte, ", "), TextEdit(right.end_byte, right.end_byte, ")")]
    if operation.type == "augmented_assignment":  # a >>= b: a = ms_right_shift(a, b)
        if left.type not in ("identifier", "attribute", "subscript"):
            return None
        edits[0] = TextEdit(left.end_byte, right.start_byte, f" = {name}({left.text.decode()}, ")
    else:
        edits.insert(0, TextEdit(left.start_byte, left.start_byte, f"{name}("))
    added = insertion(operation, context.source, name, helper)
    return Finding(operation, edits + ([added] if added else []), record={"torch": torch_name},
                   call_span=(operation.start_byte, operation.end_byte))

