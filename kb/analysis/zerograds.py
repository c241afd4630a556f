"""``optimizer.zero_grad()``, ``model.zero_grad()`` and ``for p in model.parameters(): p.grad = None`` away from a
training step (kb/analysis/trainsteps.py removes those of its own block).

With ``mindspore.value_and_grad`` gradients are computed afresh at every step: nothing accumulates on the
parameters, and MindSpore's optimizers and cells have no ``zero_grad`` (nor ``parameters()``). Such a statement is
removed (``pass`` when it is its block's only statement) in a file whose training step converts, or where its
receiver is known to be a torch optimizer or module (the engine resolved the call, or a parameter of the function
is annotated ``...Optimizer`` / ``...Module``). A file with neither keeps it as it is.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kb.analysis.stepparts import dotted, zero_grad_receiver

NAMES = ("torch.optim.Optimizer.zero_grad", "torch.nn.Module.zero_grad")
RECORD: dict[str, Any] = {
    "torch": NAMES[0], "kind": "method", "namespace": "torch.optim", "source": "curated",
    "targets": [], "caveats": [], "torch_signature": "(set_to_none=True)",
    "advice": "Delete the call: mindspore.value_and_grad returns fresh gradients at every step.",
}
TITLE = "Delete the zero_grad: value_and_grad computes the gradients afresh"
KNOWN_TYPES = (b"Optimizer", b"Module")


def zero_grads(root: Any, source: bytes, start: int = 0, end: int | None = None) -> Iterable[Any]:
    """Every statement ``R.zero_grad(...)`` and every loop ``for p in R.parameters(): p.grad = None`` of the file
    whose ``.zero_grad(`` / ``.grad = None`` lies in ``source[start:end]``."""
    end = len(source) if end is None else end
    for word in (b".zero_grad(", b".grad = None"):
        at = source.find(word, start, end)
        while at >= 0:
            node = root.named_descendant_for_byte_range(at + 1, at + 2)
            statement = node
            while statement is not None and statement.type not in ("expression_statement", "module"):
                statement = statement.parent
            if statement is not None and word == b".zero_grad(" and zero_grad_receiver(statement) is not None:
                yield statement
            elif statement is not None and statement.type == "expression_statement":
                loop = _clearing_loop(statement)
                if loop is not None:
                    yield loop
            at = source.find(word, at + 1, end)


def known_receiver(statement: Any) -> bool:
    """The zero_grad's receiver is a parameter of its function annotated as a torch optimizer or module."""
    name = zero_grad_receiver(statement)
    function = statement.parent
    while function is not None and function.type != "function_definition":
        function = function.parent
    parameters = function.child_by_field_name("parameters") if function is not None else None
    for parameter in parameters.named_children if parameters is not None else []:
        kind = parameter.child_by_field_name("type")
        first = parameter.named_children[0] if parameter.named_children else None
        if parameter.type == "typed_parameter" and kind is not None and first is not None \
                and first.text.decode("utf-8", "replace") == name and kind.text.rstrip(b" ]").endswith(KNOWN_TYPES):
            return True
    return False


def _clearing_loop(statement: Any) -> Any | None:
    """``for p in R.parameters(): p.grad = None`` (the loop's only statement), the loop."""
    block = statement.parent
    loop = block.parent if block is not None else None
    if loop is None or loop.type != "for_statement" or len([c for c in block.named_children
                                                            if c.type != "comment"]) != 1:
        return None
    variable, iterated = loop.child_by_field_name("left"), loop.child_by_field_name("right")
    assignment = statement.named_children[0] if statement.named_children else None
    if variable is None or variable.type != "identifier" or iterated is None or iterated.type != "call" \
            or assignment is None or assignment.type != "assignment":
        return None
    function = iterated.child_by_field_name("function")
    if function is None or function.type != "attribute" or dotted(function) is None \
            or not function.text.endswith(b".parameters"):
        return None
    left, right = assignment.child_by_field_name("left"), assignment.child_by_field_name("right")
    if left is None or right is None or left.text != variable.text + b".grad" or right.type != "none":
        return None
    return loop
