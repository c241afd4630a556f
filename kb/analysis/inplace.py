"""In-place tensor methods MindSpore cannot run as written: ``x.clamp_(0, 1)`` -> ``x = x.clamp(0, 1)``.

Every in-place method of torch's Tensor (``<name>_``) whose chosen target is not a same-named method that works
here is rewritten through its out-of-place twin ``<name>``, planned from that twin's record (so what is covered
is torch's in-place methods whose twin converts, never a hand-kept list):

- no MindSpore method at all (``triu_``, ``tril_``, ``abs_``, ``exp2_`` ...: the KB's derived "no usable X_");
- a method without a kernel on the configured device, or one that runs without writing its receiver
  (MindSpore 2.10's ``fill_``, ``clamp_`` ... have no CPU kernel; ``add_``, ``mul_``, ``exp_`` ... return a new
  tensor and leave the receiver as it was: kernel probes in data/probes/defs/kernels_*.yaml);
- a same-named method whose rewrite probe ran it next to torch and failed (``fill_diagonal_``, ``put_``).

The out-of-place form is written only where it means what torch's in-place call means:

- a whole statement whose receiver is a name the function assigns, or an argument it returns:
  ``x.clamp_(0, 1)`` -> ``x = x.clamp(0, 1)``.  Rebinding keeps gradients right (``Tensor.assign_value`` would
  cut them); another reference to the same tensor would not see the change, as with any rebinding;
- a whole statement whose receiver is an attribute (``self.scale.fill_(0.5)``, ``m.bias.data.zero_()``), a loop
  variable (``for p in model.parameters(): p.clamp_(-c, c)``), an argument not returned or one changed under
  ``torch.no_grad()`` (an initialiser such as trunc_normal_, whose callers drop what it returns): the tensor held
  there is given the new value, ``m.bias.assign_value(ms.ops.zeros_like(m.bias))`` (weight set-up and
  clipping, outside any gradient).  ``.data`` goes: MindSpore's ``Tensor.data`` is a copy, so writing to it
  would leave the parameter as it was;
- a whole statement on a slice of such a tensor: ``b[i:j].zero_()`` -> ``b[i:j] = ops.zeros_like(b[i:j])``;
- a value whose receiver is a tensor made right there (a creation call such as ``torch.zeros(3)`` or
  ``x.new_empty(shape)``, or ``.clone()``): nothing else can see it (``torch.zeros(3).fill_(2.0)`` ->
  ``ops.full_like(ops.zeros(3), 2.0)``);
- a value returned from the function's own names (``return x.sigmoid_() if inplace else x.sigmoid()``): the
  value returned is the same;
- a value assigned back to the name it changes, a name the function binds (``noise = noise.bernoulli_(p)``);
- the whole value of a plain assignment, its receiver a name the function binds: both names get the new value
  (``y = x.masked_fill_(m, v)`` -> ``y = x = x.masked_fill(m, v)``).

Anywhere else (``y = x.clamp_(0)`` on an argument x the function does not return, ``x.view(-1).fill_(1)``) torch
changes a tensor other code can see, so the use is left for a human with the reason.  The out-of-place call is planned
as the engine plans ``torch.Tensor.<name without _>``; ``fill_`` and ``zero_`` have no such method in torch and
become ``ops.full_like`` / ``ops.zeros_like``; ``bernoulli_(p)`` draws 1 with probability p whatever the receiver holds
(``x.bernoulli()`` would read x as the probabilities) and becomes ``(ops.rand_like(x) < p).astype(x.dtype)``
(stochastic depth's mask).  An in-place comparison or logical op keeps the receiver's dtype in torch
(``m.eq_(0)`` leaves a float tensor of 0.0 and 1.0), so its boolean twin is cast back (``.astype(m.dtype)``).
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

from kb.analysis.arguments import Blocked, read_arguments
from kb.analysis.resolver import Site
from kb.analysis.text import TextEdit, apply_edits

NO_GRAD = re.compile(rb"\b(?:no_grad|inference_mode)\b")
# calls whose result is a tensor nobody else holds (the receiver of a value-position in-place call)
FRESH = frozenset({
    "zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange", "linspace", "logspace", "eye",
    "tensor", "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like", "clone", "copy",
    "new_empty", "new_zeros", "new_ones", "new_full", "new_tensor",
})
# in-place methods torch has no out-of-place method for (or whose twin means something else):
# MindSpore's alias, the receiver's text, the arguments -> the expression of the new value
NO_METHOD: dict[str, Callable[[str, str, list[str]], str]] = {
    "fill_": lambda ms, x, args: f"{ms}.ops.full_like({x}, {args[0]})",
    "zero_": lambda ms, x, args: f"{ms}.ops.zeros_like({x})",
    # x.bernoulli() would read x as the probabilities: bernoulli_(p) draws 1 with probability p (0.5 by default)
    "bernoulli_": lambda ms, x, args: f"({ms}.ops.rand_like({x}) < {args[0] if args else 0.5}).astype({x}.dtype)",
}
NO_METHOD_ARITY = {"fill_": (1,), "zero_": (0,), "bernoulli_": (0, 1)}
NO_METHOD_KEYWORDS = {"fill_": ("value",), "bernoulli_": ("p",)}  # passed by name, placed as the first argument
# twins returning booleans: torch's in-place form writes the result in the receiver's dtype
BOOLEAN_TWINS = frozenset({
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
    "logical_and", "logical_or", "logical_xor", "logical_not",
})


def applies(site: Site, choice: Any) -> bool:
    """An in-place tensor method call (``x.<name>_(...)``) whose chosen target does not run as written here: none
    (no MindSpore method), no kernel on the configured device (or one that leaves the receiver unchanged), or a
    same-named method that gave other results than torch (a method merely unproven on this machine's CPU is kept
    for another device, where its kernel may exist)."""
    if not (site.kind == "call" and site.member is not None and site.call is not None
            and site.torch_name.startswith("torch.Tensor.") and site.torch_name.endswith("_")
            and not site.torch_name.endswith("__")):
        return False
    if choice is None or not choice.api or not choice.runs:
        return True
    leaf = site.torch_name.rsplit(".", 1)[1]
    proof = choice.target.get("proof") or {}
    return choice.api == f"mindspore.Tensor.{leaf}" and proof.get("result") == "failed"


def plan(site: Site, lookup: Callable[[str], Any], out_of_place: Callable[[Site], Any],
         alias: str) -> tuple[str, list[TextEdit]]:
    """(title, edits) of the out-of-place rewrite; raises ``Blocked`` with the reason where it would not
    mean what torch's call means.  ``out_of_place(site)`` plans a site as the engine does (a ``Use``)."""
    call, member = site.call, site.member
    receiver = member.parent.child_by_field_name("object") if member.parent is not None else None
    if receiver is None:
        raise Blocked("the in-place call's receiver cannot be read")
    statement = call.parent
    whole = statement is not None and statement.type == "expression_statement" \
        and len(statement.named_children) == 1
    name = member.text.decode()
    written = receiver.text.decode("utf-8", "surrogateescape")  # as the call has it
    data = receiver.child_by_field_name("attribute") if receiver.type == "attribute" else None
    if data is not None and data.text == b"data":  # m.bias.data: the parameter itself
        receiver = receiver.child_by_field_name("object")
    held = whole and _attribute_chain(receiver)  # x, self.scale, m.bias.data: the tensor held there gets the value
    sliced = whole and receiver.type == "subscript" and _attribute_chain(receiver.child_by_field_name("value"))
    if whole and not (held or sliced):
        raise Blocked(f"{name} changes a tensor other code can see (a view or an expression): rebind it yourself")
    returned = not whole and _returned_local(call, receiver)  # return x.sigmoid_() if inplace else x.sigmoid()
    rebound = not whole and _rebound_local(call, receiver)  # noise = noise.bernoulli_(p)
    handed = not whole and not rebound and _assigned_from_local(call, receiver)  # y = x.masked_fill_(m, v)
    if not whole and not (_fresh(receiver) or returned or rebound or handed):
        raise Blocked(f"the call's value is used and {name} also changes its receiver: split it into a rebinding "
                      "and the use")
    receiver_text = receiver.text.decode("utf-8", "surrogateescape")
    if name in NO_METHOD:
        args, _ = read_arguments(call)
        if any(a.star or (a.keyword is not None and a.keyword not in NO_METHOD_KEYWORDS.get(name, ()))
               for a in args) or len(args) not in NO_METHOD_ARITY[name]:
            raise Blocked(f"{name} takes {' or '.join(map(str, NO_METHOD_ARITY[name]))} argument(s), "
                          f"keywords {', '.join(NO_METHOD_KEYWORDS.get(name, ())) or 'none'}")
        text = NO_METHOD[name](alias, receiver_text, [a.value for a in args])
    else:
        record = lookup(site.torch_name[:-1])
        if record is None:
            raise Blocked(f"{site.torch_name[:-1]} is not in the knowledge base")
        use = out_of_place(dataclasses.replace(site, torch_name=site.torch_name[:-1], record=record, guess=False))
        if use.reason or not (use.edits or use.unchanged):
            raise Blocked(use.reason or "the out-of-place form has no rewrite")
        if any(e.start < call.start_byte or e.end > call.end_byte for e in use.edits):
            raise Blocked("the out-of-place rewrite writes outside the call")
        edits = list(use.edits)
        if not any(e.start <= member.start_byte and member.end_byte <= e.end for e in edits):
            edits.append(TextEdit(member.end_byte - 1, member.end_byte, ""))  # clamp_ -> clamp
        text = apply_edits(call.text, [TextEdit(e.start - call.start_byte, e.end - call.start_byte, e.new_text)
                                       for e in edits]).decode("utf-8", "surrogateescape")
        text = text.replace(written, receiver_text, 1) if written != receiver_text else text
        if name[:-1] in BOOLEAN_TWINS:
            text = f"{text}.astype({receiver_text}.dtype)"  # m.eq_(0): m stays float
    if sliced or handed or whole and receiver.type == "identifier" and _local(receiver):
        # x = x.clamp(...); qkv_bias[a:b] = ops.zeros_like(qkv_bias[a:b]); y = x = x.masked_fill(m, v)
        text = f"{receiver_text} = {text}"
    elif whole:
        text = f"{receiver_text}.assign_value({text})"
    return f"Rewrite as {text}", [TextEdit(call.start_byte, call.end_byte, text)]


def _local(name: Any) -> bool:
    """A name the enclosing function binds by assignment (``y = self.norm(x)``), or an argument it returns; not a
    loop variable (``for p in model.parameters()``), not global: rebinding it changes what torch's call changed."""
    function = _function_of(name)
    if function is None:
        return False
    text = name.text
    if _parameter(function, text):
        # an argument: rebound only where the function hands its value on (``x.sigmoid_(); return x + y``), unless
        # torch changes it without gradients (an initialiser: ``with torch.no_grad(): t.erfinv_(); ...; return t``,
        # whose callers drop what it returns): there the caller's tensor itself gets the value
        if _without_gradients(name):
            return False
        return any(n.type == "return_statement" and any(c.type == "identifier" and c.text == text for c in _walk(n))
                   for n in _walk(function.child_by_field_name("body")))
    assigned = False
    for node in _walk(function.child_by_field_name("body")):
        if node.type in ("for_statement", "for_in_clause"):
            bound = node.child_by_field_name("left")
        elif node.type in ("global_statement", "nonlocal_statement", "with_item"):
            bound = node
        elif node.type == "assignment":
            left = node.child_by_field_name("left")
            assigned = assigned or (left is not None and left.type == "identifier" and left.text == text)
            continue
        else:
            continue
        if any(n.type == "identifier" and n.text == text for n in _walk(bound)):
            return False
    return assigned


def _without_gradients(node: Any) -> bool:
    """Inside ``with torch.no_grad():`` (``inference_mode``), or a function decorated with it."""
    parent = node.parent
    while parent is not None:
        if parent.type == "with_statement":
            items = [i for c in parent.named_children if c.type == "with_clause" for i in c.named_children]
            if any(NO_GRAD.search(item.text) for item in items):
                return True
        elif parent.type == "decorated_definition":
            if any(d.type == "decorator" and NO_GRAD.search(d.text) for d in parent.named_children):
                return True
        parent = parent.parent
    return False


def _function_of(name: Any) -> Any | None:
    """The function definition whose scope ``name`` is in (None: a lambda's, the module's)."""
    function = name.parent
    while function is not None and function.type not in ("function_definition", "lambda", "module"):
        function = function.parent
    return function if function is not None and function.type == "function_definition" else None


def _parameter(function: Any, text: bytes) -> bool:
    parameters = function.child_by_field_name("parameters")
    return parameters is not None and any(n.type == "identifier" and n.text == text for n in _walk(parameters))


def _returned_local(call: Any, receiver: Any) -> bool:
    """The call is part of a return statement and its receiver is rooted at a name the function assigns or an
    argument it returns (``return x.add_(3.).clamp_(0., 6.)``): the value returned is the same out of place."""
    node = call.parent
    while node is not None and node.type not in ("return_statement", "function_definition", "lambda"):
        if node.type.endswith("statement") or node.type == "block":
            return False
        node = node.parent
    if node is None or node.type != "return_statement":
        return False
    root = receiver
    while root.type in ("call", "attribute", "parenthesized_expression"):
        root = root.child_by_field_name("function" if root.type == "call" else "object") \
            if root.type != "parenthesized_expression" else (root.named_children or [root])[0]
        if root is None:
            return False
    return root.type == "identifier" and _local(root)


def _rebound_local(call: Any, receiver: Any) -> bool:
    """``noise = noise.bernoulli_(p)``: the call is the whole value assigned to the very name it changes, a name the
    function binds (``_local``): that name ends up holding the new value either way, and nothing else held it."""
    assignment = call.parent
    if receiver.type != "identifier" or assignment is None or assignment.type != "assignment":
        return False
    left, right = assignment.child_by_field_name("left"), assignment.child_by_field_name("right")
    return right is not None and right.id == call.id and left is not None and left.type == "identifier" \
        and left.text == receiver.text and _local(receiver)


def _assigned_from_local(call: Any, receiver: Any) -> bool:
    """``y = x.masked_fill_(m, v)``: the call is the whole value of a plain assignment statement to other targets,
    its receiver a name the function binds (``_local``): torch leaves x and y holding the one changed tensor, and
    ``y = x = x.masked_fill(m, v)`` binds both names to the new value, as the statement form ``x.masked_fill_(m,
    v)`` -> ``x = x.masked_fill(m, v)`` does for x alone."""
    assignment = call.parent
    if receiver.type != "identifier" or assignment is None or assignment.type != "assignment" \
            or assignment.child_by_field_name("type") is not None:
        return False
    left, right = assignment.child_by_field_name("left"), assignment.child_by_field_name("right")
    statement = assignment.parent
    return right is not None and right.id == call.id and left is not None \
        and statement is not None and statement.type == "expression_statement" \
        and len(statement.named_children) == 1 and _local(receiver)


def _walk(node: Any) -> Any:
    if node is None:
        return
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.named_children)


def _attribute_chain(node: Any) -> bool:
    """``a.b.c``: names and attributes only (no call, no subscript: those may be views or new tensors)."""
    while node.type == "attribute":
        node = node.child_by_field_name("object")
    return node.type == "identifier"


def _fresh(receiver: Any) -> bool:
    """A tensor made right there: a creation call (``FRESH``), or arithmetic (``(x + 3).div_(6)``: a new tensor)."""
    while receiver.type == "parenthesized_expression" and receiver.named_children:
        receiver = receiver.named_children[0]
    if receiver.type in ("binary_operator", "unary_operator"):
        return True
    if receiver.type != "call":
        return False
    function = receiver.child_by_field_name("function")
    if function is None:
        return False
    leaf = function.child_by_field_name("attribute") if function.type == "attribute" else function
    return leaf is not None and leaf.text.decode("utf-8", "replace") in FRESH


# methods of a tensor that always return a new one (never the receiver, never a view of it)
NEW_TENSOR_METHODS = FRESH | frozenset({
    "add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod", "pow", "matmul", "mm", "bmm",
    "exp", "log", "sqrt", "rsqrt", "abs", "neg", "sign", "sin", "cos", "tanh", "sigmoid", "relu", "softmax",
    "log_softmax", "clamp", "clip", "sum", "mean", "prod", "cumsum", "norm", "round", "floor", "ceil", "reciprocal",
    "square", "maximum", "minimum", "where", "masked_fill", "lerp", "addcmul", "addcdiv",
})
MODULES = (b"torch", b"F", b"ms", b"mindspore")  # module functions: ``torch.zeros(3)``, ``ms.ops.zeros_like(s)``


def unaliased(name: Any) -> bool:
    """``name`` (an identifier) is a name its function binds only to tensors nothing else holds (a tensor
    function's or arithmetic's result, ``x.div(k)``, ``x.clone()``), and no parameter, global or loop
    variable: rebinding it (``s = ms.ops.zeros_like(s)`` for ``s.zero_()``) changes all that torch's in-place
    call changed. A name bound from another name, an attribute, an index or a view (``s = out``, ``s = out[0]``,
    ``s = out.view(-1)``), or from a function of unknown kind, may be another holder's tensor: False."""
    function = _function_of(name)
    if function is None or _parameter(function, name.text):
        return False
    text = name.text
    bound = False
    stack = [function.child_by_field_name("body")]
    while stack:
        node = stack.pop()
        if node is None or node.type in ("function_definition", "class_definition", "lambda"):
            continue
        stack.extend(node.named_children)
        if node.type in ("global_statement", "nonlocal_statement"):
            if any(n.type == "identifier" and n.text == text for n in node.named_children):
                return False
        elif node.type in ("for_statement", "for_in_clause", "with_item", "named_expression", "as_pattern"):
            target = node.child_by_field_name("left") or node.child_by_field_name("name") or node
            if any(n.type == "identifier" and n.text == text for n in _walk(target)) and node.type != "with_item" \
                    or node.type == "with_item" and text in node.text:
                return False
        elif node.type == "assignment":
            left, value = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is None:
                continue
            if left.type == "identifier" and left.text == text:
                if value is None or not _new_tensor(value):
                    return False
                bound = True
            elif left.type != "identifier" and any(n.type == "identifier" and n.text == text for n in _walk(left)) \
                    and left.type not in ("attribute", "subscript"):
                return False  # (``s, t = pair``: whatever the pair held)
    return bound


def _new_tensor(value: Any) -> bool:
    """A tensor made by this expression, held by nothing else yet."""
    while value.type == "parenthesized_expression" and len(value.named_children) == 1:
        value = value.named_children[0]
    if value.type in ("binary_operator", "unary_operator", "comparison_operator"):
        return True
    if value.type == "conditional_expression":  # (a guard's two branches, or any choice of two new tensors)
        branches = [c for c in value.named_children if c.type != "comment"]
        return len(branches) == 3 and _new_tensor(branches[0]) and _new_tensor(branches[2])
    if value.type != "call":
        return False
    function = value.child_by_field_name("function")
    arguments = value.child_by_field_name("arguments")
    if function is None or function.type != "attribute" or arguments is None \
            or b"inplace" in arguments.text:  # (``F.relu(x, inplace=True)`` returns x)
        return False
    leaf = function.child_by_field_name("attribute").text.decode("utf-8", "replace")
    root = function
    while root.type == "attribute":
        root = root.child_by_field_name("object")
    if root.type == "identifier" and root.text in MODULES:
        return not leaf.endswith("_") and leaf not in VIEW_FUNCTIONS  # torch.zeros(3), ms.ops.cat([a, b]), F.relu(x)
    if leaf.endswith("_") and not leaf.endswith("__"):  # x.new_empty(n).bernoulli_(p): the new tensor, changed
        receiver = function.child_by_field_name("object")
        return receiver is not None and _new_tensor(receiver)
    return leaf in NEW_TENSOR_METHODS  # out.div(k), x.clone()


# module functions returning their argument or a view of it
VIEW_FUNCTIONS = frozenset({
    "reshape", "transpose", "permute", "squeeze", "unsqueeze", "flatten", "unflatten", "narrow", "select", "t",
    "split", "chunk", "unbind", "tensor_split", "movedim", "moveaxis", "swapaxes", "swapdims", "diagonal",
    "view_as_real", "view_as_complex", "as_strided", "detach", "stop_gradient", "broadcast_to", "expand_dims",
    "real", "imag", "identity", "contiguous",
})
