"""The calls of a file's own functions, read from the tree: who passes what to which parameter.

``helper(x, 2.0)`` in a ``forward`` whose ``x`` is a tensor makes ``helper``'s first parameter a tensor when
every call of ``helper`` in the file passes one there (``tensors.py`` asks, per function, for the parameters
that hold: ``CallSites.parameters``). What counts as a call, conservatively:

- a function defined at the top level of the module, called by its name; any other mention of the name
  (passed as a value, imported, rebound, defined twice) means callers the file does not show: no knowledge;
- a method defined in a top-level class body, called as ``self.<name>(...)`` inside that class; a mention of
  ``.<name>`` anywhere else (``model.helper(a)``, a subclass, ``Class.helper``) means other callers: none;
- a call with ``*args`` or ``**kwargs`` says nothing about positions; a parameter a call leaves to its
  default holds the default there (not a tensor), so it is known only where every call passes it.

The names are looked up once, as words of the source (``CallSites(root, source)``); ``parameters`` maps the
arguments through the caller's own knowledge (``is_tensor(argument)``), which may itself come from its callers:
``tensors.py`` iterates to the least fixed point, a few rounds deep at most.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kb.analysis.words import word_starts

PARAMETER_TYPES = ("identifier", "default_parameter", "typed_parameter", "typed_default_parameter")
SPLATS = ("list_splat", "dictionary_splat")


class CallSites:
    """The file's own functions and methods with every call of each, or none known (``escaped``)."""

    def __init__(self, root: Any, source: bytes) -> None:
        self.functions: dict[int, Any] = {}  # function id -> definition node
        self.calls: dict[int, list[tuple[Any, int]]] = {}  # function id -> [(call node, parameters skipped)]
        self.callees: dict[int, set[int]] = {}  # function id -> the ids of the functions it calls (of those here)
        names: dict[bytes, Any | None] = {}  # top-level function name -> definition (None: defined twice)
        methods: dict[bytes, list[tuple[Any, Any]]] = {}  # method name -> [(class, definition)]
        for node in root.named_children:
            definition = _definition(node)
            if definition is None:
                continue
            name = definition.child_by_field_name("name")
            if definition.type == "function_definition" and name is not None:
                names[name.text] = None if name.text in names else definition
            elif definition.type == "class_definition":
                for member in _members(definition):
                    member_name = member.child_by_field_name("name")
                    if member_name is not None:
                        methods.setdefault(member_name.text, []).append((definition, member))
        escaped: set[int] = set()
        for definition in [d for d in names.values() if d is not None] + [m for ms in methods.values() for _, m in ms]:
            self.functions[definition.id] = definition
            self.calls[definition.id] = []
        for word in set(names) | set(methods):
            for at in word_starts(source, word):
                node = root.named_descendant_for_byte_range(at, at + len(word))
                if node is None or node.type != "identifier" or node.start_byte != at:
                    continue  # (a string, a comment)
                parent = node.parent
                if parent is not None and parent.type == "attribute" \
                        and _same(parent.child_by_field_name("attribute"), node):
                    if word in methods:
                        self._method(parent, methods[word], escaped)
                elif word in names:
                    self._name(node, names[word], escaped)
        for key in escaped:
            self.calls.pop(key, None)
        for key, calls in self.calls.items():
            for call, _ in calls:
                caller = _enclosing(call, "function_definition")
                if caller is not None:
                    self.callees.setdefault(caller.id, set()).add(key)

    def _name(self, node: Any, definition: Any | None, escaped: set[int]) -> None:
        if definition is None:
            return
        parent = node.parent
        if parent is not None and parent.id == definition.id:
            return  # the definition's own name
        if parent is not None and parent.type == "call" and _same(parent.child_by_field_name("function"), node):
            self.calls[definition.id].append((parent, 0))
        else:
            escaped.add(definition.id)

    def _method(self, node: Any, owners: list[tuple[Any, Any]], escaped: set[int]) -> None:
        obj, call = node.child_by_field_name("object"), node.parent
        owner = _enclosing(node, "class_definition")
        called = obj is not None and obj.type == "identifier" and obj.text == b"self" and call is not None \
            and call.type == "call" and _same(call.child_by_field_name("function"), node)
        for cls, definition in owners:
            if called and owner is not None and owner.id == cls.id and definition.id in self.calls:
                self.calls[definition.id].append((call, 0 if _static(definition) else 1))
            else:
                escaped.add(definition.id)

    def parameters(self, function: Any, is_tensor: Callable[[Any], bool]) -> set[bytes]:
        """The parameters of ``function`` every call in the file passes a tensor to (by ``is_tensor``)."""
        calls = self.calls.get(function.id)
        if not calls:
            return set()
        known: set[bytes] | None = None
        for call, skipped in calls:
            passed = _passed(function, call, skipped)
            if passed is None:
                return set()
            here = {name for name, value in passed.items() if is_tensor(value)}
            known = here if known is None else known & here
            if not known:
                return set()
        return known or set()


def _passed(function: Any, call: Any, skipped: int) -> dict[bytes, Any] | None:
    """Parameter name -> the argument a call passes it (None: a splat, or an argument with no parameter)."""
    parameters = function.child_by_field_name("parameters")
    arguments = call.child_by_field_name("arguments")
    if parameters is None or arguments is None or arguments.type != "argument_list":
        return None
    names, positional = [], True
    for parameter in parameters.named_children:
        if parameter.type in ("list_splat_pattern", "dictionary_splat_pattern", "keyword_separator"):
            positional = False
        if parameter.type in PARAMETER_TYPES:
            ident = parameter if parameter.type == "identifier" else (
                parameter.child_by_field_name("name")
                or next((c for c in parameter.named_children if c.type == "identifier"), None))
            if ident is not None:
                names.append((ident.text, positional))
    names = names[skipped:]
    passed: dict[bytes, Any] = {}
    index = 0
    for argument in arguments.named_children:
        if argument.type == "comment":
            continue
        if argument.type in SPLATS or argument.type == "parenthesized_list_splat":
            return None
        if argument.type == "keyword_argument":
            name, value = argument.child_by_field_name("name"), argument.child_by_field_name("value")
            if name is None or value is None:
                return None
            passed[name.text] = value
            continue
        if index >= len(names) or not names[index][1]:
            return None
        passed[names[index][0]] = argument
        index += 1
    return passed


def _definition(node: Any) -> Any | None:
    if node.type == "decorated_definition":
        return node.child_by_field_name("definition")
    return node if node.type in ("function_definition", "class_definition") else None


def _members(cls: Any) -> Iterable[Any]:
    body = cls.child_by_field_name("body")
    for node in body.named_children if body is not None else ():
        definition = _definition(node)
        if definition is not None and definition.type == "function_definition":
            yield definition


def _static(definition: Any) -> bool:
    parent = definition.parent
    return parent is not None and parent.type == "decorated_definition" and any(
        d.type == "decorator" and d.text.strip() == b"@staticmethod" for d in parent.named_children)


def _same(a: Any | None, b: Any) -> bool:
    return a is not None and a.id == b.id


def _enclosing(node: Any, kind: str) -> Any | None:
    parent = node.parent
    while parent is not None and parent.type != kind:
        parent = parent.parent
    return parent
