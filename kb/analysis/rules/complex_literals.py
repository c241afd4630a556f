"""A product or quotient with a Python complex literal: ``1j * theta``, ``x / 2j``, ``z * -1j``.

torch promotes: a float32 tensor times ``1j`` is complex64 (float64: complex128), and a complex tensor times a
Python complex stays complex. MindSpore 2.10's CPU ``Mul`` and ``Div`` take neither a Python ``complex`` operand
(``Failed calling Mul with "Mul()(input=Tensor, other=<class 'complex'>)"``: s5-pytorch's ``C_[..., 0] + 1j *
C_[..., 1]``) nor a real tensor with a complex one, though ``Add`` and ``Sub`` do. The operation becomes
``ms_complex_mul(a, b)`` (``ms_complex_div``), written once into the file, which gives a tensor side torch's complex
dtype and the number a tensor of it, and leaves two non-tensors to Python. The literal is what makes the value
complex, so the rewrite needs no knowledge of the other side; a product of a real and a complex tensor that only data
flow shows (``r * torch.exp(1j * theta)``) is left as written (the KB caveat complex-mixed-operands says so).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from kb.analysis.adapters import insertion
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.text import TextEdit

IMAGINARY = re.compile(rb"^[\d._]+(?:[eE][+-]?\d+)?[jJ]$")
NUMBERS = ("integer", "float")
HELPER = '''def ms_complex_{name}(a, b):
    """a {sign} b where one side is a Python complex (written by msmap convert): MindSpore's CPU {op} takes neither a
    Python complex nor a real tensor with a complex one, so a tensor side gets torch's complex dtype (complex128
    from float64, else complex64) and the number a tensor of it; two plain numbers are Python's."""
    tensors = [v for v in (a, b) if isinstance(v, {ms}.Tensor)]
    if not tensors:
        return a {sign} b
    wide = any(t.dtype in ({ms}.float64, {ms}.complex128) for t in tensors)
    kind = {ms}.complex128 if wide else {ms}.complex64
    a, b = (v.astype(kind) if isinstance(v, {ms}.Tensor) else {ms}.Tensor(v, kind) for v in (a, b))
    return a {sign} b
'''
OPERATORS = {"*": ("mul", "Mul"), "/": ("div", "Div")}
TITLE = "Multiply by the complex number as a complex tensor (MindSpore's CPU Mul takes no Python complex)"


def imaginary(node: Any) -> bool:
    """A complex literal: ``2j``, ``1.5e3J``, ``-1j``, ``(1j)``."""
    while node.type in ("unary_operator", "parenthesized_expression") and node.named_children:
        node = node.named_children[-1]
    return node.type in NUMBERS and IMAGINARY.match(node.text) is not None


def plain_number(node: Any) -> bool:
    while node.type in ("unary_operator", "parenthesized_expression") and node.named_children:
        node = node.named_children[-1]
    return node.type in NUMBERS


@register
class ComplexLiterals(Rule):
    name = "complex-literals"
    scope = "expression"
    record = {"torch": "torch.complex"}
    title = TITLE
    order = 40
    triggers = (b"j",)
    example = """\
import torch
def rotate(x, theta):
    return x + 1j * theta
"""

    def find(self, context: Context) -> Iterable[Finding]:
        source = context.source
        if not re.search(rb"\d[jJ]\b", source):
            return
        start, end = context.within if context.within != (0, 0) else (0, len(source))
        for at in (m.start() for m in re.finditer(rb"\d[jJ]\b", source[start:end])):
            node = context.root.named_descendant_for_byte_range(start + at, start + at + 2)
            while node is not None and node.type not in ("binary_operator", "module") \
                    and (node.type in NUMBERS or node.type in ("unary_operator", "parenthesized_expression")):
                node = node.parent
            if node is None or node.type != "binary_operator":
                continue
            operator = node.child_by_field_name("operator").type
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if operator not in OPERATORS or not (imaginary(left) or imaginary(right)) \
                    or (plain_number(left) and plain_number(right)):
                continue
            name, op = OPERATORS[operator]
            helper = f"ms_complex_{name}"
            text = f"{helper}({left.text.decode('utf-8', 'surrogateescape')}, " \
                   f"{right.text.decode('utf-8', 'surrogateescape')})"
            edits = [TextEdit(node.start_byte, node.end_byte, text)]
            definition = HELPER.format(name=name, sign=operator, op=op, ms="{ms}").replace("{ms}", context.alias)
            added = insertion(node, source, helper, definition)
            edits += [added] if added is not None else []
            yield Finding(node, edits, call_span=(node.start_byte, node.end_byte))
