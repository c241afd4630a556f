"""Find the torch APIs a file uses, however the names were imported.

The resolver never walks the whole tree.  It starts from the word ``torch``
(found with ``bytes.find``), lets tree-sitter say what each occurrence is, and
follows the names that torch imports bind (``nn``, ``F``, ``L``), the objects
whose torch type becomes known (``opt = torch.optim.SGD(...)``, ``self`` in an
``nn.Module`` subclass, ``model = Net()``) and the classes deriving from torch
classes, until no new name turns up.  Cost grows with the number of torch
names in the file, not with its length.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kb.analysis import roles
from kb.analysis.catalog import Catalog, Record
from kb.analysis.classes import LocalClass, assigned_attributes, is_class_record, member_of, methods_of
from kb.analysis.imports import ImportTable, import_statement_of, is_torch_path
from kb.analysis.scopes import Binding, Bindings, ScopeIndex
from kb.analysis.words import find_words, word_starts

MAX_ROUNDS = 12


class Rediscovery(Exception):
    """A frozen resolver met something that would change its bindings (see incremental.py)."""


@dataclass(eq=False, slots=True)
class Reference:
    node: Any  # the identifier
    name: str
    levels: list  # [(attribute node, attribute name)], innermost first
    context: str  # call | class_base | store | load (of the outermost expression)
    outer: Any
    call: Any = None
    assign: tuple[str, int, int] | None = None  # `x = <call>`: (x, its start, statement end)
    assign_attr: tuple[str, str] | None = None  # `obj.attr = <call>`: (obj, attr)
    class_node: Any = None
    attrs: tuple = ()  # the attribute names of ``levels``


@dataclass(eq=False, slots=True)
class Site:
    """A torch use found in the tree (nodes included; the engine turns it into a ``Use``)."""

    torch_name: str
    record: Record
    kind: str  # call | attribute | import | class_base | method_def
    node: Any  # what a diagnostic underlines
    member: Any = None  # identifier to rename when reached through an object
    call: Any = None
    local_class: LocalClass | None = None
    guess: bool = False
    start: int = -1  # byte span when there is no single node (imports)
    end: int = -1


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


def _reference(node: Any, name: str, source: bytes, parent: Any = False) -> Reference:
    levels, current = [], node
    if parent is False:
        parent = current.parent
    attrs: tuple = ()
    while parent is not None and parent.type == "attribute":
        end = current.end_byte
        if parent.end_byte == end:
            break
        attr = parent.child_by_field_name("attribute")
        if attr is None or attr.start_byte < end or attr.type != "identifier" or attr.is_missing:
            break
        text = source[attr.start_byte:attr.end_byte].decode("utf-8", "replace")
        levels.append((parent, text))
        attrs += (text,)
        current, parent = parent, parent.parent
    ref = Reference(node, name, levels, "load", current, attrs=attrs)
    if parent is None:
        return ref
    kind = parent.type
    if kind == "call":
        if parent.start_byte == current.start_byte:
            function = parent.child_by_field_name("function")
            if function is not None and function.end_byte == current.end_byte:
                ref.context, ref.call = "call", parent
                holder = parent.parent
                if holder is not None and holder.type == "assignment":
                    left, right = holder.child_by_field_name("left"), holder.child_by_field_name("right")
                    if left is not None and left.type == "identifier" and right is not None \
                            and right.start_byte == parent.start_byte and right.end_byte == parent.end_byte:
                        ref.assign = (source[left.start_byte:left.end_byte].decode("utf-8", "replace"),
                                      left.start_byte, holder.end_byte)
                    elif left is not None and left.type == "attribute" and right is not None \
                            and right.start_byte == parent.start_byte and right.end_byte == parent.end_byte:
                        obj, attr = left.child_by_field_name("object"), left.child_by_field_name("attribute")
                        if obj is not None and obj.type == "identifier" and attr is not None:
                            ref.assign_attr = (_text(obj), _text(attr))
    elif kind == "argument_list":
        holder = parent.parent
        if holder is not None and holder.type == "class_definition":
            ref.context, ref.class_node = "class_base", holder
    elif kind in ("assignment", "augmented_assignment") and parent.start_byte == current.start_byte:
        ref.context = "store"
    return ref


def count_references(root: Any, source: bytes, names: Any) -> dict[str, int]:
    """References (not bindings, not attribute names) to each of ``names``; names with none are left out."""
    counts: dict[str, int] = {}
    for name in sorted(names):
        word = name.encode()
        found = 0
        for at in find_words(source, word):
            node = root.named_descendant_for_byte_range(at, at + len(word))
            if node is not None and node.type == "identifier" and node.start_byte == at \
                    and node.end_byte == at + len(word) and roles.role(node)[0] == roles.REF:
                found += 1
        if found:
            counts[name] = found
    return counts


class Resolver:
    def __init__(self, root: Any, source: bytes, catalog: Catalog, imported_classes: dict | None = None) -> None:
        self.root, self.source, self.catalog = root, source, catalog
        self.imported_classes = imported_classes or {}  # name -> siblingclasses.ImportedClass
        self.scopes = ScopeIndex(root, source)
        self.bindings = Bindings()
        self.imports = ImportTable.build(root, source)
        self.refs: dict[int, Reference] = {}
        self.classes: dict[int, LocalClass] = {}
        self._seen: set[int] = set()
        self._adopted: set[int] = set()
        self._class_generation = 0
        self._memo: dict[int, tuple[int, int | None, Site | None]] = {}  # see _resolve_all
        self.non_refs: list[int] = []  # offsets of binding/import/global occurrences
        self.frozen = False  # when set, resolving never adds bindings (raises Rediscovery)
        self._scanned: set[tuple[str, int, int]] = set()
        self._pending: list[tuple[str, int, int]] = []
        self._changed = False

    # -- discovery -----------------------------------------------------------------
    def run(self) -> list[Site]:
        for start in list(self.imports.statements):
            self._bind_imports(self.imports.statements[start])
        self._want("torch")
        for _ in range(MAX_ROUNDS):
            self._scan_pending()
            self._changed = False
            sites = self._resolve_all()
            if not self._changed and not self._pending:
                break
        return sites + self._method_sites() + self._import_sites()

    @property
    def has_torch_imports(self) -> bool:
        return any(is_torch_path(name.target) for _, name in self.imports.names)

    def _want(self, name: str, start: int = 0, end: int | None = None) -> None:
        if not name:  # a MISSING identifier in broken code (zero width): nothing to look for
            return
        key = (name, start, len(self.source) if end is None else end)
        if key not in self._scanned and (name, 0, len(self.source)) not in self._scanned:
            self._scanned.add(key)
            self._pending.append(key)
            self._changed = True

    def _scan_pending(self) -> None:
        pending, self._pending = sorted(self._pending), []
        source, occurrence = self.source, self._occurrence
        for name, start, end in pending:
            width = len(name.encode())
            for at in word_starts(source, name.encode(), start, end):
                occurrence(at, at + width, name)

    def _occurrence(self, start: int, end: int, name: str) -> None:
        seen = self._seen
        if start in seen:
            return
        seen.add(start)
        node = self.root.named_descendant_for_byte_range(start, end)
        if node is None or node.type != "identifier" or node.start_byte != start or node.end_byte != end:
            return
        parent = node.parent
        if parent is not None and parent.type == "attribute":  # the common case, decided here
            if parent.end_byte != end:
                self.refs[start] = _reference(node, name, self.source, parent)
            return
        role, owner = roles.role(node, parent)
        if role != roles.REF and role != roles.SKIP:
            self.non_refs.append(start)
        if role == roles.REF:
            self.refs[start] = _reference(node, name, self.source, parent)
        elif role == roles.IMPORT:
            stmt = import_statement_of(node)
            if stmt is not None and stmt.start_byte not in self.imports.statements:
                self.imports.add(stmt)
                self._bind_imports(stmt)
        elif role == roles.BIND:
            self._bind_other(node, name, owner)
        elif role == roles.PARAM and owner is not None:
            scope = self.scopes.scope_of(owner) or self.scopes.add(owner)
            self.bindings.add(Binding(name, scope, start, "other", None, start))
        elif role == roles.GLOBAL:
            self.bindings.add(Binding(name, self.scopes.enclosing(node), start, "global", None, start))

    def _bind_other(self, node: Any, name: str, owner: Any) -> None:
        start = node.start_byte
        if owner.type == "for_in_clause" and owner.parent is not None:
            scope = self.scopes.add(owner.parent)
        else:
            scope = self.scopes.enclosing(node)
        kind, offset = "other", start
        if owner.type == "assignment":
            offset = owner.end_byte
            right = owner.child_by_field_name("right")
            if right is not None and right.type == "none":
                kind = "none"
        self.bindings.add(Binding(name, scope, offset, kind, None, start))

    def _bind_imports(self, stmt: Any) -> None:
        scope = self.scopes.enclosing(stmt)
        for name in self.imports.by_statement.get(stmt.start_byte, ()):
            torch = is_torch_path(name.target)
            imported = self.imported_classes.get(name.bound) if name.target is None else None
            if imported is not None:  # a sibling file's class deriving from torch: like a class of this file
                local = LocalClass(imported.name, None, list(imported.torch_bases),
                                   methods=dict.fromkeys(imported.methods))
                self.bindings.add(Binding(name.bound, scope, stmt.end_byte, "class", local, name.ident))
                self._want(name.bound)
                continue
            self.bindings.add(Binding(name.bound, scope, stmt.end_byte, "module" if torch else "other",
                                      name.target if torch else None, name.ident))
            if is_torch_path(name.target) and self.catalog.reaches(name.target):
                self._want(name.bound)

    # -- resolution ----------------------------------------------------------------
    def _resolve_all(self) -> list[Site]:
        """Resolve every reference; one whose name did not change keeps its answer, unless it
        went through a local class or a typed object and the classes changed."""
        sites = []
        generation, classes = self.bindings.generation, self._class_generation
        for start, ref in list(self.refs.items()):
            names = generation.get(ref.name, 0)
            memo = self._memo.get(start)
            if memo is None or memo[0] != names or (memo[1] is not None and memo[1] != classes):
                binding = self._binding_of(ref)
                through_classes = binding is not None and (binding.kind == "class" or binding.kind == "typed")
                memo = (names, classes if through_classes else None, self._resolve_with(ref, binding))
                self._memo[start] = memo
            if memo[2] is not None:
                sites.append(memo[2])
        return sites

    def _classes_changed(self) -> None:
        self._changed = True
        self._class_generation += 1
        for local in self.classes.values():
            local.changed()

    @property
    def ref_counts(self) -> dict[str, int]:
        """References per name bound by a torch import (what import clean-up needs).

        Names that were never followed (their imports reach nothing known) are counted here,
        on demand: only fix-all's import clean-up asks.
        """
        bound = {n.bound for _, n in self.imports.names if is_torch_path(n.target)}
        counts: dict[str, int] = {}
        for ref in self.refs.values():
            if ref.name in bound:
                counts[ref.name] = counts.get(ref.name, 0) + 1
        counts.update(count_references(self.root, self.source, bound - self.names))
        return counts

    @property
    def names(self) -> set[str]:
        """Every name whose occurrences were looked at."""
        return {name for name, _, _ in self._scanned}

    @staticmethod
    def reference_at(root: Any, source: bytes, start: int, end: int) -> Reference | None:
        """The reference formed by the identifier at ``start``..``end`` of ``root``'s tree."""
        node = root.named_descendant_for_byte_range(start, end)
        if node is None or node.type != "identifier" or node.start_byte != start or node.end_byte != end:
            return None
        role, _ = roles.role(node)
        if role == roles.SKIP:
            return None
        if role != roles.REF:
            raise Rediscovery("a binding occurrence")
        return _reference(node, source[start:end].decode("utf-8", "replace"), source)

    def _resolve(self, ref: Reference, offset: int | None = None) -> Site | None:
        return self._resolve_with(ref, self._binding_of(ref, offset))

    def resolve(self, ref: Reference, offset: int | None = None) -> Site | None:
        """The site of ``ref`` (``offset``: where it sits in the text the bindings were computed on)."""
        return self._resolve(ref, offset)

    def _binding_of(self, ref: Reference, offset: int | None = None) -> Binding | None:
        # Scopes are looked up now, not when the reference was met: a comprehension
        # becomes a scope only once a binding inside it has been seen.  ``offset`` is
        # where the reference sits in the text the bindings were computed on.
        offset = ref.node.start_byte if offset is None else offset
        bindings = self.bindings
        scope = self.scopes.at(offset) if ref.name in bindings._local else self.scopes.module
        return bindings.resolve(ref.name, offset, scope)

    def _resolve_with(self, ref: Reference, binding: Binding | None) -> Site | None:
        if binding is None:
            return None
        if binding.kind == "module":
            return self._resolve_path(ref, binding.target)
        if binding.kind == "class" and not ref.levels:
            self._from_local_class(ref, binding.target)
        elif binding.kind == "typed" and ref.levels:
            found = member_of(binding.target, ref.levels[0][1], self.catalog.lookup)
            owner = binding.target
            if found is not None and isinstance(owner, LocalClass) and owner.shadows(ref.levels[0][1]):
                found = None  # ``self.parameters = []``: the instance's own attribute hides the module method
            depth = 1
            if found is None and len(ref.levels) > 1 and isinstance(binding.target, LocalClass):
                held = binding.target.attribute_type(ref.levels[0][1])  # self.features.add_module(...)
                found = member_of(held, ref.levels[1][1], self.catalog.lookup) if held is not None else None
                depth = 2
            if found is not None:
                node = ref.levels[depth - 1][0]
                called = len(ref.levels) == depth and ref.context == "call"
                member = node.child_by_field_name("attribute")
                return Site(found[0], found[1], "call" if called else "attribute", node, member,
                            ref.call if called else None)
        return None

    def _note_attribute(self, ref: Reference, held: Any) -> None:
        """``self.<attr> = <torch class>(...)`` in a method: the class holds a layer of that type."""
        if ref.assign_attr is None or ref.call is None:
            return
        obj, attr = ref.assign_attr
        offset = ref.call.start_byte
        binding = self.bindings.resolve(obj, offset, self.scopes.at(offset))
        owner = binding.target if binding is not None and binding.kind == "typed" else None
        if not isinstance(owner, LocalClass):
            return
        if attr in owner.attribute_types:
            return
        if self.frozen:
            raise Rediscovery("a typed attribute")
        owner.attribute_types[attr] = held
        self._classes_changed()

    def _resolve_path(self, ref: Reference, base: str) -> Site | None:
        found = self.catalog.longest(base, ref.attrs)
        if found is None:
            return None
        index, name, record = found
        levels = ref.levels
        node = levels[index - 1][0] if index else ref.node
        context = ref.context if index == len(levels) else "load"
        if context == "call":
            if ref.assign is not None and is_class_record(record):
                self._bind_typed(ref, name)
            elif ref.assign_attr is not None and is_class_record(record):
                self._note_attribute(ref, name)
            return Site(name, record, "call", node, call=ref.call)
        if context == "class_base":
            if self.frozen:
                raise Rediscovery("a base class")
            local = self._local_class(ref.class_node)
            if name not in local.torch_bases:
                local.torch_bases.append(name)
                local.base_nodes.append((node, name))
                self._classes_changed()
            self._adopt(local)
            return Site(name, record, "class_base", node, local_class=local)
        return Site(name, record, "attribute", node)

    def _bind_typed(self, ref: Reference, target: Any) -> None:
        if self.frozen:
            raise Rediscovery("a typed assignment")
        if ref.assign is None:  # callers bind only `x = <call>`
            return
        name, ident, end = ref.assign
        if self.bindings.add(Binding(name, self.scopes.enclosing(ref.call), end, "typed", target, ident)):
            self._changed = True
            self._want(name)

    def _from_local_class(self, ref: Reference, local: LocalClass) -> None:
        if self.frozen and (ref.context == "class_base" or ref.assign is not None):
            raise Rediscovery("a use of a local class")
        if ref.context == "call" and ref.assign is not None:
            self._bind_typed(ref, local)
        elif ref.context == "call" and ref.assign_attr is not None:
            self._note_attribute(ref, local)
        elif ref.context == "class_base":
            child = self._local_class(ref.class_node)
            if local not in child.local_bases and child is not local:
                child.local_bases.append(local)
                self._classes_changed()
            self._adopt(child)

    def _local_class(self, node: Any) -> LocalClass:
        found = self.classes.get(node.start_byte)
        if found is None:
            name = node.child_by_field_name("name")
            found = self.classes[node.start_byte] = LocalClass(_text(name) if name is not None else "", node)
        return found

    def _adopt(self, local: LocalClass) -> None:
        """Once a class reaches torch: bind its name and the ``self`` of its methods."""
        if local.key in self._adopted or not local.is_torch():
            return
        self._adopted.add(local.key)
        local.assigned = assigned_attributes(self.source[local.node.start_byte:local.node.end_byte])
        name = local.node.child_by_field_name("name")
        if name is not None:
            self.bindings.add(Binding(local.name, self.scopes.enclosing(local.node), name.start_byte,
                                      "class", local, name.start_byte))
            self._want(local.name)
        for method, fn, takes_instance in methods_of(local.node):
            local.methods[method] = fn
            params = fn.child_by_field_name("parameters")
            first = params.named_children[0] if params is not None and params.named_children else None
            if first is not None and first.type in ("typed_parameter", "default_parameter", "typed_default_parameter"):
                first = first.named_children[0] if first.named_children else None
            if not takes_instance or first is None or first.type != "identifier":
                continue
            scope = self.scopes.scope_of(fn) or self.scopes.add(fn)
            self.bindings.add(Binding(_text(first), scope, first.start_byte, "typed", local, first.start_byte))
            self.non_refs.append(first.start_byte)  # renaming ``self`` retypes the method: a full analysis
            self._want(_text(first), scope.start, scope.end)
        self._classes_changed()

    # -- other sites ---------------------------------------------------------------
    def _method_sites(self) -> list[Site]:
        sites = []
        for local in self.classes.values():
            if not local.is_torch():
                continue
            for method, fn in local.methods.items():
                for type_name in local.torch_types():
                    record = self.catalog.lookup(f"{type_name}.{method}")
                    if record is not None:
                        sites.append(Site(f"{type_name}.{method}", record, "method_def",
                                          fn.child_by_field_name("name"), local_class=local))
                        break
        return sites

    def _import_sites(self) -> list[Site]:
        sites = []
        for _stmt, name in self.imports.names:
            if is_torch_path(name.target):
                record = self.catalog.lookup(name.target)
                if record is not None:
                    sites.append(Site(name.target, record, "import", None, start=name.start, end=name.end))
        return sites
