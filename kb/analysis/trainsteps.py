"""The training step: ``optimizer.zero_grad(); loss = ...; loss.backward(); optimizer.step()``.

MindSpore has no ``backward`` on a tensor: gradients come from a function of the forward
computation (``mindspore.value_and_grad``) and an optimizer is called with them. In one block
(a loop body, usually) the rule finds ``L.backward()`` followed directly by ``O.step()``, takes
the assignments just before the backward that compute ``L`` (back to the block's start, a
``O.zero_grad()`` or the first statement ``L`` does not need), and writes them as a function::

    optimizer.zero_grad()                    ->  (removed: gradients are computed afresh)
    output = model(data)                         def forward_fn():
    loss = F.nll_loss(output, target)                output = model(data)
                                                     loss = F.nll_loss(output, target)
    loss.backward()                                  return loss, output
                                                 (loss, output), grads = ms.value_and_grad(
                                                     forward_fn, None, optimizer.parameters, has_aux=True)()
    optimizer.step()                         ->  optimizer(grads)

The edits leave the forward statements' own text in place (indented), so their own conversions
apply in any order. Around them (kb/analysis/stepparts.py): gradient clipping between the backward
and the step works on ``grads`` (kb/analysis/gradclipping.py); ``zero_grad()`` calls there or in
the block are removed (kb/analysis/zerograds.py removes those elsewhere); statements between the
loss and the backward that only read the forward's values stay after it, the gradients then being
taken where the forward ends; data preparation (``x = x.to(device)``) stays before the forward. The
conversion assumes torch's gradients are zero at the backward (a zero_grad before it, or after the
previous step), as value_and_grad's are. A ``L.backward()`` that is no such step is reported with
its reason: several backwards before a step (accumulation), no step after it in the same block,
another statement between them, a forward that reads a name before assigning it.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kb.analysis.gradclipping import clip_edits
from kb.analysis.stepparts import (
    after_backward,
    data_preparation,
    only_call,
    reads_only,
    receiver,
    removal,
    zero_grad_receiver,
)
from kb.analysis.text import TextEdit

RECORD: dict[str, Any] = {
    "torch": "torch.Tensor.backward", "kind": "method", "namespace": "torch", "source": "curated",
    "targets": [], "caveats": [], "torch_signature": "(self, gradient=None, retain_graph=None, create_graph=False)",
    "advice": "A training step becomes a forward function, mindspore.value_and_grad and optimizer(grads).",
}
TITLE = "Compute the gradients with mindspore.value_and_grad and call the optimizer with them"
INDENT = "    "


@dataclass
class TrainStep:
    backward: Any  # the ``L.backward()`` expression statement
    step: Any  # the ``O.step()`` expression statement
    forward: list  # the assignment statements computing L, in order
    zero_grads: list  # ``zero_grad()`` statements of the block on O, and those between the forward and the step
    loss: str
    optimizer: str
    names: list  # names the forward assigns, the loss first
    clipping: list = field(default_factory=list)  # gradient clipping statements between the backward and the step
    trailing: bool = False  # statements between the forward and the backward: the gradients are taken after the forward


def train_steps(root: Any, source: bytes, start: int = 0, end: int | None = None,
                clips: dict[int, str] | None = None) -> Iterable[TrainStep | tuple[Any, str]]:
    """The training steps whose ``.backward()`` lies in ``source[start:end]``, and (backward statement, reason)
    for a ``L.backward()`` statement that is not one (gradient accumulation, no step after it, ...).
    ``clips``: {start of a gradient clipping call: its torch name} (kb/analysis/gradclipping.py)."""
    end = len(source) if end is None else end
    at = source.find(b".backward()", start, end)
    while at >= 0:
        found = _step_at(root, at, clips or {})
        if found is not None:
            yield found
        at = source.find(b".backward()", at + 1, end)


def edits(step: TrainStep, source: bytes, alias: str, clips: dict[int, str] | None = None) -> list[TextEdit]:
    indent = _indent(source, step.backward.start_byte)
    fn, grads = _fresh(source, "forward_fn"), _fresh(source, "grads")
    out = []
    for number, statement in enumerate(step.forward):  # the forward's lines, one level deeper
        start = source.rfind(b"\n", 0, statement.start_byte) + 1
        out.append(TextEdit(start, start, (f"{indent}def {fn}():\n" if number == 0 else "") + INDENT))
        for offset in _line_starts(source, statement.start_byte, statement.end_byte):
            out.append(TextEdit(offset, offset, INDENT))
    values = ", ".join(step.names)
    aux = len(step.names) > 1
    target = f"({values})" if aux else step.loss
    call = f"{alias}.value_and_grad({fn}, None, {step.optimizer}.parameters{', has_aux=True' if aux else ''})()"
    if step.trailing:  # the gradients are taken where the forward ends; the statements after it read its values
        end = step.forward[-1].end_byte
        out.append(TextEdit(end, end, f"\n{indent}{INDENT}return {values}\n{indent}{target}, {grads} = {call}"))
        out.append(removal(step.backward, source))
    else:
        out.append(TextEdit(step.backward.start_byte, step.backward.end_byte,
                            f"{INDENT}return {values}\n{indent}{target}, {grads} = {call}"))
    for statement in step.clipping:
        out += clip_edits(statement, clips or {}, step.optimizer, grads, source, alias) or []
    out.append(TextEdit(step.step.start_byte, step.step.end_byte, f"{step.optimizer}({grads})"))
    for statement in step.zero_grads:
        out.append(removal(statement, source))
    return out


def _step_at(root: Any, at: int, clips: dict[int, str]) -> TrainStep | tuple[Any, str] | None:
    node = root.named_descendant_for_byte_range(at + 1, at + len(b".backward()") - 1)
    call = node
    while call is not None and call.type != "call":
        call = call.parent
    statement = call.parent if call is not None else None
    if statement is None or statement.type != "expression_statement" or statement.parent is None \
            or only_call(statement) is None:
        return None
    loss = _method_receiver(call, b"backward")
    if loss is None:
        return (statement, "the loss is not a name (scaler.scale(loss).backward(): a GradScaler; a call's result)") \
            if receiver(call, b"backward") is None and call.child_by_field_name("function").type == "attribute" \
            else None
    block = statement.parent
    siblings = [c for c in block.named_children if c.type != "comment"]
    index = next(i for i, s in enumerate(siblings) if s.id == statement.id)
    if any(_method_receiver(_only_call(s), b"backward") for s in siblings if s.id != statement.id):
        return statement, "several backwards in one block: gradients accumulated before a step"
    after = after_backward(siblings[index + 1:], clips)
    if isinstance(after, str):
        return statement, after
    following, optimizer, clipping, between_zero_grads = after
    zero_grads = [s for s in siblings if zero_grad_receiver(s) == optimizer and s.id not in
                  {z.id for z in between_zero_grads}] + between_zero_grads
    computed = next((i for i in range(index - 1, -1, -1) if loss in (_assigned(siblings[i]) or [])), None)
    if computed is None:
        return statement, f"no assignment to {loss} before it in the same block (the forward to differentiate)"
    forward: list[Any] = []
    needed = {loss}
    for previous in reversed(siblings[:computed + 1]):
        assigned = _assigned(previous)
        if assigned is None or not (set(assigned) & needed):
            break
        if forward and not _closure_safe([previous] + forward) and data_preparation(previous, assigned):
            break  # x = x.to(device): stays before the forward, which reads x
        forward.insert(0, previous)
        needed |= _read(previous.named_children[0].child_by_field_name("right"))
    if not _closure_safe(forward):
        return statement, "the forward's statements read a name before assigning it (it would be unbound in a function)"
    names = list(dict.fromkeys([loss] + [n for s in forward for n in _assigned(s) or [] if n != loss]))
    trailing = siblings[computed + 1:index]
    for other in trailing:
        if zero_grad_receiver(other) is not None:
            zero_grads.append(other)
        elif not reads_only(other, set(names)):
            return statement, "a statement between the loss and its backward that is not only a read of the forward"
    return TrainStep(statement, following, forward, list({z.id: z for z in zero_grads}.values()), loss, optimizer,
                     names, clipping, bool(trailing))


def _only_call(statement: Any) -> Any | None:
    if statement is None or statement.type != "expression_statement" or len(statement.named_children) != 1:
        return None
    call = statement.named_children[0]
    return call if call.type == "call" else None


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


def _assigned(statement: Any) -> list[str] | None:
    """Names a plain assignment statement binds (``a = ...``, ``a, b = ...``), else None."""
    if statement.type != "expression_statement" or len(statement.named_children) != 1:
        return None
    assignment = statement.named_children[0]
    left = assignment.child_by_field_name("left") if assignment.type == "assignment" else None
    if left is None or assignment.child_by_field_name("right") is None:
        return None
    if left.type == "identifier":
        return [left.text.decode()]
    if left.type in ("pattern_list", "tuple_pattern") and all(c.type == "identifier" for c in left.named_children):
        return [c.text.decode() for c in left.named_children]
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
    assigned: set[str] = set()
    every = {n for s in forward for n in _assigned(s) or []}
    for statement in forward:
        if (_read(statement.named_children[0].child_by_field_name("right")) & every) - assigned:
            return False
        assigned |= set(_assigned(statement) or [])
        if any(n.type == "string" and n.start_point[0] != n.end_point[0] for n in _descendants(statement)):
            return False
    return True


def _descendants(node: Any) -> Iterable[Any]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.named_children)


def _indent(source: bytes, offset: int) -> str:
    start = source.rfind(b"\n", 0, offset) + 1
    return source[start:offset].decode("utf-8", "replace")


def _line_starts(source: bytes, start: int, end: int) -> list[int]:
    found, at = [], source.find(b"\n", start, end)
    while at >= 0:
        found.append(at + 1)
        at = source.find(b"\n", at + 1, end)
    return found


def _fresh(source: bytes, name: str) -> str:
    while name.encode() in source:
        name += "_"
    return name


PARAMETERS_RECORD: dict[str, Any] = {
    "torch": "torch.nn.Module.parameters", "kind": "method", "namespace": "torch.nn", "source": "curated",
    "targets": [], "caveats": [], "torch_signature": "(recurse=True)",
    "advice": "An optimizer takes a cell's trainable_params().",
}
PARAMETERS_TITLE = "Give the optimizer the cell's trainable_params()"


def optimizer_parameters(call: Any) -> TextEdit | None:
    """``torch.optim.X(model.parameters(), ...)``: the module's parameters become the cell's
    ``trainable_params()``, what MindSpore's optimizers take. Whatever ``model`` is, a torch
    optimizer is given a module's parameters there (``self.parameters()`` is the resolver's)."""
    arguments = call.child_by_field_name("arguments")
    items = [a for a in arguments.named_children if a.type != "comment"] if arguments is not None else []
    first = next((a for a in items if a.type != "keyword_argument"), None)
    keyword = next((a.child_by_field_name("value") for a in items if a.type == "keyword_argument"
                    and a.child_by_field_name("name").text == b"params"), None)
    value = first if first is not None else keyword
    if value is None or value.type != "call":
        return None
    function, args = value.child_by_field_name("function"), value.child_by_field_name("arguments")
    if function is None or function.type != "attribute" or args is None or args.named_children:
        return None
    obj, attr = function.child_by_field_name("object"), function.child_by_field_name("attribute")
    if attr is None or attr.text != b"parameters" or obj is None or obj.text == b"self":
        return None
    return TextEdit(attr.start_byte, attr.end_byte, "trainable_params")


def optimizer_classes(root: Any, source: bytes, start: int = 0, end: int = 0) -> list[Any]:
    """Calls of a capitalised name (a class: ``DiffGrad``, ``optim.Lamb``) or a name saying optimizer
    (``self.optimizer_fn``) whose first argument, or ``params=``, is ``X.parameters()`` with ``X`` not ``self``: in
    torch code, an optimizer being given a model's parameters."""
    found = []
    end = end or len(source)
    at = source.find(b".parameters()", start, end)
    while at >= 0:
        node = root.named_descendant_for_byte_range(at + 1, at + len(b".parameters"))
        call = node.parent.parent if node is not None and node.parent is not None else None
        holder = call.parent if call is not None else None
        if holder is not None and holder.type == "keyword_argument":
            holder = holder.parent
        outer = holder.parent if holder is not None and holder.type == "argument_list" else None
        callee = outer.child_by_field_name("function") if outer is not None and outer.type == "call" else None
        last = callee.text.rsplit(b".", 1)[-1] if callee is not None else b""
        if last[:1].isupper() or b"optim" in last.lower():  # a class, or a factory named for it (optimizer_fn)
            found.append(outer)
        at = source.find(b".parameters()", at + 1, end)
    return found
