"""Classes looked up by name on a torch module: ``getattr(nn, "Conv{}d".format(dimensions))``.

Model code that supports several dimensions or normalisations builds the class name at run
time and takes the class from ``torch.nn``. MindSpore's classes have other names and other
parameters, so the lookup cannot stay. The rule lists the names the lookup can produce and
turns it into a lookup in a dict of torch references, which means the same in torch::

    getattr(nn, class_name)   ->   {"Conv1d": nn.Conv1d, "Conv2d": nn.Conv2d, "Conv3d": nn.Conv3d}[class_name]

Each ``nn.ConvNd`` is then an ordinary class reference, converted by the reference rule
(a rename, or a torch-signature adapter where the parameters differ). The names come from
the name expression: a string literal (``getattr(nn, "Dropout2d")`` is ``nn.Dropout2d``), a
literal with ``{}`` fields filled by ``str.format`` or an f-string (each field matches any
part of a class name), or a variable of the function all of whose assignments are such
expressions, or a parameter with a string default (the names it can be given are its default
and the literal arguments passed for it in the file). Of the matching torch classes, those the
configured family converts are listed; a name outside the list raises ``KeyError`` naming it.
A lookup whose names cannot be listed goes through a table of the names whose conversion is proven,
written into the file (runtimelookups.py), or, where none can be written, is left for a human with the reason.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from kb.analysis.imports import ImportTable, is_torch_path
from kb.analysis.words import word_starts

RECORD: dict[str, Any] = {
    "torch": "getattr", "kind": "function", "namespace": "builtins", "source": "curated", "targets": [],
    "caveats": [], "torch_signature": "(obj, name, /)",
    "advice": "A class looked up by name on a torch module becomes a lookup in a dict of the classes "
              "the name can be.",
}
TITLE = "Look the class up among the torch classes the name can be"
UNLISTED = "getattr on a torch module with a name whose values cannot be listed"
FIELD = re.compile(r"\{[^{}]*\}")


def name_lookups(root: Any, source: bytes, imports: ImportTable) -> Iterable[tuple[Any, str]]:
    """``(call node, torch module path)`` of each ``getattr(<torch module>, name)`` in the source."""
    bound = {name.bound: name.target for _, name in imports.names if is_torch_path(name.target)}
    if not bound:
        return
    for at in word_starts(source, b"getattr"):
        node = root.named_descendant_for_byte_range(at, at + len(b"getattr"))
        call = node.parent if node is not None and node.type == "identifier" else None
        function = call.child_by_field_name("function") if call is not None and call.type == "call" else None
        if function is None or function.id != node.id:
            continue
        args = _arguments(call)
        if len(args) != 2 or args[0].type not in ("identifier", "attribute"):
            continue
        first, *rest = args[0].text.decode("utf-8", "replace").split(".")
        if first in bound:
            yield call, ".".join([bound[first], *rest])


def replacement(call: Any, module: str, names_below: Callable[[str], list[str]],
                converts: Callable[[str], bool]) -> str | None:
    """The dict lookup replacing ``call`` (None when the names cannot be listed)."""
    obj, name = _arguments(call)
    patterns = _patterns(name)
    if patterns is None:
        return None
    leaves = [n.rsplit(".", 1)[-1] for n in names_below(module)]
    found = sorted(leaf for leaf in set(leaves) if any(p.fullmatch(leaf) for p in patterns)
                   and converts(f"{module}.{leaf}"))
    if not found:
        return None
    receiver = obj.text.decode("utf-8", "replace")
    if name.type == "string" and len(found) == 1 and _literal(name) == found[0]:
        return f"{receiver}.{found[0]}"
    entries = ", ".join(f'"{leaf}": {receiver}.{leaf}' for leaf in found)
    return f"{{{entries}}}[{name.text.decode('utf-8', 'replace')}]"


def listed(call: Any) -> bool:
    """Whether the names the lookup can produce are listed from the code (else they are known only at run time:
    runtimelookups.py)."""
    arguments = _arguments(call)
    return len(arguments) == 2 and _patterns(arguments[1]) is not None


def _arguments(call: Any) -> list[Any]:
    arguments = call.child_by_field_name("arguments")
    return [c for c in arguments.named_children if c.type != "comment"] if arguments is not None else []


def _patterns(node: Any, seen: set[bytes] | None = None) -> list[re.Pattern] | None:
    """Regular expressions covering every value of a name expression, or None."""
    if node.type == "string":
        text = _literal(node)
        if text is not None:
            return [re.compile(re.escape(text))]
        return _fstring(node)
    if node.type == "call":  # "Conv{}d".format(n)
        function = node.child_by_field_name("function")
        if function is not None and function.type == "attribute":
            obj, attr = function.child_by_field_name("object"), function.child_by_field_name("attribute")
            text = _literal(obj) if obj is not None and obj.type == "string" else None
            if attr is not None and attr.text == b"format" and text is not None:
                return [re.compile(".+".join(re.escape(part) for part in FIELD.split(text)))]
        return None
    if node.type == "identifier":
        seen = seen or set()
        if node.text in seen:
            return []
        seen.add(node.text)
        return _variable(node, seen)
    return None


def _fstring(node: Any) -> list[re.Pattern] | None:
    parts = []
    for child in node.named_children:
        if child.type == "string_content":
            parts.append(re.escape(child.text.decode("utf-8", "replace")))
        elif child.type == "interpolation":
            parts.append(".+")
        elif child.type not in ("string_start", "string_end"):
            return None
    return [re.compile("".join(parts))] if parts else None


def _variable(node: Any, seen: set[bytes]) -> list[re.Pattern] | None:
    """Every value of a local variable or a string-defaulted parameter of the enclosing function."""
    function = node.parent
    while function is not None and function.type != "function_definition":
        function = function.parent
    if function is None:
        return None
    found: list[re.Pattern] = []
    parameter = _parameter(function, node.text)
    if parameter is not None:
        default = parameter.child_by_field_name("value")
        if default is None or default.type != "string" or _literal(default) is None:
            return None
        found.append(re.compile(re.escape(_literal(default) or "")))
        found += _passed_literals(function, node.text)
    values = _reaching(list(_assigned(function.child_by_field_name("body"), node.text)), node, function)
    if not values and parameter is None:
        return None
    for value in values:
        if value is None:
            return None
        patterns = _patterns(value, seen)
        if patterns is None:
            return None
        found += patterns
    return found


def _parameter(function: Any, name: bytes) -> Any | None:
    parameters = function.child_by_field_name("parameters")
    for parameter in parameters.named_children if parameters is not None else []:
        ident = parameter.child_by_field_name("name") if parameter.type != "identifier" else parameter
        if ident is not None and ident.text == name:
            return parameter
    return None


def _passed_literals(function: Any, name: bytes) -> list[re.Pattern]:
    """String literals passed for the parameter by keyword anywhere in the file (``activation="ELU"``)."""
    root = function
    while root.parent is not None:
        root = root.parent
    found, stack = [], [root]
    while stack:
        node = stack.pop()
        if node.type == "keyword_argument":
            key, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if key is not None and key.text == name and value is not None and value.type == "string":
                text = _literal(value)
                if text is not None:
                    found.append(re.compile(re.escape(text)))
        stack.extend(node.named_children)
    return found


def _reaching(assigned: list[tuple[Any, Any | None]], use: Any, function: Any) -> list[Any | None]:
    """The values of ``assigned`` that can reach ``use``: from the last assignment before it in a block
    that holds the use (it always runs first) on; every value when the use is in a loop."""
    blocks, node, looped = set(), use.parent, False
    while node is not None and node.id != function.id:
        blocks.add(node.id)
        looped = looped or node.type in ("for_statement", "while_statement")
        node = node.parent
    if looped:
        return [value for _, value in assigned]
    before = sorted((a for a in assigned if a[0].end_byte <= use.start_byte), key=lambda a: a[0].start_byte)
    start = 0
    for index, (node, _) in enumerate(before):
        statement = node.parent
        if statement is not None and statement.type == "expression_statement" and statement.parent is not None \
                and statement.parent.id in blocks:
            start = index  # runs on every path to the use
    return [value for _, value in before[start:]]


def _assigned(body: Any | None, name: bytes) -> Iterable[tuple[Any, Any | None]]:
    """(node, value) of the assignments to ``name`` in a function body (value None when it is no
    expression: a ``for`` target, an augmented or unpacking assignment)."""
    stack = list(body.named_children) if body is not None else []
    while stack:
        node = stack.pop()
        if node.type in ("function_definition", "class_definition", "lambda"):
            continue
        left = node.child_by_field_name("left") if node.type in (
            "assignment", "augmented_assignment", "for_statement", "for_in_clause") else None
        if left is not None and name in _bound_names(left):
            simple = node.type == "assignment" and left.type == "identifier"
            yield node, node.child_by_field_name("right") if simple else None
        stack.extend(node.named_children)


def _bound_names(left: Any) -> set[bytes]:
    if left.type == "identifier":
        return {left.text}
    return {c.text for c in left.named_children if c.type == "identifier"}


def _literal(node: Any) -> str | None:
    """The text of a plain string literal (no interpolation, no prefix but r/u), else None."""
    if node.type != "string" or any(c.type == "interpolation" for c in node.named_children):
        return None
    text = node.text.decode("utf-8", "replace")
    prefix = text[: len(text) - len(text.lstrip("rRuU"))]
    body = text[len(prefix):]
    for quote in ('"""', "'''", '"', "'"):
        if body.startswith(quote) and body.endswith(quote) and len(body) >= 2 * len(quote):
            inner = body[len(quote):-len(quote)]
            return inner if "\\" not in inner or prefix.lower() == "r" else None
    return None
