"""Feature tests on torch: ``hasattr(torch, 'compiler')``, ``hasattr(F, 'scaled_dot_product_attention')``.

Code that tests whether the installed torch has a feature keeps a plain path for when it does
not. After migration there is no torch to test, so the test is ``False`` and the code takes
that plain path, which the rest of the conversion handles. Only tests whose object is a torch
module reached through a torch import are rewritten, in three spellings:

- ``hasattr(<torch module>, name)`` -> ``False``;
- ``name in dir(<torch module>)`` -> ``False`` (``not in`` -> ``True``);
- ``getattr(<torch module>, name, default)`` -> ``default`` (the attribute is absent).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kb.analysis.imports import ImportTable, is_torch_path
from kb.analysis.words import word_starts

RECORD: dict[str, Any] = {
    "torch": "hasattr", "kind": "function", "namespace": "builtins", "source": "curated", "targets": [],
    "caveats": [], "torch_signature": "(obj, name, /)",
    "advice": "A feature test on torch is False after migration: the code takes its plain path.",
}
TITLE = "Replace the torch feature test with its answer without torch (the attribute is absent)"


PRIMARY = frozenset({"identifier", "attribute", "call", "subscript", "parenthesized_expression", "string",
                     "integer", "float", "none", "true", "false", "list", "tuple", "dictionary"})


def _calls(root: Any, source: bytes, function_name: bytes, bound: set[str], count: int) -> Iterable[tuple[Any, list]]:
    """``function_name(<torch module>, ...)`` calls with ``count`` arguments, and their arguments."""
    for at in word_starts(source, function_name):
        node = root.named_descendant_for_byte_range(at, at + len(function_name))
        call = node.parent if node is not None and node.type == "identifier" else None
        function = call.child_by_field_name("function") if call is not None and call.type == "call" else None
        if call is None or function is None or node is None or function.id != node.id:
            continue
        arguments = call.child_by_field_name("arguments")
        args = [c for c in arguments.named_children if c.type != "comment"] if arguments is not None else []
        if len(args) != count or args[0].type not in ("identifier", "attribute"):
            continue
        root_name = args[0].text.split(b".")[0].decode("utf-8", "replace")
        if root_name in bound:
            yield call, args


def feature_tests(root: Any, source: bytes, imports: ImportTable) -> Iterable[tuple[Any, str]]:
    """(node, the text replacing it) for each feature test on torch in the source."""
    bound = {name.bound for _, name in imports.names if is_torch_path(name.target)}
    if not bound:
        return
    for call, _ in _calls(root, source, b"hasattr", bound, 2):
        yield call, "False"
    for call, _ in _calls(root, source, b"dir", bound, 1):
        test = call.parent
        operands = [c for c in test.named_children if c.type != "comment"] if test is not None else []
        operators = [c.type for c in test.children if not c.is_named] if test is not None else []
        if test is None or test.type != "comparison_operator" or len(operands) != 2 or operands[1].id != call.id:
            continue
        if operators == ["in"]:
            yield test, "False"
        elif operators == ["not in"] or operators == ["not", "in"]:
            yield test, "True"
    for call, args in _calls(root, source, b"getattr", bound, 3):
        default = args[2]
        text = default.text.decode("utf-8", "surrogateescape")
        yield call, text if default.type in PRIMARY else f"({text})"
