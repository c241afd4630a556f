"""An optimizer group's learning rate, read and written: ``group['lr']``.

torch keeps a Python float in ``optimizer.param_groups[i]['lr']``; the torch-style MindSpore optimizers
(``mindspore.experimental.optim``) keep a float32 ``Parameter`` there, which the optimizer reads at each
step (its ``lrs``). So, where ``G`` is ``X.param_groups[i]`` or a name a loop takes from ``X.param_groups``
(``for group in opt.param_groups``, ``for group, lr in zip(opt.param_groups, lrs)``, a comprehension):

- a read ``G['lr']`` becomes ``float(G['lr'])``: torch's kind of value, a copy (``'{:.6f}'.format(lr)``
  works, and a saved rate does not follow later changes, as in torch);
- a store ``G['lr'] = v`` becomes ``ms_set_lr(G, v)`` and ``G['lr'] *= w`` becomes
  ``ms_set_lr(G, float(G['lr']) * (w))``: the value goes into the Parameter the optimizer reads, as
  MindSpore's own schedulers do (``ops.assign``). Rebinding the dict entry, as the torch text would, leaves
  the optimizer stepping with the old rate (pytorch_warmup's dampening had no effect: loss 16.9 for 3.8).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kb.analysis.adapters import insertion
from kb.analysis.text import TextEdit

HELPER = "ms_set_lr"
DEFINITION = f'''def {HELPER}(group, value):
    """optimizer.param_groups[i]['lr'] = value (written by msmap convert): a torch-style MindSpore optimizer
    steps with the Parameter held there, so the value is assigned into it (a plain dict entry otherwise)."""
    rate = group["lr"]
    if isinstance(rate, {{ms}}.Parameter):
        {{ms}}.ops.assign(rate, {{ms}}.Tensor(float(value), rate.dtype))
    else:
        group["lr"] = value
'''
RECORD: dict[str, Any] = {
    "torch": "torch.optim.Optimizer.param_groups", "kind": "attribute", "namespace": "torch.optim",
    "source": "curated", "targets": [], "caveats": [], "torch_signature": None,
    "advice": "A torch-style MindSpore optimizer keeps a group's learning rate in a Parameter: read it with "
              "float(), write it with ops.assign.",
}
TITLE = "Read the group's learning rate as a float; write it into the optimizer's Parameter"
OPERATORS = {b"+=": "+", b"-=": "-", b"*=": "*", b"/=": "/", b"**=": "**"}


def group_rates(root: Any, source: bytes, alias: str, start: int = 0,
                end: int = 0) -> Iterable[tuple[Any, list[TextEdit]]]:
    """(node, edits) for every group learning rate read or written in ``source[start:end]``."""
    end = end or len(source)
    for quote in (b"'lr'", b'"lr"'):
        at = source.find(quote, start, end)
        while at >= 0:
            found = _at(root, source, alias, at)
            if found is not None:
                yield found
            at = source.find(quote, at + 1, end)


def _at(root: Any, source: bytes, alias: str, at: int) -> tuple[Any, list[TextEdit]] | None:
    key = root.named_descendant_for_byte_range(at, at + 4)
    subscript = key.parent if key is not None and key.type == "string" else None
    if subscript is None or subscript.type != "subscript" or subscript.children_by_field_name("subscript") != [key]:
        return None
    group = subscript.child_by_field_name("value")
    if group is None or not (_indexed_groups(group) or _loop_group(group)):
        return None
    holder, text = subscript.parent, source[group.start_byte:group.end_byte].decode("utf-8", "replace")
    if holder is not None and holder.type == "assignment" and holder.child_by_field_name("left") == subscript:
        value = holder.child_by_field_name("right")
        return _store(holder, text, _text(source, value), source, alias) if value is not None else None
    if holder is not None and holder.type == "augmented_assignment" and holder.child_by_field_name("left") == subscript:
        operator = holder.child_by_field_name("operator")
        value = holder.child_by_field_name("right")
        sign = OPERATORS.get(operator.text) if operator is not None else None
        if sign is None or value is None:
            return None
        return _store(holder, text, f"float({text}['lr']) {sign} ({_text(source, value)})", source, alias)
    if holder is not None and holder.type == "argument_list" and holder.parent is not None \
            and holder.parent.child_by_field_name("function") is not None \
            and holder.parent.child_by_field_name("function").text == b"float":
        return None  # already float(...)
    if holder is not None and holder.type in ("delete_statement", "pattern_list", "tuple_pattern"):
        return None
    return subscript, [TextEdit(subscript.start_byte, subscript.end_byte, f"float({_text(source, subscript)})")]


def _store(assignment: Any, group: str, value: str, source: bytes, alias: str) -> tuple[Any, list[TextEdit]] | None:
    statement = assignment.parent
    if statement is None or statement.type != "expression_statement" or len(statement.named_children) != 1:
        return None
    edits = [TextEdit(assignment.start_byte, assignment.end_byte, f"{HELPER}({group}, {value})")]
    added = insertion(assignment, source, HELPER, DEFINITION.replace("{ms}", alias))
    return assignment, edits + ([added] if added is not None else [])


def _indexed_groups(node: Any) -> bool:
    """``X.param_groups[i]``."""
    if node.type != "subscript":
        return False
    value = node.child_by_field_name("value")
    return value is not None and _is_groups(value)


def _is_groups(node: Any) -> bool:
    attribute = node.child_by_field_name("attribute") if node.type == "attribute" else None
    return attribute is not None and attribute.text == b"param_groups"


def _loop_group(node: Any) -> bool:
    """A name an enclosing ``for`` (or comprehension) takes from ``X.param_groups``, directly or through
    ``zip(X.param_groups, ...)``."""
    if node.type != "identifier":
        return False
    scope = node.parent
    while scope is not None and scope.type not in ("function_definition", "class_definition", "module"):
        clauses = [scope] if scope.type == "for_statement" else \
            [c for c in scope.named_children if c.type == "for_in_clause"] \
            if "comprehension" in scope.type or scope.type == "generator_expression" else []
        for clause in clauses:
            if node.text in _group_names(clause):
                return True
        scope = scope.parent
    return False


def _group_names(clause: Any) -> set[bytes]:
    left, right = clause.child_by_field_name("left"), clause.child_by_field_name("right")
    if left is None or right is None:
        return set()
    if left.type == "identifier":
        return {left.text} if _is_groups(right) else set()
    function = right.child_by_field_name("function") if right.type == "call" else None
    if left.type not in ("pattern_list", "tuple_pattern") or function is None or function.text != b"zip":
        return set()
    arguments = [a for a in right.child_by_field_name("arguments").named_children if a.type != "comment"]
    targets = left.named_children
    return {t.text for t, a in zip(targets, arguments, strict=False) if t.type == "identifier" and _is_groups(a)}


def _text(source: bytes, node: Any) -> str:
    return source[node.start_byte:node.end_byte].decode("utf-8", "replace")
