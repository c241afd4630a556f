"""Attribute renames inside ``isinstance`` branches: ``m.weight`` -> ``m.gamma`` for BatchNorm.

Weight-initialisation loops test a layer's type and then touch its parameters::

    for m in self.modules():
        if isinstance(m, nn.BatchNorm2d):
            nn.init.constant_(m.weight, 1)

In classic MindSpore a BatchNorm's ``weight`` is ``gamma``. Inside the branch the
object's layer type is known, so its parameter names follow the knowledge base's
weight rules (``data/curated/weights.yaml``: torch leaf -> MindSpore leaf per layer
class). When the branch tests several classes, a name is renamed only if every
class renames it the same way. Nothing is renamed when the name is reassigned in
the branch.
"""
from __future__ import annotations

from typing import Any, Iterable, Optional

from kb.analysis.text import TextEdit

BRANCHES = ("if_statement", "elif_clause")


def parameter_names(rules: Iterable[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """MindSpore layer class -> {torch parameter leaf: MindSpore parameter path}, from weight rules."""
    table: dict[str, dict[str, str]] = {}
    for rule in rules:
        inner = ".".join(rule.get("inner") or [])
        names = {t: (f"{inner}.{m}" if inner else m) for t, m in (rule.get("names") or {}).items() if m}
        for api in rule.get("ms") or []:
            table.setdefault(api, {}).update(names)
    return table


def branch_renames(type_sites: list[tuple[Any, str]], names: dict[str, dict[str, str]]) -> dict[int, list[TextEdit]]:
    """Renames per isinstance test, keyed by the id of its first class node.

    ``type_sites``: (class-reference node, MindSpore class it becomes) for every class
    reference in a type context.
    """
    tests: dict[int, tuple[Any, Any, list[tuple[Any, str]]]] = {}
    for node, api in type_sites:
        call = _isinstance_call(node)
        if call is None:
            continue
        branch = call.parent
        condition = branch.child_by_field_name("condition") if branch is not None else None
        if branch is None or branch.type not in BRANCHES or condition is None or condition.id != call.id:
            continue
        args = [c for c in call.child_by_field_name("arguments").named_children if c.type != "comment"]
        if len(args) != 2 or args[0].type != "identifier":
            continue
        tests.setdefault(call.id, (branch, args[0], []))[2].append((node, api))
    found: dict[int, list[TextEdit]] = {}
    for branch, subject, classes in tests.values():
        table = _common([names.get(api, {}) for _, api in classes])
        if not table or _expected_classes(subject) != len(classes):
            continue
        body = branch.child_by_field_name("consequence")
        edits = list(_renames(body, subject.text, table)) if body is not None else []
        if edits:
            found[min(classes, key=lambda c: c[0].start_byte)[0].id] = edits
    return found


def _expected_classes(subject: Any) -> int:
    """How many classes the isinstance test names (a tuple counts its items)."""
    second = subject.next_named_sibling
    while second is not None and second.type == "comment":
        second = second.next_named_sibling
    if second is None:
        return -1
    if second.type == "tuple":
        return len([c for c in second.named_children if c.type != "comment"])
    return 1


def _isinstance_call(node: Any) -> Optional[Any]:
    parent = node.parent
    if parent is not None and parent.type == "tuple":
        parent = parent.parent
    if parent is None or parent.type != "argument_list":
        return None
    call = parent.parent
    function = call.child_by_field_name("function") if call is not None else None
    return call if function is not None and function.text == b"isinstance" else None


def _common(tables: list[dict[str, str]]) -> dict[str, str]:
    """Renames every class agrees on (a class without a rule keeps its names: nothing is common)."""
    if not tables or any(not t for t in tables):
        return {}
    keys = set.intersection(*(set(t) for t in tables))
    return {k: tables[0][k] for k in keys if all(t[k] == tables[0][k] for t in tables) and tables[0][k] != k}


def _renames(body: Any, subject: bytes, table: dict[str, str]) -> Iterable[TextEdit]:
    if _assigns(body, subject):
        return
    for node in _nodes(body):
        edit = _rename(node, subject, table)
        if edit is not None:
            yield edit


def _rename(node: Any, subject: bytes, table: dict[str, str]) -> Optional[TextEdit]:
    if node.type != "attribute":
        return None
    obj, attr = node.child_by_field_name("object"), node.child_by_field_name("attribute")
    if obj is None or attr is None or obj.type != "identifier" or obj.text != subject:
        return None
    new = table.get(attr.text.decode("utf-8", "replace"))
    return TextEdit(attr.start_byte, attr.end_byte, new) if new else None


def _assigns(body: Any, subject: bytes) -> bool:
    """True when the branch binds the tested name again (then its type is unknown below)."""
    for node in _nodes(body):
        if node.type in ("assignment", "augmented_assignment", "for_statement"):
            left = node.child_by_field_name("left")
            if left is not None and any(n.type == "identifier" and n.text == subject for n in _nodes(left)):
                return True
    return False


def _nodes(node: Any) -> Iterable[Any]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.named_children)
