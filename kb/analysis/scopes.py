"""Python scopes and name bindings, found without walking the whole tree.

Only the scopes that matter are registered: those where a followed name is
bound (found by walking up from the binding), plus the methods of a registered
class (a class body is invisible from its methods, so they must be known).  A
reference inside an unregistered function resolves exactly as if that function
were registered, since it binds none of the names in question.  A scope's
interval is its *body*: parameter defaults, decorators and base classes are
evaluated in the enclosing scope, as Python does.  ``Bindings`` resolves a name
at an offset the way Python would: function scopes are local for the whole
function, class scopes are invisible from nested functions, module scope is
flow-ordered (the latest binding before the reference wins).
"""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

_KIND = {"function_definition": "function", "class_definition": "class", "lambda": "function"}
COMPREHENSIONS = frozenset(
    {"list_comprehension", "set_comprehension", "dictionary_comprehension", "generator_expression"}
)


@dataclass(eq=False, slots=True)
class Scope:
    kind: str  # module | function | class | comprehension
    start: int  # the body's byte interval
    end: int
    node: Any = None  # the defining tree-sitter node (None for the module)
    parent: Scope | None = None

    @property
    def key(self) -> int:
        return -1 if self.node is None else self.node.start_byte


class ScopeIndex:
    """Nested scope intervals of one tree; ``at(offset)`` is the innermost scope."""

    def __init__(self, root: Any, source: bytes) -> None:
        self.module = Scope("module", 0, len(source) + 1)
        self._by_node: dict[int, Scope] = {}
        self._finish()

    def enclosing(self, node: Any) -> Scope:
        """The scope ``node`` is evaluated in (registering it): walk up to a body."""
        child, current = node, node.parent
        while current is not None:
            kind = current.type
            if kind in _KIND:
                body = current.child_by_field_name("body")
                if body is not None and body.start_byte <= child.start_byte and child.end_byte <= body.end_byte:
                    return self.add(current)
            elif kind in COMPREHENSIONS:
                return self.add(current)
            child, current = current, current.parent
        return self.module

    def add(self, node: Any) -> Scope:
        """Register the scope defined by ``node`` (def, class, lambda, comprehension)."""
        found = self._by_node.get(node.start_byte)
        if found is not None:
            return found
        if node.type in COMPREHENSIONS:
            scope = Scope("comprehension", node.start_byte, node.end_byte, node)
        elif node.type not in _KIND:  # a broken definition: its names live in the enclosing scope
            return self.at(node.start_byte)
        else:
            body = node.child_by_field_name("body")
            start, end = (body.start_byte, body.end_byte) if body is not None else (node.end_byte, node.end_byte)
            scope = Scope(_KIND[node.type], start, end, node)
        self._by_node[node.start_byte] = scope
        self._dirty = True
        if node.type == "class_definition" and body is not None:  # its methods must not see it
            for child in body.named_children:
                if child.type == "decorated_definition":
                    child = child.child_by_field_name("definition") or child
                if child.type in ("function_definition", "class_definition"):
                    self.add(child)
        return scope

    def scope_of(self, node: Any) -> Scope | None:
        return self._by_node.get(node.start_byte)

    def _finish(self) -> None:
        scopes = sorted(self._by_node.values(), key=lambda s: (s.start, -s.end))
        stack = [self.module]
        for scope in scopes:
            while stack[-1] is not self.module and scope.start >= stack[-1].end:
                stack.pop()
            scope.parent = stack[-1]
            stack.append(scope)
        self._sorted = scopes
        self._starts = [s.start for s in scopes]
        self._dirty = False

    def at(self, offset: int) -> Scope:
        if self._dirty:
            self._finish()
        index = bisect_right(self._starts, offset) - 1
        scope = self._sorted[index] if index >= 0 else self.module
        while scope is not self.module and not (scope.start <= offset < scope.end):
            scope = scope.parent or self.module
        return scope


@dataclass(eq=False, slots=True)
class Binding:
    """A name bound in a scope.

    kind: ``module`` (a torch module or API, ``target`` is its dotted name),
    ``typed`` (an object whose torch type is known, ``target`` is a torch class
    name or a ``LocalClass``), ``class`` (a class defined in this file),
    ``other`` (anything else: shadows), ``none`` (``x = None``: does not shadow
    an import at module level), ``global`` (a ``global``/``nonlocal`` statement).
    """

    name: str
    scope: Scope
    offset: int  # where the binding takes effect
    kind: str
    target: Any = None
    ident: int = -1  # start byte of the binding identifier (de-duplicates rediscoveries)


@dataclass
class Bindings:
    table: dict[tuple[str, int], list[Binding]] = field(default_factory=dict)
    by_ident: dict[int, Binding] = field(default_factory=dict)
    generation: dict[str, int] = field(default_factory=dict)  # bumped when a name's bindings change
    _sorted: dict[tuple[str, int], tuple] = field(default_factory=dict)
    _local: set[str] = field(default_factory=set)  # names bound somewhere besides module level

    def add(self, binding: Binding) -> bool:
        """Add or upgrade a binding; True when something changed."""
        if binding.ident >= 0:
            old = self.by_ident.get(binding.ident)
            if old is not None:
                if old.kind != "other" or binding.kind == "other":
                    return False
                self.table[(old.name, old.scope.key)].remove(old)
                self._sorted.pop((old.name, old.scope.key), None)
            self.by_ident[binding.ident] = binding
        key = (binding.name, binding.scope.key)
        if binding.scope.key != -1:
            self._local.add(binding.name)
        self.table.setdefault(key, []).append(binding)
        self._sorted.pop(key, None)
        self.generation[binding.name] = self.generation.get(binding.name, 0) + 1
        return True

    def _prepared(self, key: tuple[str, int]) -> tuple | None:
        """(is declared global, offsets, live bindings sorted by offset) for one name in one scope."""
        found = self._sorted.get(key)
        if found is None:
            bindings = self.table.get(key)
            if not bindings:
                return None
            live = [b for b in bindings if b.kind not in ("none", "global")] or [
                b for b in bindings if b.kind != "global"]
            live.sort(key=lambda b: b.offset)
            found = (any(b.kind == "global" for b in bindings), [b.offset for b in live], live)
            self._sorted[key] = found
        return found

    def resolve(self, name: str, offset: int, scope: Scope) -> Binding | None:
        """The binding ``name`` refers to at ``offset`` inside ``scope``, or None."""
        if name not in self._local:  # bound at module level only: no scope walk needed
            found = self._prepared((name, -1))
            return None if found is None else self._pick(found, offset)
        current: Scope | None = scope
        first = True
        while current is not None:
            if current.kind == "class" and not first:
                current = current.parent
                continue
            found = self._prepared((name, current.key))
            if found is not None:
                if found[0]:
                    found = self._prepared((name, -1))
                    if found is None:
                        return None
                return self._pick(found, offset)
            current, first = current.parent, False
        return None

    @staticmethod
    def _pick(found: tuple, offset: int) -> Binding | None:
        # The latest binding before the reference; a reference that precedes every
        # binding (a function body using a name bound later) takes the first one.
        _, offsets, live = found
        if not live:
            return None
        index = bisect_right(offsets, offset) - 1
        return live[index] if index >= 0 else live[0]
