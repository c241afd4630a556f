"""Which receivers of tensor-method calls are tensors: ``x.size(0)`` where ``x`` is ``forward``'s input.

A guessed ``torch.Tensor`` method (``guesses.py``) is rewritten by fix-all only when its
receiver is known to be a tensor. Knowledge comes from the code around the call, read from
the tree, flow-insensitively within one function:

- a parameter of ``forward`` (or ``construct``) other than ``self``, unless annotated with a
  non-tensor type; any parameter annotated ``Tensor``;
- a name all of whose assignments in the function are tensor expressions: a tensor name,
  a call of a sub-layer (``self.conv(x)``), a call of a torch or MindSpore function that
  returns a tensor, a call of one of the file's own functions given a tensor
  (``nchw_to(x, fmt)``; builtins such as ``len`` excluded), a tensor method call other than
  those returning Python values (``x.view(...)``, not ``x.size()``), arithmetic or indexing
  with a tensor, or unpacking one of those (``q, k, v = qkv.unbind(0)``);
- with the file's calls (``tensor_names(..., source)``), a parameter of one of the file's own functions or
  methods that every call in the file passes a tensor (``helper(x, 2.0)`` in ``forward``; callsites.py), to
  the least fixed point: a helper's helper is known when the helper's own parameter is;
- ``self.<attr>`` set from ``nn.Parameter(...)`` or a torch tensor call anywhere in its class,
  or registered with ``register_buffer``;
- ``typing.cast(T, v)`` is ``v`` (``cast(nn.Embedding, self.transformer.wte)(x)`` calls a
  sub-layer), and ``self.a.b(t)`` given a tensor calls a sub-layer held in a container.

Sub-layer and own-helper calls count only in a function that takes a tensor parameter; a function
without one (a sampling loop) still knows the results of torch calls and of tensor methods on them.

The inference reads one revision's tree as a whole (fix-all's own passes), never the
incremental analysis, so an edit elsewhere in the function cannot leave it stale.
"""
from __future__ import annotations

import builtins
import re
from collections.abc import Iterable
from typing import Any
from weakref import WeakKeyDictionary

from kb.analysis.callsites import CallSites

FORWARD_NAMES = (b"forward", b"construct")
# Tensor methods that return Python values or non-tensors: their result is not a tensor.
NOT_TENSOR_METHODS = frozenset({
    b"size", b"dim", b"ndimension", b"numel", b"nelement", b"item", b"tolist", b"numpy", b"is_contiguous",
    b"data_ptr", b"element_size", b"get_device", b"stride", b"type", b"is_floating_point", b"is_complex",
    b"storage", b"__len__", b"split", b"chunk", b"unbind", b"tensor_split",
})
SEQUENCE_METHODS = frozenset({b"split", b"chunk", b"unbind", b"tensor_split"})
NOT_TENSOR_TYPES = (b"int", b"float", b"bool", b"str", b"list", b"dict", b"tuple", b"bytes")
OPERATORS = ("binary_operator", "unary_operator")
CALL_DEPTH = 6  # rounds of the call-site fixed point (helpers calling helpers that deep are typed)
BUILTINS = frozenset(name.encode() for name in dir(builtins))  # len(x), int(x), isinstance(...): no tensor


class TensorNames:
    """Tensor knowledge for one tree: ``is_tensor(node)`` for expression nodes."""

    def __init__(self, tensor_calls: set[int], alias: str = "ms", sites: CallSites | None = None) -> None:
        self.tensor_calls = tensor_calls  # ids of call nodes the engine resolved to tensor-returning torch APIs
        self.alias = alias.encode()  # MindSpore's name in the file: ``ms.ops.cat(...)`` returns a tensor
        self.sites = sites  # the calls of the file's own functions (callsites.py), or None: not read
        self._functions: dict[int, set[bytes]] = {}
        self._classes: dict[int, set[bytes]] = {}
        self._called: dict[int, set[bytes]] | None = None  # function id -> parameters its callers pass tensors

    def is_tensor(self, node: Any) -> bool:
        return self._expression(node, self._names(enclosing(node, "function_definition")),
                                enclosing(node, "class_definition"))

    # -- per function -------------------------------------------------------------------
    def _names(self, function: Any | None) -> set[bytes]:
        if function is None:
            return _Known()
        found = self._functions.get(function.id)
        if found is None:
            found = self._functions[function.id] = self._infer(function)
        return found

    def _infer(self, function: Any) -> set[bytes]:
        """The greatest set of names consistent with the rules: start from every parameter the
        rules allow and every assigned name, drop any name one of whose assignments is not a
        tensor expression, until nothing changes."""
        parameters = set(_tensor_parameters(function)) | self._from_callers(function)
        assignments: dict[bytes, list[tuple[Any, bool]]] = {}  # name -> [(value, unpacked element?)]
        for left, value in _assignments(function.child_by_field_name("body")):
            if left.type == "identifier":
                assignments.setdefault(left.text, []).append((value, False))
            elif left.type in ("pattern_list", "tuple_pattern", "list_pattern", "tuple", "list"):
                pairs = _parallel(left, value)  # q, k, v = qkv[0], qkv[1], qkv[2]: item by item
                for item, item_value in pairs:
                    assignments.setdefault(item.text, []).append((item_value, False))
                for item in _identifiers(left) if not pairs else ():
                    assignments.setdefault(item.text, []).append((value, True))
            else:
                for item in _identifiers(left) if left.named_children else [left]:
                    if item.type == "identifier":
                        assignments.setdefault(item.text, []).append((left, False))  # never a tensor
        known = _Known(parameters | set(assignments), layers=bool(parameters))
        owner = enclosing(function, "class_definition")
        changed = True
        while changed:
            changed = False
            for name, values in assignments.items():
                if name in known and not all(self._unpacked(v, known, owner) if unpacked
                                             else self._expression(v, known, owner) for v, unpacked in values):
                    known.discard(name)
                    changed = True
        return known

    def _from_callers(self, function: Any) -> set[bytes]:
        """The parameters of ``function`` every call in the file passes a tensor (none annotated otherwise)."""
        if self.sites is None or function.id not in self.sites.calls:
            return set()
        if self._called is None:
            self._solve()
        found = (self._called or {}).get(function.id)
        if not found:
            return set()
        parameters = function.child_by_field_name("parameters")
        allowed = {ident.text for p in (parameters.named_children if parameters is not None else ())
                   if (ident := _parameter(p)[0]) is not None}
        return found & allowed

    def _solve(self) -> None:
        """The parameters known from calls, to the least fixed point: first every function's callers as they are
        known without it, then again only the functions called from one whose knowledge grew (``CALL_DEPTH``
        rounds at most: a chain of helpers that deep). A function's own names depend only on its parameters, so
        only those of a function whose parameters grew are inferred again."""
        assert self.sites is not None
        self._called = {}
        pending = set(self.sites.functions)
        for _ in range(CALL_DEPTH):
            grown = {}
            for key in pending:
                names = self.sites.parameters(self.sites.functions[key], self.is_tensor)
                if names != self._called.get(key, set()):
                    grown[key] = names
            if not grown:
                break
            for key, names in grown.items():
                self._called[key] = names
                self._functions.pop(key, None)
            pending = {callee for key in grown for callee in self.sites.callees.get(key, ())}

    def _unpacked(self, value: Any, known: set[bytes], owner: Any | None) -> bool:
        """An item of ``a, b = value`` is a tensor: value is a sub-layer call (LSTM's outputs) or a
        tensor's split/chunk/unbind."""
        if value.type != "call":
            return False
        function = value.child_by_field_name("function")
        if function is None or function.type != "attribute":
            return False
        obj, attr = function.child_by_field_name("object"), function.child_by_field_name("attribute")
        if attr is not None and attr.text in SEQUENCE_METHODS:
            return obj is not None and self._expression(obj, known, owner)
        return _is_self_call(value)

    # -- expressions --------------------------------------------------------------------
    def _expression(self, node: Any, known: set[bytes], owner: Any | None) -> bool:
        kind = node.type
        if kind == "identifier":
            return node.text in known
        if kind == "parenthesized_expression":
            inner = node.named_children
            return len(inner) == 1 and self._expression(inner[0], known, owner)
        if kind == "attribute":
            obj, attr = node.child_by_field_name("object"), node.child_by_field_name("attribute")
            if obj is not None and obj.type == "identifier" and obj.text == b"self" and attr is not None:
                return owner is not None and attr.text in self._class_tensors(owner)
            return attr is not None and attr.text in (b"T", b"mT", b"data") and obj is not None \
                and self._expression(obj, known, owner)
        if kind == "subscript":
            value = node.child_by_field_name("value")
            return value is not None and self._expression(value, known, owner)
        if kind in OPERATORS:
            operands = [c for c in node.named_children if c.type != "comment"]
            return any(self._expression(c, known, owner) for c in operands)
        if kind == "conditional_expression":
            branches = [c for c in node.named_children if c.type != "comment"]
            return len(branches) == 3 and self._expression(branches[0], known, owner) \
                and self._expression(branches[2], known, owner)
        if kind == "call":
            function = node.child_by_field_name("function")
            if function is not None and function.type == "identifier" and function.text == b"cast":
                value = _cast_value(node)  # typing.cast(T, v) is v
                return value is not None and self._expression(value, known, owner)
            layers = getattr(known, "layers", False)  # sub-layers count where the function deals in tensors
            if node.id in self.tensor_calls or (layers and self._layer_call(node, known, owner)):
                return True
            if function is not None and _mindspore_function(function.text, self.alias):
                return True
            inner = function.child_by_field_name("function") if function is not None and function.type == "call" \
                else None
            if inner is not None and _mindspore_layer(inner.text, self.alias):
                return True  # a layer built and called at once (ms.nn.Softmax(axis=1)(x)) returns a tensor
            if layers and function is not None and function.type == "identifier" and function.text not in BUILTINS:
                # a helper of the model's own (nchw_to(x, fmt)) given a tensor returns one
                arguments = node.child_by_field_name("arguments")
                if arguments is not None and any(self._expression(a, known, owner) for a in arguments.named_children
                                                 if a.type not in ("keyword_argument", "comment")):
                    return True
            if function is not None and function.type == "attribute":
                obj, attr = function.child_by_field_name("object"), function.child_by_field_name("attribute")
                return attr is not None and attr.text not in NOT_TENSOR_METHODS and obj is not None \
                    and self._expression(obj, known, owner)
        return False

    def _layer_call(self, call: Any, known: set[bytes], owner: Any | None) -> bool:
        """``self.conv(...)``, ``cast(T, self.blocks.h)(t)`` or ``self.blocks.h(t)`` given a tensor:
        a sub-layer's forward (a deeper attribute counts only with a tensor argument, so
        ``self.fc.weight.size()`` is no layer call)."""
        function = _uncast(call.child_by_field_name("function"))
        if function is None or function.type != "attribute":
            return False
        obj = function.child_by_field_name("object")
        if obj is not None and obj.type == "identifier" and obj.text == b"self":
            return True
        while obj is not None and obj.type == "attribute":
            obj = obj.child_by_field_name("object")
        if obj is None or obj.type != "identifier" or obj.text != b"self":
            return False
        arguments = call.child_by_field_name("arguments")
        return arguments is not None and any(self._expression(a, known, owner) for a in arguments.named_children
                                             if a.type not in ("keyword_argument", "comment"))

    def _class_tensors(self, owner: Any) -> set[bytes]:
        found = self._classes.get(owner.id)
        if found is None:
            found = self._classes[owner.id] = self._attributes(owner)
        return found

    def _attributes(self, owner: Any) -> set[bytes]:
        """``self.X`` set from a tensor-returning torch call (``nn.Parameter``, ``torch.zeros``)
        or registered as a buffer, anywhere in the class."""
        names: set[bytes] = set()
        for node in _nodes(owner.child_by_field_name("body")):
            if node.type == "assignment":
                left, value = node.child_by_field_name("left"), node.child_by_field_name("right")
                if left is not None and value is not None and left.type == "attribute" \
                        and value.type == "call" and value.id in self.tensor_calls:
                    obj, attr = left.child_by_field_name("object"), left.child_by_field_name("attribute")
                    if obj is not None and obj.text == b"self" and attr is not None:
                        names.add(attr.text)
            elif node.type == "call" and _is_self_method(node, b"register_buffer"):
                args = node.child_by_field_name("arguments")
                first = args.named_children[0] if args is not None and args.named_children else None
                if first is not None and first.type == "string":
                    names.add(first.text.strip(b"'\"rbuRBU"))
        return names


class _Known(set):
    """The tensor names of one function; ``layers``: the function takes a tensor parameter, so
    calls of sub-layers and of the file's own helpers return tensors in it."""

    def __init__(self, names: Iterable[bytes] = (), layers: bool = False) -> None:
        super().__init__(names)
        self.layers = layers


def _cast_value(call: Any) -> Any | None:
    """``v`` of ``cast(T, v)``."""
    arguments = call.child_by_field_name("arguments")
    items = [a for a in arguments.named_children if a.type != "comment"] if arguments is not None else []
    return items[1] if len(items) == 2 and items[1].type != "keyword_argument" else None


def _uncast(function: Any | None) -> Any | None:
    """The callee with ``cast(T, ...)`` taken off: ``cast(nn.Embedding, self.wte)`` -> ``self.wte``."""
    while function is not None and function.type == "call":
        inner = function.child_by_field_name("function")
        if inner is None or inner.type != "identifier" or inner.text != b"cast":
            return function
        function = _cast_value(function)
    return function


def _mindspore_layer(text: bytes, alias: bytes) -> bool:
    """``ms.nn.Softmax``, ``ms.mint.nn.ReLU``: a MindSpore layer class (its instance, called, returns a tensor)."""
    parts = text.split(b".")
    return len(parts) >= 3 and parts[0] == alias and (parts[1] == b"nn" or parts[1:3] == [b"mint", b"nn"]) \
        and parts[-1][:1].isupper()


def _mindspore_function(text: bytes, alias: bytes) -> bool:
    """``ms.ops.cat``, ``ms.mint.flatten``, ``ms.Tensor``: MindSpore functions returning tensors
    (classes other than Tensor and Parameter build layers)."""
    parts = text.split(b".")
    if len(parts) < 2 or parts[0] != alias:
        return False
    leaf = parts[-1]
    if parts[1] in (b"ops", b"mint"):
        return not leaf[:1].isupper()
    return len(parts) == 2 and leaf in (b"Tensor", b"Parameter", b"tensor")


def _tensor_parameters(function: Any) -> Iterable[bytes]:
    name = function.child_by_field_name("name")
    forward = name is not None and name.text in FORWARD_NAMES
    parameters = function.child_by_field_name("parameters")
    if parameters is None:
        return
    for index, parameter in enumerate(parameters.named_children):
        ident, annotation = _parameter(parameter)
        if ident is None:
            continue
        if annotation is not None:
            text = annotation.text
            if text.rsplit(b".", 1)[-1] == b"Tensor" or text.endswith(b"[Tensor]"):
                yield ident.text
            continue
        if forward and index > 0 and parameter.type in ("identifier", "default_parameter"):
            yield ident.text


def _parameter(node: Any) -> tuple[Any | None, Any | None]:
    if node.type == "identifier":
        return node, None
    if node.type in ("typed_parameter", "typed_default_parameter", "default_parameter"):
        ident = node.child_by_field_name("name")
        if ident is None:
            ident = next((c for c in node.named_children if c.type == "identifier"), None)
        annotation = node.child_by_field_name("type")
        if annotation is not None and annotation.text.split(b"[")[0].rsplit(b".", 1)[-1] in NOT_TENSOR_TYPES:
            return None, None
        return ident, annotation
    return None, None


def _assignments(body: Any | None) -> Iterable[tuple[Any, Any]]:
    """(left, value) of every assignment in a function body, nested functions and classes excluded;
    ``for`` targets and augmented assignments count as assignments of an unknown value."""
    if body is None:
        return
    stack = list(body.named_children)
    while stack:
        node = stack.pop()
        if node.type in ("function_definition", "class_definition", "lambda"):
            continue
        if node.type == "assignment":
            left, value = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None and value is not None:
                yield left, value
        elif node.type in ("for_statement", "with_item", "for_in_clause"):
            left = node.child_by_field_name("left") or node.child_by_field_name("alias")
            if left is not None:
                yield left, node  # not an expression: never a tensor
        elif node.type == "augmented_assignment":
            left, value = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None and value is not None:
                yield left, value
        stack.extend(node.named_children)


def _parallel(left: Any, value: Any) -> list[tuple[Any, Any]]:
    """(name, its value) of ``a, b = x, y``; empty unless both sides are plain lists of one length."""
    if value.type not in ("expression_list", "tuple"):
        return []
    names = [c for c in left.named_children if c.type != "comment"]
    values = [c for c in value.named_children if c.type != "comment"]
    if len(names) != len(values) or any(n.type != "identifier" for n in names) \
            or any(v.type in ("list_splat", "parenthesized_list_splat") for v in values):
        return []
    return list(zip(names, values, strict=True))


def _identifiers(pattern: Any) -> Iterable[Any]:
    for child in pattern.named_children:
        if child.type == "identifier":
            yield child
        elif child.type in ("pattern_list", "tuple_pattern", "list_pattern", "tuple", "list",
                            "parenthesized_expression"):
            yield from _identifiers(child)


def _is_self_call(call: Any) -> bool:
    """``self.layer(...)``: a sub-layer's forward."""
    function = call.child_by_field_name("function")
    if function is None or function.type != "attribute":
        return False
    obj = function.child_by_field_name("object")
    return obj is not None and obj.type == "identifier" and obj.text == b"self"


def _is_self_method(call: Any, method: bytes) -> bool:
    function = call.child_by_field_name("function")
    attr = function.child_by_field_name("attribute") if function is not None and function.type == "attribute" else None
    return attr is not None and attr.text == method and _is_self_call(call)


def enclosing(node: Any, kind: str) -> Any | None:
    """The nearest ancestor of ``node`` of type ``kind`` (``function_definition``, ``class_definition``)."""
    parent = node.parent
    while parent is not None and parent.type != kind:
        parent = parent.parent
    return parent


def _nodes(node: Any | None) -> Iterable[Any]:
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.named_children)


TENSOR_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.Tensor"})
# Guessed methods whose rewrite is right whatever the receiver is that has the torch method: ``x.size(0)`` ->
# ``x.shape[0]`` holds for a MindSpore tensor and a NumPy array alike, and as written it fails on MindSpore
# (``Tensor.size`` is the element count, an int), so it is applied without knowing the receiver's type.
# ``x.type(...)`` -> ``ms_tensor_type(x, ...)`` tests the receiver itself and calls another's own ``type``.
ANY_RECEIVER = frozenset({"torch.Tensor.size", "torch.Tensor.type"})


_KNOWN: WeakKeyDictionary = WeakKeyDictionary()  # analysis -> its TensorNames (with the file's calls)


def confident_guesses(analysis: Any, with_edits: bool = True) -> set[tuple[int, int]]:
    """Call spans of the analysis's guessed tensor-method uses whose receiver is a tensor, or whose rewrite
    holds for any receiver (``ANY_RECEIVER``); ``with_edits``: only those with a rewrite (fix-all applies
    them), else also those msmap could not rewrite (fix-all marks them with the reason)."""
    guesses = [u for u in analysis.uses if u.guess and u.call_span and (u.edits or not with_edits)]
    if not guesses or analysis.tree is None:
        return set()
    root = analysis.tree.root_node
    names = _KNOWN.get(analysis)
    if names is None:  # (one per analysis: fix-all asks for its sure and its marked guesses)
        names = _KNOWN[analysis] = tensor_names(root, analysis.uses, analysis.alias, analysis.source)
    found = set()
    for use in guesses:
        if use.torch_name in ANY_RECEIVER:
            found.add(use.call_span)
            continue
        call = call_at(root, use.call_span)
        function = call.child_by_field_name("function") if call is not None else None
        receiver = function.child_by_field_name("object") if function is not None else None
        if receiver is not None and (names.is_tensor(receiver) or _data_of(receiver, use.torch_name)
                                     or _torch_keywords(call, use.record) and not _assigned_here(receiver)
                                     or _torch_chain(call)):
            found.add(use.call_span)
    return found


def tensor_names(root: Any, uses: Iterable[Any], alias: str, source: bytes | None = None) -> TensorNames:
    """The tensor knowledge of the tree ``root`` whose resolved (not guessed) uses are ``uses``: the calls of
    torch functions that return tensors are tensors. With the file's ``source``, parameters are typed by the
    file's calls too (callsites.py): whole-file readers only (fix-all), since an edit in one function then
    changes what another knows."""
    calls = set()
    for use in uses:
        if not use.guess and use.kind == "call" and use.call_span and _returns_tensor(use.record):
            node = call_at(root, use.call_span)
            if node is not None:
                calls.add(node.id)
    return TensorNames(calls, alias, CallSites(root, source) if source is not None else None)


def _assigned_here(receiver: Any) -> bool:
    """Whether the receiver is a name its function assigns (``n = len(x)``, ``q, k = pair``, ``x = cast(int, v)``):
    what it holds is then the type rules' business (TensorNames), not the keyword's. A parameter, a global or an
    attribute is not assigned here."""
    if receiver.type != "identifier":
        return False
    function = enclosing(receiver, "function_definition")
    body = function.child_by_field_name("body") if function is not None else None
    stack = [body] if body is not None else []
    while stack:
        node = stack.pop()
        if node.type in ("function_definition", "class_definition", "lambda"):
            continue
        stack.extend(node.named_children)
        target = node.child_by_field_name("left") if node.type in ("assignment", "augmented_assignment",
                                                                      "for_statement", "for_in_clause") else None
        if target is not None and any(n.type == "identifier" and n.text == receiver.text for n in _names(target)):
            return True
    return False


def _names(node: Any) -> list[Any]:
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if current.type == "identifier":
            found.append(current)
        elif current.type in ("pattern_list", "tuple_pattern", "list_pattern", "parenthesized_expression"):
            stack.extend(current.named_children)
    return found


TORCH_KEYWORDS = (b"dim", b"keepdim")  # NumPy, pandas and Python's own types say ``axis``/``keepdims``


def _torch_keywords(call: Any, record: dict | None) -> bool:
    """``q.softmax(dim=-1)``, ``h.sum(dim=1, keepdim=True)``: a method of torch's tensors given a keyword only
    torch spells that way (and the method takes it), so the receiver is a torch tensor whatever its name."""
    arguments = call.child_by_field_name("arguments") if call is not None else None
    signature = str((record or {}).get("torch_signature") or "")
    for argument in arguments.named_children if arguments is not None else []:
        name = argument.child_by_field_name("name") if argument.type == "keyword_argument" else None
        if name is not None and name.text in TORCH_KEYWORDS and re.search(rf"\b{name.text.decode()}\b", signature):
            return True
    return False


CHAIN_METHODS = frozenset({b"detach", b"cpu", b"numpy"})  # only torch's tensors chain two of these


def _torch_chain(call: Any) -> bool:
    """``t.detach().cpu().numpy()``, ``t.cpu().numpy()``, ``t.detach().numpy()``: the call is part of a chain of method
    calls in which two of ``detach``, ``cpu``, ``numpy`` follow each other, which only torch's tensors answer (a NumPy
    array has neither ``detach`` nor ``cpu``; an ``io`` stream's ``detach`` returns a raw stream)."""
    while call.parent is not None and call.parent.type == "attribute" and call.parent.parent is not None \
            and call.parent.parent.type == "call":
        call = call.parent.parent  # the chain's last call
    methods = []
    while call is not None and call.type == "call":
        function = call.child_by_field_name("function")
        if function is None or function.type != "attribute":
            break
        methods.append(function.child_by_field_name("attribute").text)
        call = function.child_by_field_name("object")
    return any(a in CHAIN_METHODS and b in CHAIN_METHODS for a, b in zip(methods, methods[1:], strict=False))


def _data_of(receiver: Any, torch_name: str) -> bool:
    """``<x>.data`` receiving an in-place tensor method (``m.weight.data.normal_(0, 0.02)``): in torch code
    ``.data`` followed by ``<method>_`` is a tensor's data, whatever ``x``'s type is known to be."""
    attribute = receiver.child_by_field_name("attribute") if receiver.type == "attribute" else None
    return attribute is not None and attribute.text == b"data" and torch_name.startswith("torch.Tensor.") \
        and torch_name.endswith("_") and not torch_name.endswith("__")


def _returns_tensor(record: dict | None) -> bool:
    if not record:
        return False
    name = str(record.get("torch") or "")
    return name in TENSOR_CLASSES or (record.get("kind") == "function" and name.startswith("torch.")
                                      and not name.rsplit(".", 1)[-1].startswith(("is_", "get_", "set_")))


def call_at(root: Any, span: tuple[int, int]) -> Any | None:
    node = root.descendant_for_byte_range(span[0], span[1])
    while node is not None and not (node.type == "call" and node.start_byte == span[0] and node.end_byte == span[1]):
        node = node.parent
    return node
