"""The training step: ``optimizer.zero_grad(); loss = ...; loss.backward(); optimizer.step()``.

MindSpore has no ``backward`` on a tensor: gradients come from a function of the forward
computation (``mindspore.value_and_grad``) and an optimizer is called with them. In one block
(a loop body, usually) the rule finds ``L.backward()`` followed directly by ``O.step()``, takes
the assignments just before the backward that compute ``L`` (kb/analysis/forwards.py) (back to the block's start, a
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

A GradScaler's step (``S.scale(L).backward(); S.unscale_(O); ...; S.step(O); S.update()``) differentiates
``S.scaled(forward_fn)`` (the scaled loss first, then the forward's values), and its unscale and step take the
gradients: ``grads = S.unscale_(O, grads)``, ``S.step(O, grads)``; ``S.update()`` stays (``S`` is an
``MsGradScaler``, data/curated/amp.yaml). A ``with`` block of assignments in the forward (``with autocast():``)
moves into the function whole. A step whose backward sits in every branch of an ``if`` after the forward
(``if use_amp: S.scale(L).backward() ... else: L.backward() ...``) defines the function once before the ``if`` and
takes the gradients in each branch.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kb.analysis.forwards import backward_loss, computed_at, forward_of, statements
from kb.analysis.gradclipping import clip_edits
from kb.analysis.stepparts import (
    After,
    after_backward,
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
# the spellings of GradScaler whose methods (scale, unscale_, step) a scaled step converts
SCALERS = tuple(f"torch.{name}GradScaler." for name in (
    "amp.", "cuda.amp.", "cpu.amp.", "", "amp.grad_scaler.", "cuda.amp.grad_scaler.", "cpu.amp.grad_scaler."))
INDENT = "    "


@dataclass
class Branch:
    """One backward and its step (a branch of an ``if``, for a branched step)."""

    backward: Any  # the ``L.backward()`` / ``S.scale(L).backward()`` expression statement
    after: After  # its step, optimizer, clipping, zero_grad and unscale statements
    scaler: str | None  # ``S`` of a scaled backward


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
    scaler: str | None = None  # ``S`` of ``S.scale(L).backward()``
    unscales: list = field(default_factory=list)  # ``S.unscale_(O)`` statements between the backward and the step
    branches: list = field(default_factory=list)  # a branched step: every branch's Branch (this backward's among them)


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


def fresh_names(source: bytes) -> tuple[str, str]:
    """The names a step's rewrite gives its forward function and its gradients: free in the whole file."""
    return _fresh(source, "forward_fn"), _fresh(source, "grads")


def edits(step: TrainStep, source: bytes, alias: str, clips: dict[int, str] | None = None) -> list[TextEdit]:
    indent = _indent(source, step.forward[0].start_byte)
    fn, grads = fresh_names(source)
    out = []
    for number, statement in enumerate(step.forward):  # the forward's lines, one level deeper
        start = source.rfind(b"\n", 0, statement.start_byte) + 1
        out.append(TextEdit(start, start, (f"{indent}def {fn}():\n" if number == 0 else "") + INDENT))
        for offset in _line_starts(source, statement.start_byte, statement.end_byte):
            out.append(TextEdit(offset, offset, INDENT))
    values = ", ".join(step.names)
    end = step.forward[-1].end_byte
    if step.branches:  # the function is defined once; every branch takes its gradients
        out.append(TextEdit(end, end, f"\n{indent}{INDENT}return {values}"))
        for branch in step.branches:
            taken = _taken(step, branch.scaler, branch.after.optimizer, fn, grads, source, alias)
            out.append(TextEdit(branch.backward.start_byte, branch.backward.end_byte, taken))
            out += _after_edits(branch.after, branch.scaler, grads, source, alias, clips)
        return out + [removal(statement, source) for statement in step.zero_grads]
    taken = _taken(step, step.scaler, step.optimizer, fn, grads, source, alias)
    if step.trailing:  # the gradients are taken where the forward ends; the statements after it read its values
        out.append(TextEdit(end, end, f"\n{indent}{INDENT}return {values}\n{indent}{taken}"))
        out.append(removal(step.backward, source))
    else:
        out.append(TextEdit(step.backward.start_byte, step.backward.end_byte,
                            f"{INDENT}return {values}\n{indent}{taken}"))
    after = After(step.step, step.optimizer, step.clipping, [], step.unscales)
    out += _after_edits(after, step.scaler, grads, source, alias, clips)
    for statement in step.zero_grads:
        out.append(removal(statement, source))
    return out


def scaler_calls(step: TrainStep) -> list[int]:
    """Where the GradScaler calls of a step's own branch start: ``S.scale(L)`` in its backward, ``S.unscale_(O)``,
    ``S.step(O)``."""
    if step.scaler is None:
        return []
    function = step.backward.named_children[0].child_by_field_name("function")  # (a statement that is one call)
    return [function.child_by_field_name("object").start_byte, step.step.start_byte] + \
        [u.start_byte for u in step.unscales]


def _taken(step: TrainStep, scaler: str | None, optimizer: str, fn: str, grads: str, source: bytes,
           alias: str) -> str:
    """``(values), grads = value_and_grad(...)()``: of ``S.scaled(fn)`` (the scaled loss first) for a scaled
    backward."""
    values = ", ".join(step.names)
    if scaler is not None:
        return (f"({_fresh(source, 'scaled_loss')}, {values}), {grads} = {alias}.value_and_grad("
                f"{scaler}.scaled({fn}), None, {optimizer}.parameters, has_aux=True)()")
    aux = len(step.names) > 1
    target = f"({values})" if aux else step.loss
    return f"{target}, {grads} = {alias}.value_and_grad({fn}, None, {optimizer}.parameters" \
        f"{', has_aux=True' if aux else ''})()"


def _after_edits(after: After, scaler: str | None, grads: str, source: bytes, alias: str,
                 clips: dict[int, str] | None) -> list[TextEdit]:
    """Clipping on ``grads``, ``grads = S.unscale_(O, grads)``, and the step: ``O(grads)`` or ``S.step(O, grads)``."""
    out = []
    for statement in after.clipping:
        out += clip_edits(statement, clips or {}, after.optimizer, grads, source, alias) or []
    for statement in after.unscales:
        arguments = statement.named_children[0].child_by_field_name("arguments")
        out.append(TextEdit(statement.start_byte, statement.start_byte, f"{grads} = "))
        out.append(TextEdit(arguments.end_byte - 1, arguments.end_byte - 1, f", {grads}"))
    if scaler is not None:
        arguments = after.step.named_children[0].child_by_field_name("arguments")
        out.append(TextEdit(arguments.end_byte - 1, arguments.end_byte - 1, f", {grads}"))
    else:
        out.append(TextEdit(after.step.start_byte, after.step.end_byte, f"{after.optimizer}({grads})"))
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
    loss, scaler = backward_loss(call)
    if loss is None:
        return (statement, "the loss is not a name (a call's result, an attribute)") \
            if receiver(call, b"backward") is None and call.child_by_field_name("function").type == "attribute" \
            else None
    block = statement.parent
    siblings = statements(block)
    index = next(i for i, s in enumerate(siblings) if s.id == statement.id)
    if any(backward_loss(only_call(s))[0] for s in siblings if s.id != statement.id):
        return statement, "several backwards in one block: gradients accumulated before a step"
    after = after_backward(siblings[index + 1:], clips, scaler)
    if isinstance(after, str):
        return statement, after
    zero_grads = [s for s in siblings if zero_grad_receiver(s) == after.optimizer and s.id not in
                  {z.id for z in after.zero_grads}] + after.zero_grads
    computed = computed_at(siblings, index, loss)
    if computed is None:
        return _branched(statement, block, loss, clips) or \
            (statement, f"no assignment to {loss} before it in the same block (the forward to differentiate)")
    found = forward_of(siblings, computed, loss)
    if isinstance(found, str):
        return statement, found
    forward, names = found
    trailing = siblings[computed + 1:index]
    for other in trailing:
        if zero_grad_receiver(other) is not None:
            zero_grads.append(other)
        elif not reads_only(other, set(names)):
            return statement, "a statement between the loss and its backward that is not only a read of the forward"
    return TrainStep(statement, after.step, forward, list({z.id: z for z in zero_grads}.values()), loss,
                     after.optimizer, names, after.clipping, bool(trailing), scaler, after.unscales)


def _branched(statement: Any, block: Any, loss: str, clips: dict[int, str]) -> TrainStep | tuple[Any, str] | None:
    """The step of a backward in a branch of an ``if`` that follows the forward computing ``loss``: every branch
    (an ``else`` included) holds one backward of ``loss`` and its step; None when the block is no such branch."""
    holder = block.parent
    conditional = holder if holder is not None and holder.type == "if_statement" else \
        holder.parent if holder is not None and holder.type in ("elif_clause", "else_clause") else None
    if conditional is None or conditional.type != "if_statement" or conditional.parent is None:
        return None
    alternatives = conditional.children_by_field_name("alternative")
    if not alternatives or alternatives[-1].type != "else_clause":
        return statement, "the backward is in a branch of an if without else (the forward's values unbound elsewhere)"
    blocks = [conditional.child_by_field_name("consequence")] + [
        a.child_by_field_name("consequence" if a.type == "elif_clause" else "body") for a in alternatives]
    branches, zero_grads = [], []
    for branch in blocks:
        items = statements(branch)
        backwards = [i for i, s in enumerate(items) if backward_loss(only_call(s))[0] is not None]
        if len(backwards) != 1:
            return statement, "a branch of the if around the backward has no backward or several"
        first = backwards[0]
        differentiated, scaler = backward_loss(only_call(items[first]))
        if differentiated != loss or any(zero_grad_receiver(s) is None for s in items[:first]):
            return statement, "the branches of the if around the backward differentiate different values"
        after = after_backward(items[first + 1:], clips, scaler)
        if isinstance(after, str):
            return statement, after
        branches.append(Branch(items[first], after, scaler))
        zero_grads += items[:first] + after.zero_grads
    siblings = statements(conditional.parent)
    index = next(i for i, s in enumerate(siblings) if s.id == conditional.id)
    computed = computed_at(siblings, index, loss)
    if computed is None:
        return None
    if any(zero_grad_receiver(s) is None for s in siblings[computed + 1:index]) \
            or any(backward_loss(only_call(s))[0] for s in siblings):
        return statement, "statements between the forward and the if around the backward"
    found = forward_of(siblings, computed, loss)
    if isinstance(found, str):
        return statement, found
    forward, names = found
    optimizers = {b.after.optimizer for b in branches}
    zero_grads += [s for s in siblings if zero_grad_receiver(s) in optimizers]
    mine = next(b for b in branches if b.backward.id == statement.id)
    return TrainStep(statement, mine.after.step, forward, list({z.id: z for z in zero_grads}.values()), loss,
                     mine.after.optimizer, names, mine.after.clipping, False, mine.scaler, mine.after.unscales,
                     branches)


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
