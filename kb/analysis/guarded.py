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
from weakref import WeakKeyDictionary

from kb.analysis.guesses import not_a_tensor
from kb.analysis.inplace import unaliased
from kb.analysis.tensors import NOT_TENSOR_METHODS, call_at, confident_guesses
from kb.analysis.text import TextEdit, apply_edits, decode

TESTED = " (if the receiver is a tensor, tested at run time)"  # said by the title of a guarded rewrite
RECEIVER_MARK = "\x00receiver\x00"  # where a chain link's rewritten receiver goes while its own edits are made
# ``state[i]``, ``x[0]``, ``x[1:]``, ``x[-1]``, ``x[None]``, ``x[..., 0]``
SIMPLE_INDEXES = ("identifier", "integer", "slice", "unary_operator", "none", "ellipsis")


def guard(use: Any, analysis: Any, is_definition: Callable[[TextEdit], bool]) -> Any | None:
    """``use`` with its rewrite behind ``isinstance(receiver, ms.Tensor)`` (helper definitions kept), or None
    when it cannot be guarded: not a ``torch.Tensor`` method with a rewrite, a receiver that is not simple, an
    edit outside the call, or a call that is already a guard's branch.  A rewrite that gives the call as
    written needs no test: then ``use`` without edits, ``unchanged``.

    A chain of guessed methods on one simple receiver (``mem.clone().detach().transpose(0, 1)``) is guarded
    whole: on a tensor every link's receiver is a tensor, so the chain's first use carries one test around all
    the links' rewrites, and the later links, inside it, need nothing more (``unchanged``)."""
    if not (use.guess and use.call_span and use.torch_name.startswith("torch.Tensor.")) \
            or not _runs(use) or analysis.tree is None:
        return None
    call = call_at(analysis.tree.root_node, use.call_span)
    receiver = _receiver(call)
    if receiver is not None and not_a_tensor(receiver, analysis.source):
        return replace(use, edits=[], unchanged=True)  # (a NumPy array's own method: as written, no test)
    links = _chain(call, analysis, is_definition)
    if call is not None and links is not None and len(links) > 1:
        first = _guard_chain(links[0][1], links, analysis, is_definition)
        if first is None or links[0][0].id == call.id:
            return first
        # a later link: its chain's first use guards it
        return replace(use, edits=[], unchanged=True) if any(c.id == call.id for c, _ in links) else None
    if not use.edits:
        return None
    if receiver is None or not simple(receiver) or _in_guard(call, receiver, analysis.alias):
        return None
    start, end = use.call_span
    own = [e for e in use.edits if not is_definition(e)]
    if not own or any(e.start < start or e.end > end for e in own):
        return None
    old = analysis.source[start:end]
    new = apply_edits(old, [TextEdit(e.start - start, e.end - start, e.new_text) for e in own])
    definitions = [e for e in use.edits if is_definition(e)]
    if new != old and not _expression(new):  # an in-place call's statement: ``s.zero_()`` -> ``s = zeros_like(s)``
        return statement_guard(use, call, new, receiver, analysis, definitions)
    return _guarded(use, new, old, receiver, start, end, analysis.alias, definitions)


def statement_guard(use: Any, call: Any, new: bytes, receiver: Any, analysis: Any,
                    definitions: list[TextEdit]) -> Any | None:
    """A whole statement ``s.zero_()`` rewritten as a statement (``s = ms.ops.zeros_like(s)``, inplace.py) behind
    the test, one statement each way::

        if isinstance(s, ms.Tensor): s = ms.ops.zeros_like(s)
        else: s.zero_()

    Only where the statement has its own line and the rewrite keeps torch's meaning for every name: a rebinding
    of a name no other name may hold (``inplace.unaliased``: the function's own name, bound only to new tensors,
    never a parameter), or a write into the tensor itself (``assign_value``, a slice assignment), which every
    holder sees.  Elsewhere None: the marker stays."""
    head = _value_assignment(call) or call  # ``y = s.masked_fill_(m, v)`` -> ``y = s = s.masked_fill(m, v)``
    statement = head.parent
    source = analysis.source
    if statement is None or statement.type != "expression_statement" or len(statement.named_children) != 1 \
            or statement.parent is None or statement.parent.type not in ("block", "module"):
        return None
    new = source[head.start_byte:call.start_byte] + new.strip() + source[call.end_byte:head.end_byte]
    line = source.rfind(b"\n", 0, statement.start_byte) + 1
    indent = source[line:statement.start_byte]
    rest = source[statement.end_byte:].split(b"\n", 1)[0].strip()
    if indent.strip() or rest and not rest.startswith(b"#"):
        return None  # (``x = 1; s.zero_()``: not a line of its own)
    try:
        body = ast.parse(new.strip()).body
    except (SyntaxError, ValueError):
        return None
    if len(body) != 1:
        return None
    rebound = body[0]
    if head is not call:  # (the names the statement binds, the receiver's last: every one gets the new value)
        if not (isinstance(rebound, ast.Assign) and isinstance(rebound.targets[-1], ast.Name)) \
                or receiver.type != "identifier" or rebound.targets[-1].id != decode(receiver.text) \
                or not unaliased(receiver):
            return None
    elif isinstance(rebound, ast.Assign) and len(rebound.targets) == 1 and isinstance(rebound.targets[0], ast.Name):
        if receiver.type != "identifier" or rebound.targets[0].id != decode(receiver.text) \
                or not unaliased(receiver):
            return None
    elif not (isinstance(rebound, ast.Assign) and isinstance(rebound.targets[0], ast.Subscript)
              or isinstance(rebound, ast.Expr) and isinstance(rebound.value, ast.Call)
              and isinstance(rebound.value.func, ast.Attribute) and rebound.value.func.attr == "assign_value"):
        return None
    text = f"if isinstance({decode(receiver.text)}, {analysis.alias}.Tensor): {decode(new.strip())}\n" \
        f"{decode(indent)}else: {decode(source[head.start_byte:head.end_byte])}"
    edit = TextEdit(head.start_byte, head.end_byte, text)
    return replace(use, edits=[edit] + definitions, title=f"{use.title}{TESTED}")


def _value_assignment(call: Any) -> Any | None:
    """The plain assignment whose whole value ``call`` is (``y = s.masked_fill_(m, v)``), if any."""
    assignment = call.parent
    if assignment is None or assignment.type != "assignment" or assignment.child_by_field_name("type") is not None:
        return None
    right = assignment.child_by_field_name("right")
    return assignment if right is not None and right.id == call.id else None


def _guarded(use: Any, new: bytes, old: bytes, receiver: Any, start: int, end: int, alias: str,
             definitions: list[TextEdit]) -> Any | None:
    if new == old:  # (``r.expand(n)``: MindSpore's tensor takes the call as written; another receiver too)
        return replace(use, edits=[], unchanged=True)
    if not _expression(new):  # (an in-place call rewritten as a statement: ``x.abs_()`` -> ``x = x.abs()``)
        return None
    edit = TextEdit(start, end, runtime_test(new, old, receiver, f"{alias}.Tensor"))
    return replace(use, edits=[edit] + definitions, title=f"{use.title}{TESTED}")


def _guard_chain(use: Any, links: list[tuple[Any, Any]], analysis: Any,
                 is_definition: Callable[[TextEdit], bool]) -> Any | None:
    """The first link's ``use`` rewritten as one guard around the whole chain ``links`` ((call, use), the
    receiver's call first): each link's edits are made on the text the links before it became."""
    top = links[-1][0]
    source, text, inner = analysis.source, b"", None
    for call, link in links:
        edits = [e for e in link.edits if not is_definition(e)]
        start = call.start_byte
        if inner is not None:  # the receiver, rewritten already, stands in as a mark the edits keep
            covering = [e for e in edits if e.start <= inner.start_byte and inner.end_byte <= e.end]
            clear = [e for e in edits if e.end <= inner.start_byte or e.start >= inner.end_byte]
            if len(covering) + len(clear) != len(edits) or len(covering) > 1:
                return None
            held = source[inner.start_byte:inner.end_byte].decode("utf-8", "surrogateescape")
            if covering and held not in covering[0].new_text:
                return None  # (a rewrite naming the receiver twice evaluates it twice: links have no side effects)
            marked = [TextEdit(e.start, e.end, e.new_text.replace(held, RECEIVER_MARK)) for e in covering]
            edits = clear + (marked or [TextEdit(inner.start_byte, inner.end_byte, RECEIVER_MARK)])
        new = apply_edits(source[start:call.end_byte], [TextEdit(e.start - start, e.end - start, e.new_text)
                                                         for e in edits])
        text = new.replace(RECEIVER_MARK.encode(), text) if inner is not None else new
        inner = call
    definitions = [e for _, link in links for e in link.edits if is_definition(e)]
    receiver = _receiver(links[0][0])
    return _guarded(use, text, source[top.start_byte:top.end_byte], receiver, top.start_byte, top.end_byte,
                    analysis.alias, definitions)


def _chain(call: Any | None, analysis: Any, is_definition: Callable[[TextEdit], bool]) -> list[tuple[Any, Any]] | None:
    """The chain of guessed method calls ``call`` belongs to, as (call, use) from the one on the simple receiver
    outwards, as far as each link has a rewrite made inside its own call that is an expression (or runs as
    written) and returns a tensor; None when the chain's first receiver is not simple, or not a chain."""
    if call is None:
        return None
    first = call
    while (inner := _receiver(first)) is not None and inner.type == "call" and _receiver(inner) is not None:
        first = inner
    receiver = _receiver(first)
    if receiver is None or not simple(receiver) or _in_guard(first, receiver, analysis.alias):
        return None
    uses, sure = _guesses(analysis)
    links = []
    current = first
    while current is not None:
        link = uses.get((current.start_byte, current.end_byte))
        if link is None or not _link(link, current, is_definition) or link.call_span in sure:
            break  # (a link known to be a tensor's method is fix-all's own: its rewrite needs no test)
        links.append((current, link))
        method = current.child_by_field_name("function").child_by_field_name("attribute")
        if method is None or method.text in NOT_TENSOR_METHODS:
            break
        current = _outer(current)
    return links or None


def _link(link: Any | None, call: Any, is_definition: Callable[[TextEdit], bool]) -> bool:
    """A guessed ``torch.Tensor`` method whose rewrite runs, lies inside its call and is an expression."""
    if link is None or not link.torch_name.startswith("torch.Tensor.") or not _runs(link):
        return False
    own = [e for e in link.edits if not is_definition(e)]
    if not own:
        return link.unchanged or not link.reason
    if any(e.start < call.start_byte or e.end > call.end_byte for e in own):
        return False
    return all(_expression(e.new_text.encode("utf-8", "surrogateescape"))
               for e in own if e.start == call.start_byte and e.end == call.end_byte)


def _runs(use: Any) -> bool:
    """The use's rewrite runs here: its target does, or a fallback planned it another way (an in-place method
    without a kernel through its out-of-place twin: inplace.py)."""
    return use.choice is None or use.choice.runs or bool(use.extended_by and use.edits)


def _outer(call: Any) -> Any | None:
    """The method call made on ``call``'s result (``x.a().b()``: ``b``'s call for ``a``'s), if any."""
    attribute = call.parent
    if attribute is None or attribute.type != "attribute" or not _same(attribute.child_by_field_name("object"), call):
        return None
    outer = attribute.parent
    if outer is None or outer.type != "call" or not _same(outer.child_by_field_name("function"), attribute):
        return None
    return outer


def _same(a: Any | None, b: Any) -> bool:
    return a is not None and a.id == b.id


_GUESSES: WeakKeyDictionary = WeakKeyDictionary()


def _guesses(analysis: Any) -> tuple[dict[tuple[int, int], Any], set[tuple[int, int]]]:
    """The analysis's guessed uses by call span, and the spans of those on receivers known to be tensors or
    rewritten for any receiver (``confident_guesses``), read once per analysis."""
    found = _GUESSES.get(analysis)
    if found is None:
        found = _GUESSES[analysis] = ({u.call_span: u for u in analysis.uses if u.guess and u.call_span},
                                      confident_guesses(analysis, with_edits=False))
    return found


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
    """Whether ``use``'s call is a branch of a guard (this module's, or one written the same way by hand), or a
    link of a chain of methods on a receiver such a guard tests."""
    if not (use.guess and use.call_span) or analysis.tree is None:
        return False
    call = call_at(analysis.tree.root_node, use.call_span)
    if written_by_msmap(call):
        return True  # (msmap's own helper: its calls are MindSpore's, as written)
    first = call
    while first is not None and (inner := _receiver(first)) is not None and inner.type == "call" \
            and _receiver(inner) is not None:
        first = inner
    receiver = _receiver(first)
    return receiver is not None and (_in_guard(call, receiver, analysis.alias)
                                     or _within_guard(call, receiver, f"{analysis.alias}.Tensor"))


WRITTEN = b"(written by msmap convert)"


def written_by_msmap(node: Any | None) -> bool:
    """``node`` lies in a function or class whose docstring says msmap wrote it (a helper convert adds)."""
    while node is not None:
        if node.type in ("function_definition", "class_definition"):
            body = node.child_by_field_name("body")
            first = body.named_children[0] if body is not None and body.named_children else None
            if first is not None and first.type == "expression_statement" and WRITTEN in first.text:
                return True
        node = node.parent
    return False


def _within_guard(node: Any, receiver: Any, type_name: str) -> bool:
    """``node`` lies in ``(... if isinstance(<receiver>, <type_name>) else ...)`` or in the ``else`` of a
    statement ``if isinstance(<receiver>, <type_name>): ...`` (where it is not that type), within its statement's
    function."""
    test = b"isinstance(%s,%s)" % (b"".join(receiver.text.split()), type_name.encode())
    below, parent = node, node.parent
    while parent is not None and parent.type not in ("function_definition", "class_definition", "module", "lambda"):
        if parent.type == "conditional_expression" and len(parent.named_children) == 3:
            if b"".join(parent.named_children[1].text.split()) == test:
                return True
        elif parent.type == "if_statement" and below.type == "else_clause":
            condition = parent.child_by_field_name("condition")
            if condition is not None and b"".join(condition.text.split()) == test:
                return True
        below, parent = parent, parent.parent
    return False


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
    """An index free of side effects: a name or an attribute chain on one, an integer, ``None``, ``...``, a string,
    a negated one of those, or a slice, list or tuple of them (``t[..., -self.max_len:, :]``, ``x[None, ...]``,
    ``out["logits"][[i]]``)."""
    if node.type == "unary_operator":
        operand = node.child_by_field_name("argument")
        return operand is not None and (operand.type == "integer" or simple(operand))
    if node.type in ("slice", "list", "tuple"):  # (``x[1:n]``, ``p[[idx]]``)
        return all(_index(part) for part in node.named_children)
    if node.type == "string":  # a key (``out["logits"]``), not an f-string
        return not any(part.type == "interpolation" for part in node.named_children)
    return node.type in SIMPLE_INDEXES or node.type == "attribute" and simple(node)


def _receiver(call: Any | None) -> Any | None:
    function = call.child_by_field_name("function") if call is not None else None
    return function.child_by_field_name("object") if function is not None and function.type == "attribute" \
        else None


def _in_guard(call: Any, receiver: Any, alias: str) -> bool:
    """``call`` is a branch of ``(... if isinstance(<receiver>, <alias>.Tensor) else ...)``."""
    return in_runtime_test(call, receiver, f"{alias}.Tensor")
