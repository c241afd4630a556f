"""The magnitude of a complex tensor: ``abs(z)``, ``torch.abs(z)``, ``z.abs()`` where ``z`` is known to be complex
(the result of a complex FFT, or a name its function binds only to such results). torch gives a real tensor
(float32 for complex64); MindSpore's ``abs`` keeps the complex dtype with the magnitude in the real part, so the
next real-only op fails (``TopK ... but got Tensor[Complex64]``) or the dtype differs. The magnitude is taken
as ``ms.ops.real(ms.ops.abs(z))``. A receiver not known to be complex is left as written."""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.tensors import enclosing
from kb.analysis.text import TextEdit
from kb.analysis.words import word_starts

# torch.fft functions whose result is complex (irfft, hfft and the *freq/shift helpers are not)
COMPLEX_FFTS = frozenset(f"torch.fft.{name}" for name in (
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "rfft2", "rfftn", "ihfft", "ihfft2", "ihfftn"))
TITLE = "Take the complex tensor's magnitude as a real tensor (MindSpore's abs keeps the complex dtype)"


@register
class ComplexMagnitudes(Rule):
    name = "complex-magnitudes"
    scope = "function"
    record = {"torch": "torch.abs"}
    title = TITLE
    order = 60
    triggers = (b"abs", b"fft")
    example = """\
import torch
def magnitude(x):
    z = torch.fft.rfft(x)
    return abs(z), torch.abs(torch.fft.fft(x)), z.abs()
"""

    def find(self, context: Context) -> Iterable[Finding]:
        if b"fft" not in context.source:
            return
        ffts = {u.call_span for u in context.uses_named(("torch.fft.",)) if u.torch_name in COMPLEX_FFTS
                and u.call_span}
        ms = context.alias
        # (a call converted already in an earlier pass: MindSpore's FFT of the same name)
        names = "|".join(name.rsplit(".", 1)[1] for name in COMPLEX_FFTS)
        converted = re.compile(re.escape(ms) + r"\.(?:ops|mint|mint\.fft|ops\.fft|numpy\.fft)\.(?:" + names + ")")
        if not ffts and not converted.search(context.source.decode("utf-8", "replace")):
            return
        absolutes = {u.call_span: u for u in context.uses_named(("torch.abs",)) if u.torch_name == "torch.abs"}
        for at in word_starts(context.source, b"abs", *context.within):
            word = context.root.named_descendant_for_byte_range(at, at + 3)
            found = _magnitude(word, ffts, converted) if word is not None and word.type == "identifier" else None
            if found is None:
                continue
            call, argument, opening, closing = found
            used = absolutes.get((call.start_byte, call.end_byte))
            edits = [TextEdit(*opening, f"{ms}.ops.real({ms}.ops.abs("), TextEdit(*closing, "))")]
            yield Finding((used.start, used.end) if used is not None else call, edits,
                          call_span=(call.start_byte, call.end_byte), replaces=used.torch_name if used else None)


def _magnitude(word: Any, ffts: set, converted: re.Pattern) -> tuple[Any, Any, tuple[int, int], tuple[int, int]] | None:
    """(the call, its complex operand, the span before the operand, the span after it) of ``abs(z)``,
    ``torch.abs(z)`` or ``z.abs()`` with ``z`` known to be complex; None otherwise."""
    parent = word.parent
    if parent is not None and parent.type == "call" and parent.child_by_field_name("function") == word:
        call = parent  # abs(z)
    elif parent is not None and parent.type == "attribute" and parent.child_by_field_name("attribute") == word \
            and parent.parent is not None and parent.parent.type == "call" \
            and parent.parent.child_by_field_name("function") == parent:
        call = parent.parent  # torch.abs(z) or z.abs()
    else:
        return None
    arguments = call.child_by_field_name("arguments")
    given = [a for a in arguments.named_children if a.type != "comment"] if arguments is not None else []
    if call is parent or parent.text == b"torch.abs":  # the operand is the one argument
        if len(given) != 1 or given[0].type in ("keyword_argument", "list_splat", "dictionary_splat"):
            return None
        operand = given[0]
    else:  # a method: the operand is its receiver
        if given:
            return None
        operand = parent.child_by_field_name("object")
    if not _complex(operand, ffts, converted):
        return None
    return call, operand, (call.start_byte, operand.start_byte), (operand.end_byte, call.end_byte)


def _complex(node: Any, ffts: set, converted: re.Pattern) -> bool:
    if node.type == "parenthesized_expression" and len(node.named_children) == 1:
        return _complex(node.named_children[0], ffts, converted)
    if node.type == "call":
        function = node.child_by_field_name("function")
        return (node.start_byte, node.end_byte) in ffts or function is not None \
            and converted.fullmatch(function.text.decode("utf-8", "replace")) is not None
    if node.type != "identifier":
        return False
    function = enclosing(node, "function_definition")
    body = function.child_by_field_name("body") if function is not None else None
    parameters = function.child_by_field_name("parameters") if function is not None else None
    if body is None or parameters is not None and re.search(rb"\b%s\b" % re.escape(node.text), parameters.text):
        return False
    values = []
    stack = [body]
    while stack:
        current = stack.pop()
        if current.type in ("function_definition", "class_definition", "lambda"):
            continue
        stack.extend(current.named_children)
        if current.type in ("augmented_assignment", "for_statement", "with_item", "named_expression") \
                and re.search(rb"\b%s\b" % re.escape(node.text), (current.child_by_field_name("left") or
                                                                    current).text.split(b"=")[0]):
            return False
        if current.type == "assignment":
            left = current.child_by_field_name("left")
            if left is not None and left.type == "identifier" and left.text == node.text:
                values.append(current.child_by_field_name("right"))
            elif left is not None and re.search(rb"\b%s\b" % re.escape(node.text), left.text):
                return False
    return bool(values) and all(v is not None and _complex(v, ffts, converted) for v in values)
