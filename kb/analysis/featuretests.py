"""Feature tests on torch: ``hasattr(torch, 'compiler')``, ``hasattr(F, 'scaled_dot_product_attention')``.

Code that tests whether the installed torch has a feature keeps a plain path for when it does
not. After migration there is no torch to test: the test is answered for the converted code.
When the tested attribute is named by a string and the knowledge base converts it to a
MindSpore API in the configured family (``hasattr(nn, 'SiLU')``: ``mindspore.nn.SiLU``), the
feature is there after migration and the test is ``True``; otherwise (no equivalent, an unknown
name) it is ``False`` and the code takes its plain path, which the rest of the conversion handles.
A ``hasattr`` whose name is computed (``hasattr(F, activation_fn)``) on a module with a table of
lookups by a name known only at run time (runtimelookups.py: the names whose conversion is proven)
is answered when the code runs, by the name's membership in that table: ``activation_fn in
("relu", "gelu", ...)``, so a later ``getattr(F, activation_fn)`` finds what the test promised. Only tests whose object
is a torch module reached through a torch import are rewritten, in three spellings:

- ``hasattr(<torch module>, name)`` -> ``True`` / ``False``;
- ``name in dir(<torch module>)`` -> ``True`` / ``False`` (``not in``: the opposite);
- ``getattr(<torch module>, name, default)`` -> the MindSpore API (``ms.nn.SiLU``) / ``default``.
"""
from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import Any

from kb.analysis.imports import ImportTable, is_torch_path
from kb.analysis.words import word_starts

RECORD: dict[str, Any] = {
    "torch": "hasattr(<torch module>, name)", "kind": "pattern", "namespace": "builtins", "source": "curated",
    "targets": [], "caveats": [], "torch_signature": "(obj, name, /)",
    "advice": "A feature test on torch is answered for the converted code: True when the attribute converts "
              "to a MindSpore API in the configured family, else False (the code takes its plain path).",
}
TITLE = "Replace the torch feature test with its answer without torch (the attribute is absent)"

# torch name (``torch.nn.SiLU``) -> the MindSpore API it converts to in the configured family, or None
Converts = Callable[[str], "str | None"]


RUNTIME_TITLE = "Answer the feature test when the code runs: is the name among those msmap converts"

# torch module (``torch.nn.functional``) -> the names its table of run-time lookups holds (runtimelookups.py)
Table = Callable[[str], "list[str]"]


def present_title(torch_name: str, api: str) -> str:
    return f"Replace the torch feature test with its answer after migration ({torch_name} converts to {api})"


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


def _tested(module: Any, name: Any, targets: dict[str, str]) -> str | None:
    """The torch name a test asks about (``nn`` + ``'SiLU'`` -> ``torch.nn.SiLU``), when the name
    is a plain string; None for a computed one."""
    if name is None or name.type != "string":
        return None
    try:
        attr = ast.literal_eval(name.text.decode("utf-8", "surrogateescape"))
    except (SyntaxError, ValueError):
        return None
    parts = module.text.decode("utf-8", "replace").split(".")
    base = targets.get(parts[0])
    if not isinstance(attr, str) or not attr.isidentifier() or base is None:
        return None
    return ".".join([base, *parts[1:], attr])


def _membership(module: Any, name: Any, targets: dict[str, str], table: Table) -> str | None:
    """``name in ("relu", ...)`` for a computed name on a module whose run-time lookup table holds names;
    None otherwise (a string name, no table)."""
    if name is None or name.type in ("string", "concatenated_string"):
        return None
    parts = module.text.decode("utf-8", "replace").split(".")
    base = targets.get(parts[0])
    names = table(".".join([base, *parts[1:]])) if base is not None else []
    if not names:
        return None
    text = name.text.decode("utf-8", "surrogateescape")
    listed = ", ".join(f'"{n}"' for n in names) + ("," if len(names) == 1 else "")
    return f"{text if name.type in PRIMARY else f'({text})'} in ({listed})"


def feature_tests(root: Any, source: bytes, imports: ImportTable, converts: Converts = lambda name: None,
                  table: Table = lambda module: []) -> Iterable[tuple[Any, str, str | None, str | None]]:
    """(node, the text replacing it, the torch name tested, the MindSpore API it converts to) for
    each feature test on torch in the source; ``converts`` answers for a torch name (the last two
    are None for a test the converted code cannot pass), ``table`` gives a module's run-time lookup
    names (a computed ``hasattr`` name tested against them has ``<name>`` as its tested leaf)."""
    targets = {name.bound: name.target for _, name in imports.names if name.target and is_torch_path(name.target)}
    if not targets:
        return
    bound = set(targets)

    def answer(args: list) -> tuple[str | None, str | None]:
        tested = _tested(args[0], args[1] if len(args) > 1 else None, targets)
        return tested, converts(tested) if tested else None

    for call, args in _calls(root, source, b"hasattr", bound, 2):
        membership = _membership(args[0], args[1], targets, table)
        if membership is not None:
            parts = args[0].text.decode("utf-8", "replace").split(".")
            yield call, membership, ".".join([targets[parts[0]], *parts[1:], "<name>"]), None
            continue
        tested, api = answer(args)
        yield call, "True" if api else "False", tested, api
    for call, args in _calls(root, source, b"dir", bound, 1):
        test = call.parent
        operands = [c for c in test.named_children if c.type != "comment"] if test is not None else []
        operators = [c.type for c in test.children if not c.is_named] if test is not None else []
        if test is None or test.type != "comparison_operator" or len(operands) != 2 or operands[1].id != call.id:
            continue
        tested, api = answer([args[0], operands[0]])
        if operators == ["in"]:
            yield test, "True" if api else "False", tested, api
        elif operators == ["not in"] or operators == ["not", "in"]:
            yield test, "False" if api else "True", tested, api
    for call, args in _calls(root, source, b"getattr", bound, 3):
        tested, api = answer(args)
        if api:
            yield call, api, tested, api  # (the caller spells the API through the file's alias)
            continue
        default = args[2]
        text = default.text.decode("utf-8", "surrogateescape")
        yield call, text if default.type in PRIMARY else f"({text})", None, None
