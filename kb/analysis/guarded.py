"""Guarded rewrites: a tensor method on a receiver msmap cannot type, rewritten behind a runtime type test.

``state.transpose(0, 1)`` in a helper whose ``state`` comes through a tuple is a torch tensor's
method only if ``state`` is a tensor, which the tree does not say (``tensors.py``).  Left as
written it runs on a MindSpore tensor and crashes or differs (MindSpore's ``transpose`` takes a
permutation), so fix-all writes the use's own proven rewrite behind a test instead::

    (state.swapaxes(0, 1) if isinstance(state, ms.Tensor) else state.transpose(0, 1))

Another receiver (a NumPy array) keeps its own method.  Only where that is safe: the receiver
is evaluated twice, so it is a name, an attribute chain on a name (``self.u``, ``x.data``) or a
subscript of one by names, integers and slices (``state[layer]``); and the rewrite is an
expression's (its edits, helper definitions aside, lie inside the call), not a statement's.
The dead branch costs nothing in GRAPH_MODE: the compiler folds ``isinstance`` on a tensor to a
constant and compiles only the branch taken.  A call in a branch of such a test is settled:
converting again leaves it as it is.
"""
from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from kb.analysis.tensors import call_at
from kb.analysis.text import TextEdit, apply_edits, decode

SIMPLE_INDEXES = ("identifier", "integer", "slice", "unary_operator")  # ``state[i]``, ``x[0]``, ``x[1:]``, ``x[-1]``


def guard(use: Any, analysis: Any, is_definition: Callable[[TextEdit], bool]) -> Any | None:
    """``use`` with its rewrite behind ``isinstance(receiver, ms.Tensor)`` (helper definitions kept), or None
    when it cannot be guarded: not a ``torch.Tensor`` method with a rewrite, a receiver that is not simple, an
    edit outside the call, or a call that is already a guard's branch.  A rewrite that gives the call as
    written needs no test: then ``use`` without edits, ``unchanged``."""
    if not (use.guess and use.edits and use.call_span and use.torch_name.startswith("torch.Tensor.")) \
            or use.choice is not None and not use.choice.runs or analysis.tree is None:
        return None
    call = call_at(analysis.tree.root_node, use.call_span)
    receiver = _receiver(call)
    if receiver is None or not simple(receiver) or _in_guard(call, receiver, analysis.alias):
        return None
    start, end = use.call_span
    own = [e for e in use.edits if not is_definition(e)]
    if not own or any(e.start < start or e.end > end for e in own):
        return None
    old = analysis.source[start:end]
    new = apply_edits(old, [TextEdit(e.start - start, e.end - start, e.new_text) for e in own])
    if new == old:  # (``r.expand(n)``: MindSpore's tensor takes the call as written; another receiver too)
        return replace(use, edits=[], unchanged=True)
    if not _expression(new):  # (an in-place call rewritten as a statement: ``x.abs_()`` -> ``x = x.abs()``)
        return None
    edit = TextEdit(start, end, runtime_test(new, old, receiver, f"{analysis.alias}.Tensor"))
    return replace(use, edits=[edit] + [e for e in use.edits if is_definition(e)],
                   title=f"{use.title} (if the receiver is a tensor, tested at run time)")


def runtime_test(new: bytes, old: bytes, receiver: Any, type_name: str) -> str:
    """``(<new> if isinstance(<receiver>, <type_name>) else <old>)``: the rewrite where the receiver is of the
    MindSpore type, the code as written for any other object."""
    return f"({decode(new)} if isinstance({decode(receiver.text)}, {type_name}) else {decode(old)})"


def in_runtime_test(node: Any, receiver: Any, type_name: str) -> bool:
    """``node`` is a branch of ``(... if isinstance(<receiver>, <type_name>) else ...)`` (``runtime_test``'s, or
    one written the same way by hand): converting again leaves it as it is."""
    parent = node.parent
    if parent is None or parent.type != "conditional_expression" or len(parent.named_children) != 3:
        return False
    condition = parent.named_children[1]
    return b"".join(condition.text.split()) == b"isinstance(%s,%s)" % (b"".join(receiver.text.split()),
                                                                     type_name.encode())


def _expression(text: bytes) -> bool:
    try:
        ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return False
    return True


def settled(use: Any, analysis: Any) -> bool:
    """Whether ``use``'s call is a branch of a guard (this module's, or one written the same way by hand)."""
    if not (use.guess and use.call_span) or analysis.tree is None:
        return False
    call = call_at(analysis.tree.root_node, use.call_span)
    receiver = _receiver(call)
    return receiver is not None and _in_guard(call, receiver, analysis.alias)


def simple(node: Any) -> bool:
    """An expression free of side effects and cheap to evaluate twice: a name, an attribute chain on one,
    a subscript of one by names, integers and slices."""
    if node.type == "identifier":
        return True
    if node.type == "attribute":
        inner = node.child_by_field_name("object")
        return inner is not None and simple(inner)
    if node.type == "subscript":
        value = node.child_by_field_name("value")
        indexes = node.children_by_field_name("subscript")
        return value is not None and simple(value) and bool(indexes) and all(_index(i) for i in indexes)
    return False


def _index(node: Any) -> bool:
    if node.type == "unary_operator":
        operand = node.child_by_field_name("argument")
        return operand is not None and operand.type == "integer"
    if node.type == "slice":
        return all(_index(part) for part in node.named_children)
    return node.type in SIMPLE_INDEXES


def _receiver(call: Any | None) -> Any | None:
    function = call.child_by_field_name("function") if call is not None else None
    return function.child_by_field_name("object") if function is not None and function.type == "attribute" \
        else None


def _in_guard(call: Any, receiver: Any, alias: str) -> bool:
    """``call`` is a branch of ``(... if isinstance(<receiver>, <alias>.Tensor) else ...)``."""
    return in_runtime_test(call, receiver, f"{alias}.Tensor")
