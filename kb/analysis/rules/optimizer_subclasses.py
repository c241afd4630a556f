"""A custom optimizer (``class DiffGrad(torch.optim.Optimizer)`` whose ``step()`` reads ``p.grad``) runs on MindSpore.

torch's optimizer reads each parameter's ``.grad`` in ``step()`` and writes the parameters and its state buffers with
in-place tensor methods (``p.data.addcdiv_(...)``, ``exp_avg.mul_(b1).add_(g, alpha=1 - b1)``). A MindSpore training
step calls the optimizer with the gradients (``optimizer(grads)``, aligned with ``optimizer.parameters``), and
MindSpore 2.10's in-place arithmetic on CPU returns a new tensor and leaves the receiver as it was (``add_``,
``mul_``), or is missing (``addcmul_``, ``addcdiv_``, ``sqrt_``). So a class deriving from torch's ``Optimizer`` that
defines ``step``:

- derives from ``MsTorchOptimizer`` (written once into the file): MindSpore's torch-style optimizer base
  (``param_groups``, ``state``, ``defaults``) whose ``construct(gradients)`` sets each parameter's ``.grad`` and runs
  the subclass's ``step()``;
- in its own methods, an in-place method of ``MsInplace``'s table called on any receiver (``x.add_(...)``,
  ``p.data.addcdiv_(...)``) becomes ``MsInplace(x).add_(...)``: torch's arithmetic out of place, written into the
  tensor itself (``assign_value``; ``.data`` goes, MindSpore's ``Tensor.data`` is a copy), the tensor returned so a
  chain goes on. Inside an optimizer's methods the receivers of these calls are the parameters, their gradients and
  the state buffers: tensors;
- ``grad.is_sparse`` there asks whether the gradient is one of MindSpore's sparse classes (a ``Tensor`` is dense).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from kb.analysis.adapters import insertion
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.text import TextEdit

BASES = ("torch.optim.Optimizer", "torch.optim.optimizer.Optimizer")
BASE_HELPER = '''class MsTorchOptimizer({ms}.experimental.optim.Optimizer):
    """torch.optim.Optimizer for a subclass whose step() reads p.grad (written by msmap convert): the training step
    calls the optimizer with the gradients, aligned with self.parameters; each parameter's .grad is set to its
    gradient and the subclass's step() updates the parameters as torch's does."""

    def construct(self, gradients):
        for param, grad in zip(self.parameters, gradients):
            param.grad = grad
        return self.step()

    def zero_grad(self, set_to_none=True):
        for param in self.parameters:
            param.grad = None

    def state_dict(self):
        """torch's form: {'state': {index: {name: value}}, 'param_groups': [{..., 'params': [index]}]}, the learning
        rates as floats."""
        index = {id(param): i for i, param in enumerate(self.parameters)}
        groups = [{key: [index[id(p)] for p in value] if key == "params"
                   else float(value) if isinstance(value, {ms}.Parameter) else value for key, value in group.items()}
                  for group in self.param_groups]
        state = {index[id(param)]: dict(values) for param, values in self.state.items() if id(param) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict, strict=True):
        """torch's load_state_dict: the groups' values (a learning rate into the Parameter a scheduler shares) and
        copies of the per-parameter state (strict: Cell.load_state_dict's, which converted callers pass; the keys
        are torch's two)."""
        for group, saved in zip(self.param_groups, state_dict["param_groups"]):
            for key, value in saved.items():
                if key == "params":
                    continue
                if isinstance(group.get(key), {ms}.Parameter):
                    group[key].set_data({ms}.Tensor(value, group[key].dtype))
                else:
                    group[key] = value
        self.state.clear()
        for i, values in state_dict["state"].items():
            self.state[self.parameters[int(i)]] = {
                key: value.copy() if isinstance(value, {ms}.Tensor) else value for key, value in values.items()}
'''
INPLACE_HELPER = '''class MsInplace:
    """torch's in-place tensor arithmetic on a MindSpore tensor (written by msmap convert): the value is computed out
    of place and written into the tensor itself (assign_value), which is returned, as torch's in-place methods do."""

    def __init__(self, tensor):
        self.tensor = tensor

    def _set(self, value):
        self.tensor.assign_value({ms}.ops.broadcast_to(value, self.tensor.shape).astype(self.tensor.dtype))
        return self.tensor

    def add_(self, other, alpha=1):
        return self._set(self.tensor + (other if alpha == 1 else other * alpha))

    def sub_(self, other, alpha=1):
        return self._set(self.tensor - (other if alpha == 1 else other * alpha))

    def mul_(self, other):
        return self._set(self.tensor * other)

    def div_(self, other):
        return self._set(self.tensor / other)

    def addcmul_(self, tensor1, tensor2, value=1):
        return self._set(self.tensor + value * tensor1 * tensor2)

    def addcdiv_(self, tensor1, tensor2, value=1):
        return self._set(self.tensor + value * tensor1 / tensor2)

    def sqrt_(self):
        return self._set({ms}.ops.sqrt(self.tensor))

    def abs_(self):
        return self._set({ms}.ops.abs(self.tensor))

    def neg_(self):
        return self._set(-self.tensor)

    def copy_(self, src):
        return self._set(src)

    def zero_(self):
        return self._set({ms}.ops.zeros_like(self.tensor))

    def fill_(self, value):
        return self._set({ms}.ops.full_like(self.tensor, value))

    def clamp_(self, min=None, max=None):
        return self._set({ms}.ops.clamp(self.tensor, min, max))

    def lerp_(self, end, weight):
        return self._set(self.tensor + weight * (end - self.tensor))
'''
INPLACE = frozenset({"add_", "sub_", "mul_", "div_", "addcmul_", "addcdiv_", "sqrt_", "abs_", "neg_", "copy_",
                     "zero_", "fill_", "clamp_", "lerp_"})
TITLE = "Run the custom optimizer's step() on MindSpore (MsTorchOptimizer base, in-place writes through MsInplace)"


def _optimizer_classes(context: Context) -> Iterable[tuple[Any, Any]]:
    """(class node, base use) of each class of the piece deriving from torch's Optimizer and defining ``step``;
    (class node, None) of each one converted already (deriving from ``MsTorchOptimizer``)."""
    start, end = context.within
    for use in context.uses_called(BASES):
        if start <= use.start < end:
            node = _base_of(context.root.named_descendant_for_byte_range(use.start, use.end), use.start)
            if node is not None and _defines_step(node):
                yield node, use
    for at in (m.start() for m in re.finditer(rb"\bMsTorchOptimizer\b", context.source[start:end])):
        node = _base_of(context.root.named_descendant_for_byte_range(start + at, start + at + 1), start + at)
        if node is not None:
            yield node, None


def _base_of(node: Any, at: int) -> Any | None:
    """The class whose bases hold byte ``at`` (``node`` is there)."""
    while node is not None and node.type != "class_definition":
        if node.type in ("function_definition", "module"):
            return None
        node = node.parent
    bases = node.child_by_field_name("superclasses") if node is not None else None
    return node if bases is not None and bases.start_byte <= at < bases.end_byte else None


def _defines_step(node: Any) -> bool:
    body = node.child_by_field_name("body")
    return any(_method(child) == b"step" for child in (body.named_children if body else ()))


def _method(node: Any) -> bytes | None:
    if node.type == "decorated_definition":
        node = node.child_by_field_name("definition")
    if node is not None and node.type == "function_definition":
        return node.child_by_field_name("name").text
    return None


def _inplace_calls(node: Any) -> Iterable[tuple[Any, Any]]:
    """(call, receiver) of every ``<receiver>.<name>_(...)`` in the table under ``node``."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "call":
            function = current.child_by_field_name("function")
            if function is not None and function.type == "attribute" \
                    and function.child_by_field_name("attribute").text.decode() in INPLACE:
                yield current, function.child_by_field_name("object")
        stack.extend(current.named_children)


def _wrap(receiver: Any) -> list[TextEdit]:
    """``x`` -> ``MsInplace(x)``; ``p.data`` -> ``MsInplace(p)`` (MindSpore's ``.data`` is a copy); nothing where
    it is ``MsInplace(...)`` already."""
    if receiver.type == "call" and receiver.child_by_field_name("function").text == b"MsInplace":
        return []
    if receiver.type == "attribute" and receiver.child_by_field_name("attribute").text == b"data":
        inner = receiver.child_by_field_name("object")
        return [TextEdit(inner.start_byte, inner.start_byte, "MsInplace("),
                TextEdit(inner.end_byte, receiver.end_byte, ")")]
    return [TextEdit(receiver.start_byte, receiver.start_byte, "MsInplace("),
            TextEdit(receiver.end_byte, receiver.end_byte, ")")]


@register
class OptimizerSubclasses(Rule):
    name = "optimizer-subclasses"
    scope = "class"
    record = {"torch": "torch.optim.Optimizer"}
    title = TITLE
    order = 45
    needs_torch_imports = False  # (converted code keeps its MsInplace calls: the engine's guesses give way)
    triggers = (b"Optimizer", b"step", b"_(")
    example = """\
import torch
class SignSGD(torch.optim.Optimizer):
    def __init__(self, params, lr=0.01):
        super().__init__(params, dict(lr=lr))

    def step(self, closure=None):
        for group in self.param_groups:
            for p in group['params']:
                p.data.add_(torch.sign(p.grad), alpha=-group['lr'])
"""

    def find(self, context: Context) -> Iterable[Finding]:
        source, alias = context.source, context.alias
        for node, use in _optimizer_classes(context):
            inside = [u for u in context.uses_named(("torch.Tensor.", "torch.optim.Optimizer."))
                      if node.start_byte <= u.start < node.end_byte]
            if use is None:  # converted already: its in-place calls stay as they are
                yield from _inplace_findings(node, inside)
                continue
            edits = [TextEdit(use.start, use.end, "MsTorchOptimizer")]
            # (the two helpers go together: one insertion, as two at one place would overlap)
            added = insertion(node, source, "MsTorchOptimizer",
                              (BASE_HELPER + "\n\n" + INPLACE_HELPER).replace("{ms}", alias))
            edits += [added] if added is not None else []
            yield Finding((use.start, use.end), edits, replaces=use.torch_name)
            for method in inside:  # ``def step`` overrides the base's method: it stays as it is
                named = context.root.named_descendant_for_byte_range(method.start, method.end)
                if method.torch_name.startswith("torch.optim.Optimizer.") and named is not None \
                        and named.parent is not None and named.parent.type == "function_definition":
                    yield Finding((method.start, method.end), [TextEdit(method.start, method.end, named.text.decode())],
                                  record={"torch": method.torch_name}, replaces=method.torch_name)
            yield from _inplace_findings(node, inside)
            yield from _sparse_tests(node, inside, alias)


def _sparse_tests(node: Any, inside: list, alias: str) -> Iterable[Finding]:
    """``grad.is_sparse`` -> ``isinstance(grad, (ms.COOTensor, ms.CSRTensor))``: MindSpore's sparse tensors are classes
    of their own, a ``Tensor`` (a gradient of ``value_and_grad``) is dense."""
    stack = [node]
    while stack:
        current = stack.pop()
        stack.extend(current.named_children)
        if current.type != "attribute" or current.child_by_field_name("attribute").text != b"is_sparse":
            continue
        receiver = current.child_by_field_name("object").text.decode("utf-8", "surrogateescape")
        guess = next((u for u in inside if u.torch_name == "torch.Tensor.is_sparse"
                      and current.start_byte <= u.start and u.end <= current.end_byte), None)
        text = f"isinstance({receiver}, ({alias}.COOTensor, {alias}.CSRTensor))"
        yield Finding((guess.start, guess.end) if guess else (current.start_byte, current.end_byte),
                      [TextEdit(current.start_byte, current.end_byte, text)],
                      record={"torch": "torch.Tensor.is_sparse"},
                      call_span=(current.start_byte, current.end_byte), replaces=guess.torch_name if guess else None)


def _inplace_findings(node: Any, inside: list) -> Iterable[Finding]:
    """One finding per in-place call of the table: the outermost of a chain carries the receivers' wrapping
    (``MsInplace(MsInplace(x).mul_(b)).add_(g)``), each takes the place of the engine's guess there."""
    calls = {call.id: (call, receiver) for call, receiver in _inplace_calls(node)}
    nested = {receiver.id for _, receiver in calls.values()}
    for call, _ in calls.values():
        leaf = call.child_by_field_name("function").child_by_field_name("attribute")
        guess = next((u for u in inside if leaf.start_byte <= u.start and u.end <= call.end_byte
                      and u.torch_name == "torch.Tensor." + leaf.text.decode()), None)
        edits = [TextEdit(leaf.start_byte, leaf.end_byte, leaf.text.decode())]
        if call.id not in nested:
            edits = _merged([edit for inner in _chain(call, calls) for edit in _wrap(inner)]) + edits
        span = (guess.start, guess.end) if guess else (leaf.start_byte, leaf.end_byte)
        name = guess.torch_name if guess else "torch.Tensor." + leaf.text.decode()
        yield Finding(span, edits, record={"torch": name}, call_span=(call.start_byte, call.end_byte),
                      replaces=guess.torch_name if guess else None)


def _chain(call: Any, calls: dict) -> Iterable[Any]:
    """The receivers of ``call`` and of the in-place calls its receiver chain holds (``x.mul_(b).add_(g)``:
    ``x.mul_(b)``, then ``x``)."""
    while call.id in calls:
        call = calls[call.id][1]
        yield call


def _merged(edits: list[TextEdit]) -> list[TextEdit]:
    """Insertions at one offset as one edit, outermost first (the wraps of a chain all start at its receiver)."""
    by_place: dict[tuple[int, int], str] = {}
    for edit in edits:
        by_place[(edit.start, edit.end)] = by_place.get((edit.start, edit.end), "") + edit.new_text
    return [TextEdit(start, end, text) for (start, end), text in sorted(by_place.items())]
