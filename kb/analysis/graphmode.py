"""What GRAPH_MODE compiles of a file: the functions a module's ``forward`` reaches, and the names each binds.

MindSpore users train and deploy with ``mindspore.set_context(mode=mindspore.GRAPH_MODE)``: a Cell's
``construct`` (torch's ``forward``) and every function it calls are compiled from their source by the graph
compiler, which refuses some Python PyNative runs (a ``map`` whose function closes over a local, a name bound
in one branch of an ``if`` only). The rules that rewrite those idioms (rules/graph_*.py) touch only code the
compiler reads: this module says which.

A function is compiled when it is a ``forward``/``construct`` method of a class of the file, or is called from
a compiled function as ``self.name(...)``/``super().name(...)`` (a method of its class or of a base class of
the file), ``Class.name(...)`` (a method of a class of the file) or ``name(...)`` (a function defined in the
file, at module level or nested in the caller). Functions nested in a compiled function are compiled too.
Calls into other files are not followed.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from kb.analysis.roles import BIND, PARAM, REF, role

FORWARDS = (b"forward", b"construct")
SCOPES = ("function_definition", "class_definition", "lambda")  # nodes that open a scope of their own


def compiled_functions(root: Any) -> list[Any]:
    """The ``function_definition`` nodes GRAPH_MODE compiles from a module's forward, in source order."""
    functions: dict[bytes, Any] = {}  # module-level functions by name
    classes: dict[bytes, Any] = {}  # classes by name
    for node in _definitions(root):
        if node.type == "class_definition":
            classes[node.child_by_field_name("name").text] = node
        else:
            functions[node.child_by_field_name("name").text] = node
    pending = [m for cls in classes.values() for name, m in _methods(cls).items() if name in FORWARDS]
    seen: dict[int, Any] = {}
    while pending:
        function = pending.pop()
        if function.id in seen:
            continue
        seen[function.id] = function
        nested = {}
        for node in _walk(function.child_by_field_name("body"), into_scopes=True):
            if node.type == "function_definition":
                nested[node.child_by_field_name("name").text] = node
                pending.append(node)
        cls = _owner_class(function)
        for call in _walk(function.child_by_field_name("body"), into_scopes=True):
            if call.type == "call":
                pending += _callees(call.child_by_field_name("function"), cls, classes, functions, nested)
    return sorted(seen.values(), key=lambda f: f.start_byte)


def own_nodes(function: Any) -> Iterator[Any]:
    """Every node of ``function``'s body that belongs to its own scope (not to a nested function, class or
    lambda, whose headers are still its own)."""
    yield from _walk(function.child_by_field_name("body"), into_scopes=False)


def local_names(function: Any) -> set[bytes]:
    """The names ``function`` binds: its parameters and every name its own scope assigns, loops over, imports,
    defines or binds with ``as`` (names declared global or nonlocal are not its own)."""
    names = parameter_names(function)
    declared: set[bytes] = set()
    for node in own_nodes(function):
        if node.type in ("global_statement", "nonlocal_statement"):
            declared |= {c.text for c in node.named_children if c.type == "identifier"}
        elif node.type == "identifier" and role(node)[0] == BIND and _binds_here(node, function):
            names.add(node.text)
        elif node.type in ("function_definition", "class_definition"):
            names.add(node.child_by_field_name("name").text)
    return names - declared


def parameter_names(function: Any) -> set[bytes]:
    return {node.text for node in _walk(function.child_by_field_name("parameters"), into_scopes=False)
            if node.type == "identifier" and role(node)[0] == PARAM}


def reads(node: Any) -> Iterator[Any]:
    """The identifiers ``node`` reads (names, not attribute names or keywords), nested scopes included."""
    for current in _walk(node, into_scopes=True):
        if current.type == "identifier" and role(current)[0] == REF:
            yield current


def _binds_here(node: Any, function: Any) -> bool:
    """A comprehension's loop variable is the comprehension's, not the function's."""
    parent = node.parent
    while parent is not None and parent.id != function.id:
        if parent.type == "for_in_clause":
            return False
        parent = parent.parent
    return True


def _definitions(root: Any) -> Iterator[Any]:
    """Classes and functions at module level (also under a module-level ``if``/``try``/decorator)."""
    stack = list(reversed(root.named_children))
    while stack:
        node = stack.pop()
        if node.type in ("class_definition", "function_definition"):
            yield node
        elif node.type in ("decorated_definition", "if_statement", "try_statement", "block", "else_clause",
                           "elif_clause", "except_clause", "finally_clause"):
            stack.extend(reversed(node.named_children))


def _methods(cls: Any) -> dict[bytes, Any]:
    found = {}
    for node in cls.child_by_field_name("body").named_children:
        if node.type == "decorated_definition":
            node = node.child_by_field_name("definition")
        if node is not None and node.type == "function_definition":
            found[node.child_by_field_name("name").text] = node
    return found


def _owner_class(function: Any) -> Any | None:
    """The class ``function`` is a method of (through any nested functions), else None."""
    node = function.parent
    while node is not None and node.type != "class_definition":
        node = node.parent
    return node


def _lineage(cls: Any, classes: dict[bytes, Any]) -> Iterator[Any]:
    """``cls`` and the classes of the file it derives from, nearest first."""
    seen, queue = set(), [cls]
    while queue:
        current = queue.pop(0)
        if current.id in seen:
            continue
        seen.add(current.id)
        yield current
        bases = current.child_by_field_name("superclasses")
        queue += [classes[b.text] for b in (bases.named_children if bases is not None else ())
                  if b.type == "identifier" and b.text in classes]


def _callees(callee: Any, cls: Any | None, classes: dict[bytes, Any], functions: dict[bytes, Any],
             nested: dict[bytes, Any]) -> list[Any]:
    if callee is None:
        return []
    if callee.type == "identifier":
        found = nested.get(callee.text) or functions.get(callee.text)
        return [found] if found is not None else []
    if callee.type != "attribute":
        return []
    held, name = callee.child_by_field_name("object"), callee.child_by_field_name("attribute").text
    if held.type == "identifier" and held.text in classes:
        owners: Iterable[Any] = _lineage(classes[held.text], classes)
    elif cls is not None and (held.text == b"self" or (held.type == "call" and held.text.startswith(b"super("))):
        owners = _lineage(cls, classes)
    else:
        return []
    for owner in owners:
        method = _methods(owner).get(name)
        if method is not None:
            return [method]
    return []


def _walk(node: Any | None, into_scopes: bool) -> Iterator[Any]:
    """``node`` and its named descendants in source order; a nested scope's body only ``into_scopes``."""
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        yield current
        if not into_scopes and current is not node and current.type in SCOPES:
            # a nested function's name, parameters' defaults and decorators are read here; its body is not
            children = [c for c in current.named_children if c.type not in ("block",)]
            if current.type == "lambda":
                children = [c for c in current.named_children if c.type == "lambda_parameters"]
            stack.extend(reversed(children))
            continue
        stack.extend(reversed(current.named_children))
