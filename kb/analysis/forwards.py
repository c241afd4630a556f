"""The forward of a training step: the statements before ``L.backward()`` that compute ``L``, as the body of a
function (kb/analysis/trainsteps.py writes it for mindspore.value_and_grad).

The forward is the run of plain assignments (``out = model(x)``, ``a, b = f(x)``) or ``with`` blocks of them
(``with autocast(): loss = ...``; no ``as``, and not a grad-mode context such as ``no_grad``, whose block stays
outside and enters the forward as constants, as in torch) ending at the last one that assigns ``L``, taken back as
far as each statement assigns a name a later one needs. It becomes a function only when no statement reads a name
the forward assigns before assigning it (it would be unbound there) and no string spans lines (indenting would
change it).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kb.analysis.stepparts import data_preparation, scaled_backward

# contexts that change whether torch records gradients: a block under one is never moved into the forward
GRAD_MODES = (b"no_grad", b"inference_mode", b"set_grad_enabled", b"enable_grad")


def forward_of(siblings: list, computed: int, loss: str) -> tuple[list, list] | str:
    """The statements computing ``loss`` up to ``siblings[computed]`` and the names they assign (the loss first),
    or why they cannot become a function."""
    forward: list[Any] = []
    needed = {loss}
    for previous in reversed(siblings[:computed + 1]):
        bound = assigned(previous)
        if bound is None or not (set(bound) & needed):
            break
        if forward and not _closure_safe([previous] + forward) and data_preparation(previous, bound):
            break  # x = x.to(device): stays before the forward, which reads x
        forward.insert(0, previous)
        needed |= {n for reads, _ in _parts(previous) or [] for n in reads}
    if not _closure_safe(forward):
        return "the forward's statements read a name before assigning it (it would be unbound in a function)"
    return forward, list(dict.fromkeys([loss] + [n for s in forward for n in assigned(s) or [] if n != loss]))


def computed_at(siblings: list, index: int, loss: str) -> int | None:
    """The index of the last statement before ``siblings[index]`` that assigns ``loss``."""
    return next((i for i in range(index - 1, -1, -1) if loss in (assigned(siblings[i]) or [])), None)


def statements(block: Any) -> list:
    return [c for c in block.named_children if c.type != "comment"]


def backward_loss(call: Any | None) -> tuple[str | None, str | None]:
    """(``L``, None) of ``L.backward()``, (``L``, ``S``) of a GradScaler's ``S.scale(L).backward()``, else Nones."""
    loss = _method_receiver(call, b"backward")
    if loss is not None:
        return loss, None
    scaled = scaled_backward(call)
    return (scaled[1], scaled[0]) if scaled is not None else (None, None)


def _method_receiver(call: Any | None, method: bytes) -> str | None:
    """``O`` of ``O.method()`` without arguments, when ``O`` is a plain name."""
    if call is None:
        return None
    function, arguments = call.child_by_field_name("function"), call.child_by_field_name("arguments")
    if function is None or function.type != "attribute" or arguments is None or arguments.named_children:
        return None
    obj, attr = function.child_by_field_name("object"), function.child_by_field_name("attribute")
    if attr is None or attr.text != method or obj is None or obj.type != "identifier":
        return None
    return obj.text.decode("utf-8", "replace")


def assigned(statement: Any) -> list[str] | None:
    """Names a plain assignment statement binds (``a = ...``, ``a, b = ...``), or a ``with`` block of them; else
    None."""
    parts = _parts(statement)
    return None if parts is None else [n for _, names in parts for n in names]


def _parts(statement: Any) -> list[tuple[set[str], list[str]]] | None:
    """(names read, names bound) of each step of a plain assignment statement or of a ``with`` block (no ``as``)
    of them, in order (a with-item is read first); None for any other statement."""
    if statement.type == "with_statement":
        clause = next((c for c in statement.named_children if c.type == "with_clause"), None)
        body = statement.child_by_field_name("body")
        if clause is None or body is None or any(n.type == "as_pattern" for n in _descendants(clause)) \
                or any(word in clause.text for word in GRAD_MODES):
            return None  # (a grad-mode block stays outside: its values enter the forward as constants, as in torch)
        found: list[tuple[set[str], list[str]]] = [(_read(clause), [])]
        for inner in statements(body):
            parts = _parts(inner)
            if parts is None:
                return None
            found += parts
        return found
    if statement.type != "expression_statement" or len(statement.named_children) != 1:
        return None
    assignment = statement.named_children[0]
    left = assignment.child_by_field_name("left") if assignment.type == "assignment" else None
    right = assignment.child_by_field_name("right") if left is not None else None
    if left is None or right is None:
        return None
    if left.type == "identifier":
        return [(_read(right), [left.text.decode()])]
    if left.type in ("pattern_list", "tuple_pattern") and all(c.type == "identifier" for c in left.named_children):
        return [(_read(right), [c.text.decode() for c in left.named_children])]
    return None


def _read(node: Any) -> set[str]:
    found, stack = set(), [node]
    while stack:
        current = stack.pop()
        if current.type == "identifier":
            found.add(current.text.decode("utf-8", "replace"))
        stack.extend(current.named_children)
    return found


def _closure_safe(forward: list) -> bool:
    """No forward statement reads a name the forward assigns before assigning it (it would be a local
    of the new function, unbound there), and no string spans lines (indenting would change it)."""
    bound: set[str] = set()
    every = {n for s in forward for n in assigned(s) or []}
    for statement in forward:
        for reads, names in _parts(statement) or []:
            if (reads & every) - bound:
                return False
            bound |= set(names)
        if any(n.type == "string" and n.start_point[0] != n.end_point[0] for n in _descendants(statement)):
            return False
    return True


def _descendants(node: Any) -> Iterable[Any]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.named_children)
