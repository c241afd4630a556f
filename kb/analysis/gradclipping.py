"""Gradient clipping between ``loss.backward()`` and ``optimizer.step()``, on the gradient tuple.

torch clips the ``.grad`` of the parameters in place; in MindSpore the gradients are the tuple
``mindspore.value_and_grad`` returned for the optimizer's parameters, so clipping is a function of
that tuple. The call keeps its own arguments and gets two in front (the optimizer's parameters and
the tuple); the helper, written once into the file, does torch 2.13's arithmetic
(torch/nn/utils/clip_grad.py) on the gradients of the parameters it is given::

    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        ->  grads = ms_clip_grad_norm_(optimizer.parameters, grads, model.trainable_params(), 1.0)[0]
    norm = clip_grad_norm_(params, max_norm=1.0)
        ->  grads, norm = ms_clip_grad_norm_(optimizer.parameters, grads, params, max_norm=1.0)
    clip_grad_value_(model.parameters(), 0.5)
        ->  grads = ms_clip_grad_value_(optimizer.parameters, grads, model.trainable_params(), 0.5)

A parameter torch would clip is one the optimizer updates (matched by identity); a parameter
outside the optimizer has no gradient in MindSpore, and a frozen one (``requires_grad=False``) has
none in torch either. ``clip_grad_norm_``'s total norm is a 0-d tensor, as torch's.
"""
from __future__ import annotations

from typing import Any

from kb.analysis.adapters import insertion
from kb.analysis.text import TextEdit

NORM = ("torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_norm_",
        "torch.nn.utils.clip_grad_norm", "torch.nn.utils.clip_grad.clip_grad_norm")
VALUE = ("torch.nn.utils.clip_grad_value_", "torch.nn.utils.clip_grad.clip_grad_value_")
CLIPPING = NORM + VALUE

_SELECT = '''\
    parameters = [parameters] if isinstance(parameters, {ms}.Tensor) else list(parameters)
    chosen = {id(p) for p in parameters}
    picked = [i for i, p in enumerate(optimized) if id(p) in chosen]
'''
HELPERS = {
    "ms_clip_grad_norm_": '''\
def ms_clip_grad_norm_(optimized, grads, parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """torch.nn.utils.clip_grad_norm_ on the gradients value_and_grad gave for ``optimized`` (an optimizer's
    parameters): (the gradients, those of ``parameters`` times min(max_norm / (total norm + 1e-6), 1),
    the total norm)."""
''' + _SELECT + '''\
    norm_type = float(norm_type)
    if not picked:
        return grads, {ms}.Tensor(0.0, {ms}.float32)
    norms = {ms}.ops.stack([{ms}.ops.vector_norm(grads[i], norm_type) for i in picked])
    total_norm = {ms}.ops.vector_norm(norms, norm_type)
    if error_if_nonfinite and bool(total_norm.isnan() or total_norm.isinf()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
                           "cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
                           "anyway, set `error_if_nonfinite=False`")
    coef = {ms}.ops.clamp(float(max_norm) / (total_norm + 1e-6), max=1.0)
    grads = list(grads)
    for i in picked:
        grads[i] = grads[i] * coef.astype(grads[i].dtype)
    return tuple(grads), total_norm
''',
    "ms_clip_grad_value_": '''\
def ms_clip_grad_value_(optimized, grads, parameters, clip_value, foreach=None):
    """torch.nn.utils.clip_grad_value_ on the gradients value_and_grad gave for ``optimized`` (an optimizer's
    parameters): the gradients, those of ``parameters`` clamped to [-clip_value, clip_value]."""
''' + _SELECT + '''\
    clip_value = float(clip_value)
    grads = list(grads)
    for i in picked:
        grads[i] = {ms}.ops.clamp(grads[i], -clip_value, clip_value)
    return tuple(grads)
''',
}


def clip_call(statement: Any, clips: dict[int, str]) -> tuple[Any, Any | None, str] | None:
    """(call, the name its value is assigned to or None, torch name) when ``statement`` is a clipping call
    alone (``clip(...)``) or assigned to one name (``norm = clip(...)``; clip_grad_value_ returns None: never)."""
    if statement.type != "expression_statement" or len(statement.named_children) != 1:
        return None
    node, target = statement.named_children[0], None
    if node.type == "assignment":
        target, node = node.child_by_field_name("left"), node.child_by_field_name("right")
        if target is None or target.type != "identifier" or node is None:
            return None
    name = clips.get(node.start_byte) if node.type == "call" else None
    if name is None or (target is not None and name in VALUE):
        return None
    return node, target, name


def clip_edits(statement: Any, clips: dict[int, str], optimizer: str, grads: str, source: bytes,
               alias: str) -> list[TextEdit] | None:
    """The edits making a clipping statement work on ``grads``, its helper's definition included."""
    found = clip_call(statement, clips)
    if found is None:
        return None
    call, target, name = found
    helper = "ms_clip_grad_norm_" if name in NORM else "ms_clip_grad_value_"
    function, arguments = call.child_by_field_name("function"), call.child_by_field_name("arguments")
    if arguments is None or arguments.type != "argument_list":
        return None
    edits = [TextEdit(function.start_byte, function.end_byte, helper),
             TextEdit(arguments.start_byte + 1, arguments.start_byte + 1, f"{optimizer}.parameters, {grads}, ")]
    if target is not None:
        edits.insert(0, TextEdit(target.start_byte, target.start_byte, f"{grads}, "))
    else:
        edits.insert(0, TextEdit(statement.start_byte, statement.start_byte, f"{grads} = "))
        if helper == "ms_clip_grad_norm_":
            edits.append(TextEdit(call.end_byte, call.end_byte, "[0]"))
    edits += _parameters_edit(arguments)
    definition = insertion(statement, source, helper, HELPERS[helper].replace("{ms}", alias))
    return edits + ([definition] if definition is not None else [])


def _parameters_edit(arguments: Any) -> list[TextEdit]:
    """``model.parameters()`` given to the clipping: the cell's ``trainable_params()`` (a Cell has no parameters())."""
    items = [a for a in arguments.named_children if a.type != "comment"]
    value = items[0] if items and items[0].type != "keyword_argument" else next(
        (a.child_by_field_name("value") for a in items if a.type == "keyword_argument"
         and a.child_by_field_name("name").text == b"parameters"), None)
    if value is None or value.type != "call":
        return []
    function, args = value.child_by_field_name("function"), value.child_by_field_name("arguments")
    if function is None or function.type != "attribute" or args is None or args.named_children:
        return []
    attribute = function.child_by_field_name("attribute")
    if attribute is None or attribute.text != b"parameters":
        return []
    return [TextEdit(attribute.start_byte, attribute.end_byte, "trainable_params")]
