"""The statements around a training step's ``L.backward()`` (kb/analysis/trainsteps.py reads them).

- after the backward, up to ``O.step()``: gradient clipping (alone, or under an ``if`` with no
  ``else``) and ``zero_grad()`` calls; anything else there keeps the step for a human. After a
  GradScaler's ``S.scale(L).backward()`` the step is ``S.step(O)``, and ``S.unscale_(O)`` may come first;
- before it, after the statement computing ``L``: statements that only read the forward's values
  (``total += loss.item()``, ``optimizer.zero_grad()``), never changing one in place;
- at the forward's start: data preparation (``x, y = x.float().to(device), y.long().to(device)``),
  statements that rebind a name from the same name's conversions and move no model value, so they
  stay where they are instead of stopping the forward.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from kb.analysis.gradclipping import clip_call
from kb.analysis.text import TextEdit

# tensor methods that convert, move or reshape a batch and never touch a model's parameters
DATA_METHODS = frozenset({
    "to", "float", "double", "half", "bfloat16", "long", "int", "short", "bool", "byte", "cuda", "cpu", "view",
    "reshape", "squeeze", "unsqueeze", "contiguous", "type", "permute", "transpose", "flatten", "detach",
    "clone", "t", "view_as", "type_as", "pin_memory",
})


def dotted(node: Any | None) -> str | None:
    """``a`` or ``a.b.c`` (names only), else None."""
    if node is None:
        return None
    if node.type == "identifier":
        return node.text.decode("utf-8", "replace")
    if node.type == "attribute":
        obj, attr = node.child_by_field_name("object"), node.child_by_field_name("attribute")
        head = dotted(obj)
        return f"{head}.{attr.text.decode('utf-8', 'replace')}" if head is not None and attr is not None else None
    return None


def only_call(statement: Any) -> Any | None:
    if statement is None or statement.type != "expression_statement" or len(statement.named_children) != 1:
        return None
    call = statement.named_children[0]
    return call if call.type == "call" else None


def receiver(call: Any | None, method: bytes, keywords: bool = False) -> str | None:
    """``O`` of ``O.method()`` (``O`` a name or ``self.a.b``); with ``keywords``, keyword arguments may follow."""
    if call is None:
        return None
    function, arguments = call.child_by_field_name("function"), call.child_by_field_name("arguments")
    if function is None or function.type != "attribute" or arguments is None:
        return None
    items = [a for a in arguments.named_children if a.type != "comment"]
    if items and not (keywords and all(a.type == "keyword_argument" for a in items)):
        return None
    attr = function.child_by_field_name("attribute")
    if attr is None or attr.text != method:
        return None
    return dotted(function.child_by_field_name("object"))


def zero_grad_receiver(statement: Any) -> str | None:
    """``O`` of a statement ``O.zero_grad()`` / ``O.zero_grad(set_to_none=True)``."""
    return receiver(only_call(statement), b"zero_grad", keywords=True)


def scaled_backward(call: Any | None) -> tuple[str, str] | None:
    """(``S``, ``L``) of ``S.scale(L).backward()``: a GradScaler's scaled loss (``S`` a name or ``self.a``, ``L`` a
    name)."""
    if receiver(call, b"backward") is not None or call is None:
        return None
    function, arguments = call.child_by_field_name("function"), call.child_by_field_name("arguments")
    if function is None or function.type != "attribute" or arguments is None or arguments.named_children \
            or function.child_by_field_name("attribute").text != b"backward":
        return None
    scale = scaler_call(function.child_by_field_name("object"), b"scale")
    return scale if scale is not None and scale[1].isidentifier() else None


def scaler_call(call: Any | None, method: bytes) -> tuple[str, str] | None:
    """(``S``, ``A``) of ``S.method(A)`` with one positional argument, ``S`` and ``A`` names or ``self.a.b``."""
    if call is None or call.type != "call":
        return None
    function, arguments = call.child_by_field_name("function"), call.child_by_field_name("arguments")
    items = [a for a in arguments.named_children if a.type != "comment"] if arguments is not None else []
    if function is None or function.type != "attribute" or len(items) != 1 \
            or function.child_by_field_name("attribute").text != method:
        return None
    scaler, argument = dotted(function.child_by_field_name("object")), dotted(items[0])
    return (scaler, argument) if scaler is not None and argument is not None else None


class After(NamedTuple):
    """The statements after a backward, up to its step."""

    step: Any  # ``O.step()`` (``S.step(O)`` after a scaled backward)
    optimizer: str
    clipping: list
    zero_grads: list
    unscales: list  # ``S.unscale_(O)`` statements


def after_backward(following: list, clips: dict[int, str], scaler: str | None = None) -> After | str:
    """The step, its optimizer, the clipping, zero_grad and unscale statements found in the statements after a
    backward (``scaler``: the GradScaler of a scaled one), or why there is no step to convert."""
    clipping: list[Any] = []
    zero_grads: list[Any] = []
    unscales: list[Any] = []
    for statement in following:
        optimizer = receiver(only_call(statement), b"step")
        scaled = scaler_call(only_call(statement), b"step")
        if scaler is not None and scaled is not None and scaled[0] == scaler:
            if any(scaler_call(only_call(u), b"unscale_") != scaled for u in unscales):
                return "the gradients are unscaled for another optimizer than the one stepped"
            return After(statement, scaled[1], clipping, zero_grads, unscales)
        if optimizer is not None:
            if scaler is not None:
                return f"the loss is scaled by {scaler}, and the optimizer steps without it ({optimizer}.step())"
            return After(statement, optimizer, clipping, zero_grads, unscales)
        if zero_grad_receiver(statement) is not None:
            zero_grads.append(statement)
            continue
        unscale = scaler_call(only_call(statement), b"unscale_")
        if scaler is not None and unscale is not None and unscale[0] == scaler:
            unscales.append(statement)
            continue
        if clip_call(statement, clips) is not None:
            clipping.append(statement)
            continue
        guarded = _guarded_clips(statement, clips)
        if guarded is None:
            return ("no optimizer.step() follows it in the same block (a step taken elsewhere, e.g. every k "
                    "batches: gradients accumulated over several backwards; or a statement between the backward "
                    "and the step that is not gradient clipping)")
        clipping += guarded
    return ("no optimizer.step() follows it in the same block (the step is taken elsewhere: gradients accumulated "
            "over several backwards, or a step in another function)")


def _guarded_clips(statement: Any, clips: dict[int, str]) -> list | None:
    """The clipping statements of ``if cond: <clipping only>`` (no elif/else), else None."""
    if statement.type != "if_statement" or statement.child_by_field_name("alternative") is not None:
        return None
    body = statement.child_by_field_name("consequence")
    inner = [c for c in body.named_children if c.type != "comment"] if body is not None else []
    if not inner or any(clip_call(s, clips) is None for s in inner):
        return None
    return inner


def reads_only(statement: Any, names: set[str]) -> bool:
    """A simple statement between the forward and the backward that may run after the gradients are taken:
    it changes none of the forward's values in place (``loss.mul_(2)``, ``out[0] = 0``, ``loss += 1``)."""
    if statement.type != "expression_statement":
        return False
    for node in _descendants(statement):
        if node.type == "call" and receiver_root(node) in names:
            method = node.child_by_field_name("function").child_by_field_name("attribute")
            if method is not None and method.text.endswith(b"_") and not method.text.startswith(b"_"):
                return False
        if node.type in ("assignment", "augmented_assignment"):
            left = node.child_by_field_name("left")
            if left is not None and left.type != "identifier" and _roots(left) & names:
                return False
            if node.type == "augmented_assignment" and left is not None and left.text.decode() in names:
                return False
    return True


def data_preparation(statement: Any, assigned: list[str]) -> bool:
    """``x = x.float().to(device)``: every call is a data method on one of the names the statement binds,
    and any other name it reads is an argument of such a call."""
    right = statement.named_children[0].child_by_field_name("right")
    if right is None:
        return False
    calls = [n for n in _descendants(right) if n.type == "call"]
    if not calls:
        return False
    for call in calls:
        function = call.child_by_field_name("function")
        if function is None or function.type != "attribute" or receiver_root(call) not in assigned:
            return False
        if function.child_by_field_name("attribute").text.decode() not in DATA_METHODS:
            return False
    inside_arguments = {n.id for c in calls for a in [c.child_by_field_name("arguments")] if a is not None
                        for n in _descendants(a)}
    return all(n.text.decode() in assigned or n.id in inside_arguments
               for n in _descendants(right) if n.type == "identifier" and _is_read(n))


def receiver_root(call: Any) -> str | None:
    """``x`` of ``x.a().b(...)``: the name a chain of method calls starts from."""
    node = call.child_by_field_name("function")
    while node is not None and node.type in ("attribute", "call", "subscript"):
        node = node.child_by_field_name("object") if node.type != "call" else node.child_by_field_name("function")
        if node is not None and node.type == "subscript":
            node = node.child_by_field_name("value")
    return node.text.decode("utf-8", "replace") if node is not None and node.type == "identifier" else None


def _is_read(identifier: Any) -> bool:
    """Not the attribute name of ``a.name`` nor a keyword argument's name."""
    parent = identifier.parent
    if parent is not None and parent.type == "attribute" \
            and parent.child_by_field_name("attribute").id == identifier.id:
        return False
    return not (parent is not None and parent.type == "keyword_argument"
                and parent.child_by_field_name("name").id == identifier.id)


def _roots(node: Any) -> set[str]:
    return {n.text.decode() for n in _descendants(node) if n.type == "identifier" and _is_read(n)}


def _descendants(node: Any) -> list[Any]:
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(current.named_children)
    return found


def removal(statement: Any, source: bytes) -> TextEdit:
    """The whole line of a statement, or ``pass`` when it is its block's only statement."""
    block = statement.parent
    if len([c for c in block.named_children if c.type != "comment"]) == 1:
        return TextEdit(statement.start_byte, statement.end_byte, "pass")
    start = source.rfind(b"\n", 0, statement.start_byte) + 1
    end = source.find(b"\n", statement.end_byte)
    return TextEdit(start, len(source) if end < 0 else end + 1, "")
