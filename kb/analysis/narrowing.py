"""Attribute renames inside ``isinstance`` branches: ``m.weight`` -> ``m.gamma`` for BatchNorm.

Weight-initialisation loops test a layer's type and then touch its parameters::

    for m in self.modules():
        if isinstance(m, nn.BatchNorm2d):
            nn.init.constant_(m.weight, 1)

In classic MindSpore a BatchNorm's ``weight`` is ``gamma``. Inside the branch the
object's layer type is known, so its parameter names follow the knowledge base's
weight rules (``data/curated/weights.yaml``: torch leaf -> MindSpore leaf per layer
class), and so do its other attributes (a classic Dense keeps ``out_features`` as
``out_channels``). When the branch tests several classes, a name is renamed only if every
class renames it the same way. Nothing is renamed when the name is reassigned in
the branch.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kb.analysis.text import TextEdit

BRANCHES = ("if_statement", "elif_clause")


def parameter_names(rules: Iterable[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """MindSpore layer class -> {torch attribute: MindSpore attribute}, from weight rules.

    A rule's parameter names (``weight`` -> ``gamma``, under its inner cell) and its other
    attributes (``out_features`` -> ``out_channels``) both count.
    """
    table: dict[str, dict[str, str]] = {}
    for rule in rules:
        inner = ".".join(rule.get("inner") or [])
        names = {t: (f"{inner}.{m}" if inner else m) for t, m in (rule.get("names") or {}).items() if m}
        names.update(rule.get("attributes") or {})
        for api in rule.get("ms") or []:
            table.setdefault(api, {}).update(names)
    return table


def branch_renames(type_sites: list[tuple[Any, str, str]],
                   names: dict[str, dict[str, str]]) -> dict[int, tuple[tuple[int, int], list[TextEdit]]]:
    """(the branch's bytes, its renames) per class node of an isinstance test whose classes rename
    some attribute, keyed by the node's id: the first class of the test carries the renames, the
    others none (the branch's bytes decide them all: an edit there computes them again).

    ``type_sites``: (class-reference node, MindSpore class it becomes, that class as written)
    for every class reference in a type context. When the classes of one test disagree
    (classic BatchNorm's ``gamma`` beside mint GroupNorm's ``weight``), the attribute becomes
    a conditional on the class: ``(m.gamma if isinstance(m, ms.nn.BatchNorm2d) else m.weight)``.
    """
    tests: dict[int, tuple[Any, Any, list[tuple[Any, str, str]]]] = {}
    for node, api, written in type_sites:
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
        tests.setdefault(call.id, (branch, args[0], []))[2].append((node, api, written))
    found: dict[int, tuple[tuple[int, int], list[TextEdit]]] = {}
    for branch, subject, classes in tests.values():
        leaves = _leaves([(names.get(api, {}), written) for _, api, written in classes])
        if not leaves:
            continue  # (nothing to rename, whatever the branch holds)
        body = branch.child_by_field_name("consequence")
        reach = (branch.start_byte, (body if body is not None else subject.parent).end_byte)
        edits = [] if body is None or _expected_classes(subject) != len(classes) else \
            list(_renames(body, subject.text.decode("utf-8", "replace"), leaves))
        first = min(classes, key=lambda c: c[0].start_byte)[0]
        for node, _, _ in classes:
            found[node.id] = (reach, edits if node.id == first.id else [])
    return found


def _leaves(classes: list[tuple[dict[str, str], str]]) -> dict[str, list[tuple[str, list[str]]]]:
    """torch leaf -> [(MindSpore leaf, classes written that use it)], for leaves some class renames."""
    renamed = {leaf for table, _ in classes for leaf, new in table.items() if new != leaf}
    out = {}
    for leaf in renamed:
        groups: dict[str, list[str]] = {}
        for table, written in classes:
            groups.setdefault(table.get(leaf, leaf), []).append(written)
        out[leaf] = list(groups.items())
    return out


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


def _isinstance_call(node: Any) -> Any | None:
    parent = node.parent
    if parent is not None and parent.type == "tuple":
        parent = parent.parent
    if parent is None or parent.type != "argument_list":
        return None
    call = parent.parent
    function = call.child_by_field_name("function") if call is not None else None
    return call if function is not None and function.text == b"isinstance" else None


def _renames(body: Any, subject: str, leaves: dict[str, list[tuple[str, list[str]]]]) -> Iterable[TextEdit]:
    if _assigns(body, subject.encode()):
        return
    for node in _nodes(body):
        edit = _rename(node, subject, leaves)
        if edit is not None:
            yield edit


def _rename(node: Any, subject: str, leaves: dict[str, list[tuple[str, list[str]]]]) -> TextEdit | None:
    if node.type != "attribute":
        return None
    obj, attr = node.child_by_field_name("object"), node.child_by_field_name("attribute")
    if obj is None or attr is None or obj.type != "identifier" or obj.text.decode("utf-8", "replace") != subject:
        return None
    groups = leaves.get(attr.text.decode("utf-8", "replace"))
    if not groups:
        return None
    if len(groups) == 1:
        return TextEdit(attr.start_byte, attr.end_byte, groups[0][0])
    parent = node.parent
    if len(groups) > 2 or (parent is not None and parent.type == "assignment"
                           and parent.child_by_field_name("left") is not None
                           and parent.child_by_field_name("left").id == node.id):
        return None  # a conditional cannot be assigned to, and three ways would be unreadable
    (first, first_classes), (other, _) = groups
    test = first_classes[0] if len(first_classes) == 1 else f"({', '.join(first_classes)})"
    return TextEdit(node.start_byte, node.end_byte,
                    f"({subject}.{first} if isinstance({subject}, {test}) else {subject}.{other})")


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
