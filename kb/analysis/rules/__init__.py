"""The rule registry: every idiom the engine converts beyond single torch names is one rule module here.

A rule module defines one class, decorated with ``@register``, that says

- ``name``: a short id (``train-step``), unique;
- ``scope``: what its findings in one place read — ``expression``, ``statement``, ``function``, ``class``
  or ``file``: after an edit, a rule of a scope below ``file`` runs again only in the piece of that scope
  holding the edit (``region``), its findings elsewhere kept, so it should look only at ``Context.within``;
- ``inputs(context)``: what else it reads of the file (a fresh name, the names of the file's functions), a
  value compared after every edit: when it changed, or ``reaches(inputs, edited)`` says the edited text may
  change what it reads beyond its piece (a call added to one of those functions), the rule runs again in the
  whole file;
- ``record`` and ``title``: the knowledge-base-shaped record its uses report and its fix's title;
- ``needs_torch_imports``: whether it runs only in files that import torch;
- ``order``: when it runs (a rule that reads uses another rule makes runs after it);
- ``example``: a small piece of torch code holding the idiom (the property test that holds an edited
  document's analysis equal to a fresh one runs on every rule's example);
- ``find(context)``: the findings in one file — each a node to underline, the edits that convert it
  (or none, with the reason a human is needed), and optionally the torch name of a use at the same
  place that it replaces; or a resolved site (a torch name found where the resolver could not type
  the receiver), which the engine rewrites from its knowledge-base record like any other use.

An idiom that only adds edits to a use the engine builds (``m.weight`` -> ``m.gamma`` carried by the
``nn.BatchNorm2d`` of ``if isinstance(m, nn.BatchNorm2d):``) is an ``Extension``, registered by the same
decorator: ``name``, ``extends`` (the kind of use: ``class_base`` or ``attribute``), ``order``, ``example``
(as a rule's), and ``added(context, site, use)`` (or ``extend(context, pairs)`` for uses that belong
together) giving, per use with a fix, the edits it adds and the bytes they depend on (``reach``). The engine
runs the extensions in their order on its uses (``extend``); a use records their names (``Use.extended_by``)
and ``reach``, so an edit there redoes them (kb/analysis/incremental.py).

Three more kinds hook the engine's own steps, each registered the same way with a ``name``, an ``order`` and
an ``example``:

- a ``SiteFinder`` finds more sites of torch names where the resolver cannot type the receiver
  (``x.view(...)`` may be ``torch.Tensor.view``: tensor_methods.py); ``find(SiteContext)`` gives resolved
  sites, which the engine plans from their records like any other (``find_sites``, in a whole file or in
  the window an edit re-analyses);
- a ``Fallback`` plans a use its record alone leaves without a fix (an in-place method with no kernel here,
  a torch type with no MindSpore type in an annotation): ``applies(site, choice)`` and
  ``plan(planning, site, choice) -> (title, edits)`` (None: nothing to offer; ``Blocked``: the reason a
  human is needed); the engine runs the first that applies (``fallback_for``) and records its name in
  ``Use.extended_by``;
- a ``RenameFollower`` follows a method a class migration renames (``forward`` -> ``construct``) to the
  places that name it (``super().forward(x)``): ``follow(local_class, old, new) -> edits``, added to the
  migration's fix (``follow_renames``).

The engine knows no rule by name: it imports every module of this package once (``registered``), asks
each rule for its findings in each file (``run``) and turns them into ``Use``s. Adding an idiom is one
new module here plus its tests; no engine file changes.
"""
from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Collection, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from kb.analysis.imports import IMPORT_TYPES, ImportTable, mentions_roots
from kb.analysis.text import LineIndex, TextEdit, byte_range
from kb.analysis.uses import Use
from kb.analysis.words import word_starts

SCOPES = ("expression", "statement", "function", "class", "file")
EXTENDED_KINDS = ("class_base", "attribute")  # the kinds of the engine's uses an extension may add edits to


@dataclass
class Context:
    """What a rule may read about one file."""

    root: Any  # the tree-sitter module node
    source: bytes
    found_imports: ImportTable | None  # None: ``imports`` reads them on first use
    alias: str  # how the file spells ``mindspore`` (``ms``)
    catalog: Any  # kb.analysis.catalog.Catalog: records by torch name
    settings: Any  # kb.analysis.settings.EngineSettings
    has_torch_imports: bool
    choose: Callable[[dict], Any]  # the target choice for a record, as the engine makes it
    # the engine's uses of torch names starting with one of these prefixes (``exact=True``: named so), at their
    # current places; where a rule runs again in one piece after an edit (``within``), the uses in that piece
    uses_named: Callable[..., list[Use]]
    # the bytes findings are asked for (an edited function, for a rule of function scope); a rule may look
    # only there, and the engine keeps only its findings that start there
    within: tuple[int, int] = (0, 0)
    # the engine's use of a resolved site (kb.analysis.resolver.Site): a rule that recognises a torch name
    # the resolver could not type (``self.model.eval()``) has it rewritten from its record like any other use
    use_of: Callable[[Any], Use] | None = None
    # names of the classes imported from the project whose lineage reaches torch (siblingclasses.py)
    torch_classes: Collection[str] = ()
    # the (start, end) of every use of a torch name so far, at their current places: what
    # ``uses_named(("",))`` would give the spans of, without building each use that an edit moved (in a rule's
    # piece after an edit, at least those there)
    use_spans: Callable[[], set[tuple[int, int]]] | None = None
    # the line index of ``source`` (a finding's range without counting the lines before it)
    lines: Callable[[], LineIndex] | None = None
    # each rule's ``inputs`` in this file, when the engine has them (a rule run in one piece reads its own here:
    # its ``uses_named`` sees that piece only)
    known_inputs: dict[str, Hashable] | None = None

    def inputs_of(self, rule: Rule) -> Hashable:
        """``rule.inputs`` in this file."""
        if self.known_inputs is not None and rule.name in self.known_inputs:
            return self.known_inputs[rule.name]
        return rule.inputs(self)

    def uses_called(self, names: Collection[str]) -> list[Use]:
        """The engine's uses of exactly these torch names (``uses_named`` of ``torch.e`` holds ``torch.einsum``'s)."""
        return self.uses_named(tuple(names), exact=True)

    def spans_of_uses(self) -> set[tuple[int, int]]:
        if self.use_spans is not None:
            return self.use_spans()
        return {(use.start, use.end) for use in self.uses_named(("",))}

    @property
    def imports(self) -> ImportTable:
        """Every import statement that binds a torch name, wherever it is, and the module's (``rule_imports``)."""
        if self.found_imports is None:
            self.found_imports = rule_imports(self.root, self.source)
        return self.found_imports


@dataclass
class Finding:
    """One place a rule converts (``edits``) or leaves for a human (``reason``, no edits)."""

    node: Any  # what is underlined (a tree-sitter node, or a (start, end) byte span)
    edits: list[TextEdit] = field(default_factory=list)
    title: str | None = None  # the fix's title; the rule's by default
    reason: str = ""  # why no fix (when ``edits`` is empty)
    record: dict | None = None  # the record reported; the rule's by default
    call_span: tuple[int, int] | None = None  # what re-analysis must treat as one piece; node and edits by default
    replaces: str | None = None  # a use of this torch name at the same place gives way to this finding
    site: Any = None  # a resolved site: the finding is the engine's use of it (``Context.use_of``), not ``edits``


class Rule:
    name: ClassVar[str]
    scope: ClassVar[str] = "file"
    record: ClassVar[dict[str, Any]]
    title: ClassVar[str]
    needs_torch_imports: ClassVar[bool] = True
    order: ClassVar[int] = 100
    example: ClassVar[str] = ""
    # words an edit must hold (in its text, or, for a rule of function scope, in the function it edits) for
    # the rule to be run again after it; none: after every edit. An edit inside a finding's text reruns it too.
    triggers: ClassVar[tuple[bytes, ...]] = ()

    def find(self, context: Context) -> Iterable[Finding]:
        raise NotImplementedError

    def inputs(self, context: Context) -> Hashable:
        """What the rule reads of the file beyond the piece of its scope and the torch names' uses there (cheap:
        asked after every edit); a rule whose findings depend on nothing else gives None."""
        return None

    def reaches(self, inputs: Hashable, edited: bytes) -> bool:
        """Whether an edit whose re-analysed text (old and new) is ``edited`` may change what the rule reads
        beyond the piece holding it, given its ``inputs`` (a call to one of the file's functions, when the rule
        follows calls): then it runs again in the whole file."""
        return False


@dataclass
class Added:
    """What an extension adds to one use: ``edits`` (none, when it has nothing to add yet) and ``reach``, the
    bytes they depend on (the class, the ``if`` branch): an edit there redoes the extension."""

    reach: tuple[int, int]
    edits: list[TextEdit] = field(default_factory=list)


class Extension:
    name: ClassVar[str]
    extends: ClassVar[str]  # the kind of the uses it adds edits to (``EXTENDED_KINDS``)
    order: ClassVar[int] = 100
    example: ClassVar[str] = ""

    def extend(self, context: Context, pairs: list[tuple[Any, Use]]) -> dict[int, Added]:
        """What it adds to ``pairs`` (a resolved site and its use, for the uses of its kind that have a fix),
        by index in ``pairs``: ``added`` of each pair, unless the uses belong together."""
        found = {}
        for index, (site, use) in enumerate(pairs):
            added = self.added(context, site, use)
            if added is not None:
                found[index] = added
        return found

    def added(self, context: Context, site: Any, use: Use) -> Added | None:
        raise NotImplementedError


@dataclass
class SiteContext:
    """What a site finder may read about one file (or the window of it an edit re-analyses)."""

    root: Any  # the tree-sitter module node
    source: bytes
    catalog: Any  # kb.analysis.catalog.Catalog
    settings: Any  # kb.analysis.settings.EngineSettings
    tensors: bool  # tensors can reach this file (it imports torch, or the project's tensors reach it)
    skip: set[str]  # names never taken for tensors (bound by torch imports, typed, classes)
    taken: set[tuple[int, int]]  # the spans of the sites found so far
    start: int = 0
    end: int | None = None  # (None: the end of the source)


class SiteFinder:
    name: ClassVar[str]
    order: ClassVar[int] = 100
    example: ClassVar[str] = ""

    def find(self, context: SiteContext) -> list[Any]:
        raise NotImplementedError


@dataclass
class Planning:
    """What a fallback may use to plan: the file's MindSpore alias, the records, and the engine's plan of
    another site (``planned(site)``: its ``Use``)."""

    alias: str
    lookup: Callable[[str], dict | None]
    planned: Callable[[Any], Use]


class Fallback:
    name: ClassVar[str]
    order: ClassVar[int] = 100
    example: ClassVar[str] = ""

    def applies(self, site: Any, choice: Any) -> bool:
        raise NotImplementedError

    def plan(self, planning: Planning, site: Any, choice: Any) -> tuple[str, list[TextEdit]] | None:
        raise NotImplementedError


class RenameFollower:
    name: ClassVar[str]
    order: ClassVar[int] = 100
    example: ClassVar[str] = ""

    def follow(self, local_class: Any, old: str, new: str) -> list[TextEdit]:
        raise NotImplementedError


_RULES: dict[str, Rule] = {}
_EXTENSIONS: dict[str, Extension] = {}
_FINDERS: dict[str, SiteFinder] = {}
_FALLBACKS: dict[str, Fallback] = {}
_FOLLOWERS: dict[str, RenameFollower] = {}
_KINDS: dict[type, tuple[str, dict]] = {Rule: ("rule", _RULES), Extension: ("extension", _EXTENSIONS),
                                        SiteFinder: ("site finder", _FINDERS), Fallback: ("fallback", _FALLBACKS),
                                        RenameFollower: ("rename follower", _FOLLOWERS)}
_LOADED = False
_ORDERED: dict[str, list] = {}  # kind -> its registered instances in order (filled on first read)
Registered = TypeVar("Registered", bound=Rule | Extension | SiteFinder | Fallback | RenameFollower)


def register(cls: type[Registered]) -> type[Registered]:
    """Class decorator: one instance of the rule (extension, site finder, fallback, rename follower) joins
    the registry."""
    if issubclass(cls, Extension) and cls.extends not in EXTENDED_KINDS:
        raise ValueError(f"extension {cls.name}: extends {cls.extends!r}, not one of {EXTENDED_KINDS}")
    if issubclass(cls, Rule) and cls.scope not in SCOPES:
        raise ValueError(f"rule {cls.name}: scope {cls.scope!r} is not one of {SCOPES}")
    base = next((b for b in _KINDS if issubclass(cls, b)), None)
    if base is None:
        raise ValueError(f"{cls.__name__} is none of the registry's kinds")
    kind, table = _KINDS[base]
    if not cls.example.strip():
        raise ValueError(f"{kind} {cls.name}: no example (a piece of torch code the {kind} converts)")
    known = next((t[cls.name] for _, t in _KINDS.values() if cls.name in t), None)
    if known is not None and type(known) is not cls:
        raise ValueError(f"two rules or extensions are named {cls.name}")
    table[cls.name] = cls()
    _ORDERED.clear()
    return cls


def _ordered(base: type) -> list:
    kind, table = _KINDS[base]
    found = _ORDERED.get(kind)
    if found is None:
        _load()
        found = _ORDERED[kind] = sorted(table.values(), key=lambda item: (item.order, item.name))
    return found


def registered() -> list[Rule]:
    """Every rule of this package, in the order they run."""
    return list(_ordered(Rule))


def extensions() -> list[Extension]:
    """Every extension of this package, in the order they run."""
    return list(_ordered(Extension))


def site_finders() -> list[SiteFinder]:
    return list(_ordered(SiteFinder))


def fallbacks() -> list[Fallback]:
    return list(_ordered(Fallback))


def rename_followers() -> list[RenameFollower]:
    return list(_ordered(RenameFollower))


def everything() -> list[Rule | Extension | SiteFinder | Fallback | RenameFollower]:
    """Every registered item of every kind (each has a ``name`` and an ``example``)."""
    return [item for base in _KINDS for item in _ordered(base)]


def find_sites(context: SiteContext, sites: list[Any]) -> list[Any]:
    """The sites every site finder adds to ``sites`` (the resolver's) in ``context``'s bytes."""
    added: list[Any] = []
    for finder in _ordered(SiteFinder):
        context.taken = {(s.node.start_byte, s.node.end_byte) for s in sites + added if s.node is not None}
        added += finder.find(context)
    return added


def fallback_for(site: Any, choice: Any) -> Fallback | None:
    """The first fallback that applies to a use of ``site`` whose target is ``choice``."""
    return next((fallback for fallback in _ordered(Fallback) if fallback.applies(site, choice)), None)


def follow_renames(local_class: Any, old: str, new: str) -> list[TextEdit]:
    """The edits that follow a migrated class's method ``old`` renamed ``new``, from every rename follower."""
    return [edit for follower in _ordered(RenameFollower) for edit in follower.follow(local_class, old, new)]


def _load() -> None:
    global _LOADED
    if not _LOADED:
        for module in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{module.name}")
        _LOADED = True


def rule_imports(root: Any, source: bytes) -> ImportTable:
    """The module's imports plus every import statement below it that names a torch package: the same
    table whether the engine analysed the file whole or re-analysed an edit."""
    table = ImportTable.build(root, source)
    if not mentions_roots(source):
        return table
    for keyword in (b"import", b"from"):
        for at in word_starts(source, keyword):
            if source[source.rfind(b"\n", 0, at) + 1:at].strip(b" \t;") and keyword == b"from":
                continue  # (a statement starts its line, or follows a ';': not ``yield from``, a docstring's word)
            node = root.named_descendant_for_byte_range(at, at + len(keyword))
            while node is not None and node.type not in IMPORT_TYPES and node.type != "module":
                node = node.parent if node.start_byte == at else None
            if node is not None and node.type in IMPORT_TYPES and mentions_roots(node.text):
                table.add(node)
    return table


def run(context: Context, only: set[str] | None = None) -> list[Use]:
    """The uses every registered rule (or those named in ``only``) finds in one file, rule by rule, each
    rule's in its order. A finding that ``replaces`` a torch name is returned with ``Use.rule`` set; the
    caller drops the uses of that name at the same place (``replaced``)."""
    found: list[Use] = []
    for rule in registered():
        if (rule.needs_torch_imports and not context.has_torch_imports) or (only is not None and rule.name not in only):
            continue
        found += [_use(rule, finding, context.source, context) for finding in rule.find(context)]
    return found


def extend(context: Context, sites: list[Any], uses: list[Use]) -> None:
    """Every extension, in its order, adds its edits to the uses of its kind that have a fix (``sites[i]`` is
    the resolved site of ``uses[i]``): after the use's own edits, its name in ``Use.extended_by``, and the
    bytes it read in ``Use.reach``."""
    for extension in extensions():
        pairs = [(site, use) for site, use in zip(sites, uses, strict=True)
                 if use.kind == extension.extends and use.edits]
        if not pairs:
            continue
        for index, added in extension.extend(context, pairs).items():
            use = pairs[index][1]
            reach = use.reach or added.reach
            use.reach = (min(reach[0], added.reach[0]), max(reach[1], added.reach[1]))
            if added.edits:
                use.edits = list(use.edits) + added.edits
                use.extended_by += (extension.name,)


def to_rerun(edited: bytes, function: bytes, touched: set[str]) -> set[str]:
    """The rules to run again after an edit: ``edited`` is the old and new text of the re-analysed window,
    ``function`` the function holding it (empty at module level), ``touched`` the rules one of whose
    findings the window overlaps. The others' findings cannot have changed (``triggers``)."""
    names = set(touched)
    for rule in registered():
        text = edited + function if rule.scope in ("function", "file") else edited
        if not rule.triggers or rule.scope == "file" or any(word in text for word in rule.triggers):
            names.add(rule.name)
    return names


def inputs(context: Context, names: Iterable[str]) -> dict[str, Hashable]:
    """Each named rule's ``inputs`` in ``context``'s file."""
    wanted = set(names)
    return {rule.name: rule.inputs(context) for rule in registered() if rule.name in wanted}


def region(scope: str, root: Any, start: int, end: int) -> tuple[int, int] | None:
    """The bytes a rule of ``scope`` runs again in after an edit of ``start..end`` (current offsets): the
    smallest piece holding all of it among a statement of the outermost function's body (expression, statement),
    the outermost class (class), the outermost function (all but class, and class outside a class) and the
    top-level statement (all). None: the whole file (file scope, or no such piece holds the edit)."""
    if scope == "file":
        return None
    node = root.descendant_for_byte_range(start, max(start, end - 1))
    chain = []
    while node is not None and node.parent is not None:
        chain.append(node)
        node = node.parent
    if not chain:
        return None
    pieces = [chain[-1]]  # (the top-level statement; then smaller pieces first)
    function = next((n for n in reversed(chain) if n.type == "function_definition"), None)
    if function is not None:
        pieces.insert(0, function)
        body = function.child_by_field_name("body")
        statement = next((n for n in chain if n.parent == body), None)
        if statement is not None and scope not in ("function", "class"):
            pieces.insert(0, statement)
    if scope == "class":  # (the outermost class holding the edit, else the function)
        pieces.insert(0, next((n for n in reversed(chain) if n.type == "class_definition"), pieces[0]))
    # (a larger piece is never wrong: every finding in it is found again)
    piece = next((p for p in pieces if p.start_byte <= start and end <= p.end_byte), None)
    return None if piece is None else (piece.start_byte, piece.end_byte)


def replaced(rule_uses: list[Use]) -> set[tuple[str, int, int]]:
    """(torch name, start, end) of the uses that rule findings take the place of."""
    return {(use.replaces, use.start, use.end) for use in rule_uses if use.replaces}


def hold_replaced(rule_uses: list[Use], gone: list[Use]) -> None:
    """Each rule use that ``replaces`` keeps the use of ``gone`` it takes the place of (``Use.replaced``)."""
    by_place = {(use.torch_name, use.start, use.end): use for use in gone}
    for use in rule_uses:
        if use.replaces:
            use.replaced = by_place.get((use.replaces, use.start, use.end))


def _use(rule: Rule, finding: Finding, source: bytes, context: Context) -> Use:
    if finding.site is not None and context.use_of is not None:
        use = context.use_of(finding.site)
        use.rule, use.replaces = rule.name, finding.replaces
        return use
    record = finding.record or rule.record
    if not isinstance(finding.node, tuple):
        node = finding.node
        start, end = node.start_byte, node.end_byte
        span = byte_range(source, start, end, node.start_point, node.end_point)
    else:
        start, end = finding.node
        span = context.lines().range(start, end) if context.lines is not None else byte_range(source, start, end)
    if finding.edits:
        use = Use(str(record["torch"]), "call", span, record, None, "direct", title=finding.title or rule.title,
                  edits=list(finding.edits))
    else:
        use = Use(str(record["torch"]), "call", span, record, None, "manual", reason=finding.reason)
    use.call_span = finding.call_span or (min([start] + [e.start for e in finding.edits]),
                                          max([end] + [e.end for e in finding.edits]))
    use.rule = rule.name
    use.replaces = finding.replaces
    return use
