"""What an identifier occurrence is: a reference, a binding, or neither.

tree-sitter gives the syntax; this module reads the parent node to tell
``x`` in ``x = 1`` (a binding) from ``x`` in ``f(x)`` (a reference), ``y`` in
``obj.y`` (an attribute name, neither) or ``k`` in ``f(k=1)`` (a keyword, neither).
"""
from __future__ import annotations

from typing import Any

from kb.analysis.imports import IMPORT_TYPES

SKIP, REF, BIND, PARAM, GLOBAL, IMPORT = "skip", "ref", "bind", "param", "global", "import"
_PATTERNS = frozenset({
    "pattern_list", "tuple_pattern", "list_pattern", "list_splat_pattern", "dictionary_splat_pattern",
    "tuple", "list", "parenthesized_expression", "expression_list",
})
_PARAM_OWNERS = frozenset({"parameters", "lambda_parameters"})
_PARAM_WRAPPERS = frozenset({"default_parameter", "typed_default_parameter", "typed_parameter"})


def _same(a: Any | None, b: Any) -> bool:
    return a is not None and a.start_byte == b.start_byte and a.end_byte == b.end_byte


def role(node: Any, parent: Any = False) -> tuple[str, Any]:
    """(role, owner): owner is the assignment, loop, comprehension or function involved.

    ``parent`` may be given when the caller already has ``node.parent`` (it is not free).
    """
    if parent is False:
        parent = node.parent
    if parent is None:
        return SKIP, None
    kind = parent.type
    if kind == "attribute":
        return (SKIP, None) if node.end_byte == parent.end_byte else (REF, None)
    if kind == "keyword_argument":
        return (SKIP, None) if node.start_byte == parent.start_byte else (REF, None)
    if kind in ("dotted_name", "aliased_import") or kind in IMPORT_TYPES:
        return IMPORT, None
    if kind in ("global_statement", "nonlocal_statement"):
        return GLOBAL, parent
    if kind in ("function_definition", "class_definition"):
        return (BIND, parent) if _same(parent.child_by_field_name("name"), node) else (REF, None)
    if kind == "named_expression":
        return (BIND, parent) if _same(parent.child_by_field_name("name"), node) else (REF, None)
    if kind in _PARAM_OWNERS:
        return PARAM, parent.parent
    if kind in _PARAM_WRAPPERS:
        first = parent.child_by_field_name("name") or (parent.named_children[0] if parent.named_children else None)
        if _same(first, node):
            owner = parent.parent
            return (PARAM, owner.parent) if owner is not None and owner.type in _PARAM_OWNERS else (SKIP, None)
        return REF, None
    # Climb through tuple/list patterns to the construct that binds them.
    child, owner = node, parent
    while owner is not None and owner.type in _PATTERNS:
        child, owner = owner, owner.parent
    if owner is None:
        return REF, None
    kind = owner.type
    if kind in ("assignment", "augmented_assignment", "for_statement", "for_in_clause"):
        return (BIND, owner) if _same(owner.child_by_field_name("left"), child) else (REF, None)
    if kind == "as_pattern_target":
        return BIND, owner
    if kind in _PARAM_OWNERS:
        return PARAM, owner.parent
    if kind in _PARAM_WRAPPERS and child is not node:
        params = owner.parent
        return (PARAM, params.parent) if params is not None and params.type in _PARAM_OWNERS else (SKIP, None)
    return REF, None
