"""Feature tests on torch: ``hasattr(torch, 'compiler')``, ``hasattr(F, 'scaled_dot_product_attention')``.

Code that tests whether the installed torch has a feature keeps a plain path for when it does
not. After migration there is no torch to test, so the test is ``False`` and the code takes
that plain path, which the rest of the conversion handles. Only ``hasattr`` calls whose first
argument is a torch module reached through a torch import are rewritten.
"""
from __future__ import annotations

from typing import Any, Iterable

from kb.analysis.imports import ImportTable, is_torch_path
from kb.analysis.words import word_starts

RECORD = {
    "torch": "hasattr", "kind": "function", "namespace": "builtins", "source": "curated", "targets": [],
    "caveats": [], "torch_signature": "(obj, name, /)",
    "advice": "A feature test on torch is False after migration: the code takes its plain path.",
}
TITLE = "Replace the torch feature test with False"


def feature_tests(root: Any, source: bytes, imports: ImportTable) -> Iterable[Any]:
    """The ``hasattr(<torch module>, ...)`` call nodes of the source."""
    bound = {name.bound for _, name in imports.names if is_torch_path(name.target)}
    if not bound:
        return
    for at in word_starts(source, b"hasattr"):
        node = root.named_descendant_for_byte_range(at, at + len(b"hasattr"))
        call = node.parent if node is not None and node.type == "identifier" else None
        function = call.child_by_field_name("function") if call is not None and call.type == "call" else None
        if function is None or function.id != node.id:
            continue
        arguments = call.child_by_field_name("arguments")
        args = [c for c in arguments.named_children if c.type != "comment"] if arguments is not None else []
        if len(args) != 2 or args[0].type not in ("identifier", "attribute"):
            continue
        root_name = args[0].text.split(b".")[0].decode("utf-8", "replace")
        if root_name in bound:
            yield call
