"""A complex tensor's part updated in place: ``z.imag *= -1``, ``z.real += 1``, ``z.imag = 0``.

torch's ``real`` and ``imag`` are views that take in-place updates; MindSpore's are methods
(``Tensor.imag()``), so ``z.imag *= -1`` raises ``TypeError: unsupported operand type(s) for *=:
'builtin_function_or_method' and 'int'`` (fft-conv-pytorch). MindSpore has no in-place part update, so the
name is given the new tensor, made from both parts (``ops.Complex``, ``ops.real``, ``ops.imag``; the
part's dtype, hence the complex dtype, is kept)::

    z.imag *= -1      ->  z = ms.ops.conj(z)
    z.real += shift   ->  z = ms.ops.Complex()(ms.ops.real(z) + (shift), ms.ops.imag(z))
    z.imag = 0        ->  z = ms.ops.Complex()(ms.ops.real(z), ms.ops.zeros_like(ms.ops.imag(z)) + (0))

Only for a name its function binds itself (not a parameter, a global or an attribute): an update in place
would reach whatever else holds the tensor, a new binding does not, so a tensor that came from elsewhere is
left for a human with the reason.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from kb.analysis.guarded import in_runtime_test, runtime_test, simple
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.tensors import TensorNames, enclosing, tensor_names
from kb.analysis.text import TextEdit
from kb.analysis.words import word_starts

RECORD: dict[str, Any] = {
    "torch": "torch.Tensor.imag", "kind": "attribute", "namespace": "torch.Tensor", "source": "curated",
    "targets": [], "caveats": [], "torch_signature": None,
    "advice": "MindSpore's real and imag are methods, not views: an update of a part makes a new complex tensor.",
}
TITLE = "Make the complex tensor anew from its parts (MindSpore's real and imag are methods, not views)"
NEGATIVE_ONE = re.compile(r"^\(?\s*-\s*1(?:\.0*)?\s*\)?$")


@register
class ComplexParts(Rule):
    name = "complex-parts"
    scope = "function"
    record = RECORD
    title = TITLE
    order = 60
    triggers = (b"imag", b"real")
    example = """\
import torch
def flip(x):
    z = torch.fft.fft(x)
    z.imag *= -1
    return z
"""

    def find(self, context: Context) -> Iterable[Finding]:
        uses = context.uses_named(("torch.Tensor.real", "torch.Tensor.imag"))
        names = tensor_names(context.root, context.uses_named(("torch.",)), context.alias)
        for word in (b"imag", b"real"):
            for at in word_starts(context.source, word, *context.within):
                found = _finding(context, at, word.decode(), uses, names)
                if found is not None:
                    yield found


def _finding(context: Context, at: int, part: str, uses: list, names: TensorNames) -> Finding | None:
    member = context.root.named_descendant_for_byte_range(at, at + len(part))
    attribute = member.parent if member is not None and member.type == "identifier" else None
    if attribute is None or attribute.type != "attribute" or attribute.child_by_field_name("attribute") != member:
        return None
    statement = attribute.parent
    if statement is not None and statement.type == "pattern_list":
        return _both_parts(context, statement, part)
    if statement is None or statement.type not in ("assignment", "augmented_assignment") \
            or statement.child_by_field_name("left") != attribute or statement.parent.type != "expression_statement":
        return _read(context, attribute, part, uses, names)
    name = attribute.child_by_field_name("object")
    value = statement.child_by_field_name("right")
    function = enclosing(statement, "function_definition")
    if name.type != "identifier" or value is None or function is None or not _binds(function, name.text):
        return Finding(statement, reason=f"the {part} part of a tensor that came from elsewhere updated in place "
                       "(MindSpore's parts are methods: a new tensor reaches only this name)", record=RECORD)
    z, ms = name.text.decode("utf-8", "replace"), context.alias
    operator = statement.child_by_field_name("operator")
    given = value.text.decode("utf-8", "replace")
    if part == "imag" and operator is not None and operator.text == b"*=" and NEGATIVE_ONE.match(given):
        new = f"{ms}.ops.conj({z})"
    else:
        old = f"{ms}.ops.{part}({z})"
        changed = f"{old} {operator.text.decode()[:-1]} ({given})" if operator is not None \
            else f"{ms}.ops.zeros_like({old}) + ({given})"
        parts = (changed, f"{ms}.ops.imag({z})") if part == "real" else (f"{ms}.ops.real({z})", changed)
        new = f"{ms}.ops.Complex()({parts[0]}, {parts[1]})"
    return Finding(statement, [TextEdit(statement.start_byte, statement.end_byte, f"{z} = {new}")])


def _binds(function: Any, name: bytes) -> bool:
    """Whether ``function`` binds ``name`` itself by an assignment (and not as a parameter or a global)."""
    parameters = function.child_by_field_name("parameters")
    body = function.child_by_field_name("body")
    if parameters is None or body is None or re.search(rb"\b" + re.escape(name) + rb"\b", parameters.text):
        return False
    if re.search(rb"\b(?:global|nonlocal)\b[^\n]*\b" + re.escape(name) + rb"\b", body.text):
        return False
    return re.search(rb"(?m)^[ \t]*" + re.escape(name) + rb"[ \t]*(?::[^=\n]+)?=(?!=)", body.text) is not None


def _read(context: Context, attribute: Any, part: str, uses: list, names: TensorNames) -> Finding | None:
    """``a.real`` read: ``ms.ops.real(a)`` where ``a`` is known to be a tensor (a torch call's result, a name bound
    from one); else, for a simple receiver, ``ms.ops.real(a)`` where ``a`` is a MindSpore tensor (tested at run
    time), as written otherwise (a NumPy array's or a Python complex's ``real``)."""
    receiver = attribute.child_by_field_name("object")
    parent = attribute.parent
    if parent is not None and (parent.type == "call" and parent.child_by_field_name("function") == attribute
                               or parent.type in ("assignment", "augmented_assignment", "pattern_list")
                               and parent.child_by_field_name("left") == attribute):
        return None  # (``x.real()``: MindSpore's method already)
    if receiver is None or receiver.type == "identifier" and receiver.text == b"self" \
            or in_runtime_test(attribute, receiver, f"{context.alias}.Tensor"):
        return None
    known = names.is_tensor(receiver)
    if not known and not simple(receiver):
        return None
    replaced = next((u.torch_name for u in uses if (u.start, u.end) == (attribute.start_byte, attribute.end_byte)
                     or (u.start, u.end) == (attribute.child_by_field_name("attribute").start_byte,
                                             attribute.end_byte)), None)
    new = f"{context.alias}.ops.{part}({receiver.text.decode('utf-8', 'surrogateescape')})".encode()
    if known:  # (a torch call's result, a name bound from one, forward's input: no test needed)
        return Finding(attribute, [TextEdit(attribute.start_byte, attribute.end_byte, new.decode())],
                       replaces=replaced, title=f"Take the {part} part with ms.ops.{part}")
    text = runtime_test(new, attribute.text, receiver, f"{context.alias}.Tensor")
    return Finding(attribute, [TextEdit(attribute.start_byte, attribute.end_byte, text)], replaces=replaced,
                   title=f"Take the {part} part with ms.ops.{part} (if the receiver is a tensor, tested at run time)")


def _both_parts(context: Context, pattern: Any, part: str) -> Finding | None:
    """``c.real, c.imag = re, im``: ``c`` made anew from both parts, each cast to the part's dtype (torch writes into
    the existing tensor, keeping its dtype)."""
    statement = pattern.parent
    targets = pattern.named_children
    value = statement.child_by_field_name("right") if statement is not None and statement.type == "assignment" \
        else None
    names = {t.child_by_field_name("object").text for t in targets if t.type == "attribute"}
    parts = [t.child_by_field_name("attribute").text.decode() for t in targets if t.type == "attribute"]
    if part != parts[0] or value is None or len(targets) != 2 or sorted(parts) != ["imag", "real"] \
            or len(names) != 1 or value.type != "expression_list" or len(value.named_children) != 2:
        return None  # (the statement's finding belongs to its first part)
    z, ms = names.pop().decode("utf-8", "replace"), context.alias
    function = enclosing(statement, "function_definition")
    if function is None or not _binds(function, z.encode()):
        return Finding(statement, reason="both parts of a tensor that came from elsewhere set in place (MindSpore's "
                       "parts are methods: a new tensor reaches only this name)", record=RECORD)
    given = dict(zip(parts, (v.text.decode("utf-8", "replace") for v in value.named_children), strict=True))
    new = [f"({given[p]}) + {ms}.ops.zeros_like({ms}.ops.{p}({z}))" for p in ("real", "imag")]
    new = [f"({n}).astype({ms}.ops.{p}({z}).dtype)" for n, p in zip(new, ("real", "imag"), strict=True)]
    return Finding(statement, [TextEdit(statement.start_byte, statement.end_byte,
                                        f"{z} = {ms}.ops.Complex()({new[0]}, {new[1]})")])
