"""Guarded torch imports: ``try: from torch import X`` / ``except ImportError: <fallback>``.

Code written for several torch versions imports a feature inside ``try`` and says what to do
when the import fails. After migration there is no torch, so the statement is settled the way
it would run without torch (the same reasoning as ``featuretests.py``):

- a fallback that provides the imported names itself (``def _assert(...)``, ``class X``,
  ``name = <something other than None>``, an import from a non-torch package) is what runs: the
  ``try`` statement becomes the handler's body, which the other rules then convert;
- a fallback that only imports from another torch package (``from functorch import vmap``) has
  nothing to offer: the ``try`` statement becomes its own body, and the torch import is then
  converted (or left for a human) like any other;
- otherwise (``try: import torch`` / ``except ImportError: torch = None``: torch is optional, and
  its uses convert) the statement stays as it is.

Only a ``try`` whose body starts with torch imports, with one handler catching
``ImportError`` (or ``ModuleNotFoundError``, ``Exception``, or everything) and no ``else`` or
``finally``, is settled. Without torch the first import raises and the rest of the body never runs
(asteroid-filterbanks: ``from torch import rfft, irfft`` then ``def conj``, names torch 2 no longer
has), so a fallback that provides the imported names replaces it whatever follows them; giving way
to the body is only for a body of imports alone.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kb.analysis.arguments import Blocked
from kb.analysis.imports import ROOTS, ImportTable, is_torch_path
from kb.analysis.templates import unwrap_block
from kb.analysis.text import TextEdit
from kb.analysis.words import word_starts

CATCHES = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
# packages that do not import without torch: the engine's roots but einops (pure Python, it imports anywhere)
TORCH_PACKAGES = ROOTS - {"einops"}
IMPORTS = ("import_statement", "import_from_statement")
TITLE = "Settle the guarded torch import as it runs without torch"
RECORD: dict[str, Any] = {
    "torch": "try: import torch ... except ImportError", "kind": "pattern", "namespace": "builtins",
    "source": "curated", "targets": [], "caveats": [], "torch_signature": None,
    "advice": "A guarded torch import fails without torch: its fallback is what runs after migration.",
}


def _statements(block: Any) -> list[Any]:
    return [c for c in block.named_children if c.type != "comment"]


def _torch_package_import(statement: Any) -> bool:
    """``import functorch`` / ``from torch.func import vmap``: an import from a torch package."""
    if statement.type not in IMPORTS:
        return False
    if statement.type == "import_from_statement":
        module = statement.child_by_field_name("module_name")
        names = [module] if module is not None else []
    else:
        names = [n.child_by_field_name("name") or n for n in statement.children_by_field_name("name")]
    return bool(names) and all(n is not None and n.text.split(b".")[0].decode("utf-8", "replace")
                               in TORCH_PACKAGES for n in names)


def _catches_import_error(clause: Any) -> bool:
    caught = [c for c in clause.named_children if c.type not in ("block", "comment")]
    if not caught:
        return True  # a bare except
    value = caught[0]
    if value.type == "as_pattern":
        value = value.named_children[0]
    names = value.named_children if value.type in ("tuple", "parenthesized_expression") else [value]
    return any(n.text.decode("utf-8", "replace") in CATCHES for n in names)


def _provided(statements: list[Any]) -> set[str]:
    """Names the statements bind to something usable: definitions, assignments of anything but
    ``None``, imports from packages other than torch's."""
    names: set[str] = set()
    for statement in statements:
        if statement.type in ("function_definition", "class_definition"):
            names.add(statement.child_by_field_name("name").text.decode("utf-8", "replace"))
        elif statement.type == "decorated_definition":
            names |= _provided([statement.child_by_field_name("definition")])
        elif statement.type == "expression_statement" and statement.named_children \
                and statement.named_children[0].type == "assignment":
            assignment = statement.named_children[0]
            left, right = assignment.child_by_field_name("left"), assignment.child_by_field_name("right")
            if left is not None and left.type == "identifier" and right is not None and right.type != "none":
                names.add(left.text.decode("utf-8", "replace"))
        elif statement.type in IMPORTS and not _torch_package_import(statement):
            for name in statement.children_by_field_name("name"):
                alias = name.child_by_field_name("alias") if name.type == "aliased_import" else None
                bound = alias if alias is not None else name
                names.add(bound.text.split(b".")[0].decode("utf-8", "replace"))
    return names


def _fails_without_torch(statement: Any, imports: ImportTable) -> bool:
    """An import statement of torch packages only (``from torch import rfft``): without torch it raises ImportError."""
    return statement.type in IMPORTS and statement.start_byte in imports.by_statement \
        and all(is_torch_path(n.target) and n.target.partition(".")[0] in TORCH_PACKAGES
                for n in imports.by_statement[statement.start_byte])


def guarded_imports(root: Any, source: bytes, imports: ImportTable) -> Iterable[tuple[Any, TextEdit]]:
    """(try statement, its replacement) for each guarded torch import of the source."""
    if not any(is_torch_path(name.target) for _, name in imports.names):
        return
    seen: set[int] = set()
    for at in word_starts(source, b"try"):
        node = root.named_descendant_for_byte_range(at, at + 3)
        statement = node if node is not None and node.type == "try_statement" else \
            node.parent if node is not None and node.parent is not None and node.parent.type == "try_statement" \
            else None
        if statement is None or statement.start_byte != at or statement.id in seen:
            continue
        seen.add(statement.id)
        body = statement.child_by_field_name("body")
        clauses = [c for c in statement.named_children if c.type not in ("block", "comment")]
        if body is None or len(clauses) != 1 or clauses[0].type != "except_clause" \
                or not _catches_import_error(clauses[0]):
            continue
        tried = _statements(body)
        leading = 0  # the torch imports the body starts with: without torch the first raises, the rest never runs
        while leading < len(tried) and _fails_without_torch(tried[leading], imports):
            leading += 1
        if not leading:
            continue
        handler = next((c for c in clauses[0].named_children if c.type == "block"), None)
        if handler is None:
            continue
        fallback = _statements(handler)
        bound = {n.bound for s in tried[:leading] for n in imports.by_statement[s.start_byte]}
        if bound <= _provided(fallback):
            keep = handler
        elif fallback and leading == len(tried) and all(_torch_package_import(s) for s in fallback):
            keep = body
        else:
            continue
        try:
            kept = unwrap_block(statement, keep, source)
        except Blocked:  # a block that cannot be dedented safely stays as it is
            continue
        yield statement, TextEdit(kept.start, statement.end_byte, kept.new_text)  # the handler goes too
