"""Torch types of objects: the class hierarchy table and classes defined locally.

A method call on an object whose torch type is known (``opt.step()``,
``self.parameters()``) resolves by walking the type's ancestors until the KB has
``<type>.<method>``.  The ancestors of torch classes come from ``TYPE_PARENTS``
(data, not code); classes defined in the analysed file contribute their own
bases, and their own methods hide the torch ones (``self.forward_features`` is
the user's method, not a torch API).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

# Exact parents first, then (prefix, parent) rules: the first that matches wins.
EXACT_PARENTS: dict[str, tuple[str, ...]] = {
    "torch.nn.Parameter": ("torch.Tensor",),
    "torch.nn.parameter.Parameter": ("torch.Tensor",),
    "torch.optim.lr_scheduler.LRScheduler": ("torch.optim.lr_scheduler._LRScheduler",),
    "torch.optim.lr_scheduler._LRScheduler": (),
    "torch.optim.Optimizer": (),
    "torch.nn.Module": (),
    "torch.Tensor": (),
    "torch.cuda.amp.GradScaler": ("torch.amp.GradScaler",),
    "torch.cpu.amp.GradScaler": ("torch.amp.GradScaler",),
    "torch.amp.GradScaler": (),
}
PREFIX_PARENTS: tuple[tuple[str, str], ...] = (
    ("torch.optim.lr_scheduler.", "torch.optim.lr_scheduler.LRScheduler"),
    ("torch.optim.", "torch.optim.Optimizer"),
    ("torch.nn.", "torch.nn.Module"),
)
# Torch names whose instances are objects with methods (besides KB records of kind "class").
CLASS_KINDS = frozenset({"class"})


def torch_ancestors(name: str) -> Iterator[str]:
    """``name`` and its torch ancestors, nearest first."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop(0)
        if current in seen:
            continue
        seen.add(current)
        yield current
        if current in EXACT_PARENTS:
            todo.extend(EXACT_PARENTS[current])
            continue
        for prefix, parent in PREFIX_PARENTS:
            if current.startswith(prefix) and current != parent:
                todo.append(parent)
                break


def is_class_record(record: dict[str, Any] | None) -> bool:
    if not record:
        return False
    kind = record.get("kind")
    if kind:
        return kind in CLASS_KINDS
    leaf = str(record.get("torch", "")).rsplit(".", 1)[-1]
    return leaf[:1].isupper()


@dataclass(eq=False)
class LocalClass:
    """A class defined in the analysed file whose ancestry reaches torch."""

    name: str
    node: Any  # class_definition; None for a class imported from a sibling file
    torch_bases: list[str] = field(default_factory=list)
    local_bases: list[LocalClass] = field(default_factory=list)
    base_nodes: list[tuple[Any, str]] = field(default_factory=list)  # (base expr node, torch name)
    methods: dict[str, Any] = field(default_factory=dict)  # name -> function_definition
    attribute_types: dict[str, Any] = field(default_factory=dict)  # self.<attr> = <torch class>(...)
    assigned: frozenset[str] = frozenset()  # every self.<attr> the class assigns (read when it is adopted)
    _memo: dict = field(default_factory=dict, repr=False)

    @property
    def key(self) -> int:
        # A class imported from a sibling file (siblingclasses.py) has no node here.
        return self.node.start_byte if self.node is not None else -1 - id(self)

    def changed(self) -> None:
        """Forget cached answers (a base was added somewhere in the file)."""
        self._memo.clear()

    def lineage(self) -> list[LocalClass]:
        seen: set[int] = set()
        found, todo = [], [self]
        while todo:
            current = todo.pop(0)
            if current.key in seen:
                continue
            seen.add(current.key)
            found.append(current)
            todo.extend(current.local_bases)
        return found

    def is_torch(self) -> bool:
        if "torch" not in self._memo:
            self._memo["torch"] = any(c.torch_bases for c in self.lineage())
        return self._memo["torch"]

    def defines(self, method: str) -> bool:
        return any(method in c.methods for c in self.lineage())

    def shadows(self, attr: str) -> bool:
        """Whether the class assigns ``self.<attr> = ...`` (nbeats' ``self.parameters = []``): an instance
        attribute that hides the torch method of that name, so ``self.<attr>`` is data, not the method."""
        return attr in self.assigned

    def attribute_type(self, attr: str) -> Any:
        """The torch class name (or local class) ``self.<attr>`` was built from, if any."""
        return next((c.attribute_types[attr] for c in self.lineage() if attr in c.attribute_types), None)

    def torch_types(self) -> list[str]:
        if "types" not in self._memo:
            self._memo["types"] = list(dict.fromkeys(
                t for c in self.lineage() for base in c.torch_bases for t in torch_ancestors(base)))
        return self._memo["types"]


def member_of(
    owner: Any, member: str, lookup: Callable[[str], dict[str, Any] | None]
) -> tuple[str, dict[str, Any]] | None:
    """The torch API ``owner.member`` stands for: (name, record) or None.

    ``owner`` is a torch class name or a ``LocalClass``.  A method the local class
    defines itself is the user's, never a torch API.
    """
    if isinstance(owner, LocalClass):
        if owner.defines(member):
            return None
        types: Iterable[str] = owner.torch_types()
    else:
        types = torch_ancestors(owner)
    for type_name in types:
        name = f"{type_name}.{member}"
        record = lookup(name)
        if record is not None:
            return name, record
    return None


def methods_of(class_node: Any) -> Iterator[tuple[str, Any, bool]]:
    """(name, function_definition, takes_instance) for each method in a class body."""
    body = class_node.child_by_field_name("body")
    if body is None:
        return
    for child in body.named_children:
        decorators: list[str] = []
        if child.type == "decorated_definition":
            decorators = [d.text.decode("utf-8", "replace").lstrip("@").strip() for d in child.named_children
                          if d.type == "decorator"]
            child = child.child_by_field_name("definition")
        if child is None or child.type != "function_definition":
            continue
        name = child.child_by_field_name("name")
        if name is None:
            continue
        static = any(d in ("staticmethod", "classmethod") for d in decorators)
        yield name.text.decode("utf-8", "replace"), child, not static


SELF_ASSIGNED = re.compile(rb"\bself\.([A-Za-z_]\w*)[ \t]*(?::[^=\n]+)?=(?!=)")


def assigned_attributes(text: bytes) -> frozenset[str]:
    """The attributes ``self.<attr> = ...`` sets in a class's text."""
    return frozenset(m.decode() for m in SELF_ASSIGNED.findall(text))
