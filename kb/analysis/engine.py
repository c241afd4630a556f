"""The engine: analyze a document into ``Use``s, and build ``Fix``es from them.

    engine = Engine(KB.open(), EngineSettings(family="mint"))
    analysis = engine.analyze(document)        # cached per document revision
    analysis.use_at(offset) / analysis.uses     # hover, diagnostics
    engine.fixes(document, use)                 # quick-fixes (import edit included)
    engine.fix_all(document)                    # see fixall.py

Analysis is cheap enough to redo on every edit: parsing is incremental
(``Document``), and the resolver only looks at places where torch names occur.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Hashable
from typing import Any

from kb.analysis import rules
from kb.analysis.catalog import Catalog, KnowledgeBase
from kb.analysis.document import Document
from kb.analysis.imports import ImportTable, choose_alias, mentions_roots
from kb.analysis.incremental import environment, reanalyze, settle
from kb.analysis.resolver import Resolver, Site
from kb.analysis.rewrite import (
    Blocked,
    bare_call,
    behaviour_note,
    in_type_context,
    is_auto,
    method_renames,
    plan,
    removes_construct,
    runs_as_written,
    unverified_consistent,
)
from kb.analysis.settings import EngineSettings, choose_target, member_target, relevant_caveats
from kb.analysis.text import LineIndex, Position, Range, TextEdit, byte_range
from kb.analysis.uses import Fix, Use, categorize, first_sentence

GUESS_REASON = "possibly a torch.Tensor method (the receiver's type is unknown)"


class Analysis:
    """Uses of one document revision, sorted by position, plus what fixes need."""

    def __init__(self, document: Document, uses: list[Use], alias: str, alias_edit: TextEdit | None,
                 ref_counts: dict[str, int] | Callable[[], dict[str, int]],
                 imports: ImportTable | None = None, environment: Any = None,
                 has_torch_imports: bool = False, ordered: bool = False,
                 spans: list[tuple[int, int]] | None = None, lag: list[tuple[int, int]] | None = None) -> None:
        self.document = document
        self.source = document.source  # the text analysed (the document may change later)
        self.tree = document.tree
        self.revision = document.revision
        self.version = document.version  # the LSP version of the analysed text
        uses = uses if ordered else sorted(uses, key=lambda u: (u.start, u.end))
        # (uses, lag): after a re-analysis, the uses that an edit only moved are the previous analysis's objects
        # and ``lag[i]`` says by how much (bytes, lines) ``uses[i]`` moved since; ``uses`` moves them on first
        # read.  One attribute, replaced whole: a reader in another thread sees one state or the other.
        self._held = (uses, lag)
        self.alias = alias
        self.alias_edit = alias_edit
        self._ref_counts = ref_counts  # a dict, or what computes it on first use
        self.imports = imports  # None after an incremental re-analysis
        self._environment = environment  # what incremental.reanalyze reuses (built on first need)
        self.has_torch_imports = has_torch_imports
        self.error: str | None = None  # set when analysis failed (an engine bug): no uses then
        self._starts = [u.start for u in uses] if lag is None else \
            [u.range.start.offset + moved[0] for u, moved in zip(uses, lag, strict=True)]  # (public: ``starts``)
        self._widest: int | None = None
        self._spans: list[tuple[int, int]] | None = spans
        self.rule_inputs: dict[str, Hashable] = {}  # each rule's ``inputs`` in this text (kb/analysis/reruns.py)

    @property
    def uses(self) -> list[Use]:
        uses, lag = self._held
        if lag is not None:
            uses = settle(uses, lag)
            self._held = (uses, None)
        return uses

    def held(self) -> tuple[list[Use], list[tuple[int, int]] | None]:
        """(uses, lag) as kept (see ``__init__``): what a re-analysis and the language server's diagnostics
        read, without moving every use the last edits moved."""
        return self._held

    def placed(self, index: int) -> Use:
        """``uses[index]``, moved to its place if it lags, without moving the others (a hover, a code
        action: one request after each keystroke should not copy every use the keystroke moved)."""
        uses, lag = self._held
        if lag is None or lag[index] == (0, 0):
            return uses[index]
        return settle([uses[index]], [lag[index]])[0]

    @property
    def ref_counts(self) -> dict[str, int]:
        """References per name bound by a torch import (fix-all's import clean-up)."""
        if callable(self._ref_counts):
            self._ref_counts = self._ref_counts()
        return self._ref_counts

    @property
    def environment(self) -> Any:
        if isinstance(self._environment, tuple):  # (resolver, skip) from a full analysis
            self._environment = environment(*self._environment)
        return self._environment

    @property
    def starts(self) -> list[int]:
        """The start offsets of ``uses``, in order (for bisecting)."""
        return self._starts

    @property
    def longest(self) -> int:
        """The longest span (see ``spans``)."""
        if getattr(self, "_longest", None) is None:
            self._longest = max((b - a for a, b in self.spans()), default=0)
        return self._longest

    def spans(self) -> list[tuple[int, int]]:
        """Per use, the bytes it depends on (``Use.extent``)."""
        if self._spans is None:
            self._spans = [u.extent() for u in self.uses]
        return self._spans

    @property
    def lines(self) -> LineIndex:
        """Line index of the analysed text (not of the document, which may have moved on)."""
        if getattr(self, "_lines", None) is None:
            self._lines = self.document.lines if self.document.source is self.source else LineIndex(self.source)
        return self._lines

    def offset(self, line: int, character: int) -> int:
        """Byte offset of an LSP position (UTF-16 character) in the analysed text."""
        return self.lines.offset(line, character)

    def use_at(self, offset: int) -> Use | None:
        """The innermost use whose range holds ``offset`` (hover)."""
        uses = self._held[0]  # (a use's length is the same wherever it moved; ``_starts`` are where they are)
        if self._widest is None:
            self._widest = max((u.end - u.start for u in uses), default=0)
        best, size = None, 0
        index = bisect_right(self._starts, offset) - 1
        while index >= 0 and self._starts[index] >= offset - self._widest:
            use, start = uses[index], self._starts[index]
            length = use.end - use.start
            if start <= offset <= start + length and (best is None or length < size):
                best, size = index, length
            index -= 1
        return None if best is None else self.placed(best)

    def uses_between(self, start: int, end: int) -> list[Use]:
        """Uses touching ``start..end`` (code actions for a selection)."""
        uses = self._held[0]
        if self._widest is None:
            self._widest = max((u.end - u.start for u in uses), default=0)
        first = bisect_left(self._starts, start - self._widest)  # (none before it reaches ``start``)
        return [self.placed(i) for i in range(first, bisect_right(self._starts, end))
                if self._starts[i] + uses[i].end - uses[i].start >= start]

    def fix(self, use: Use) -> Fix | None:
        if not use.edits:
            return None
        group = [] if use.group is None else [i for i, u in enumerate(self._held[0]) if u.group == use.group]
        uses = [self.placed(i) for i in group] or [use]
        edits = list(use.edits)
        if self.alias_edit is not None and self.needs_alias(edits):
            edits.append(self.alias_edit)
        lines = self.lines
        return Fix(use.title, [lines.edit(e) for e in edits], uses, safe=not use.guess,
                   changes_behaviour=use.behaviour is not None)

    def needs_alias(self, edits: list[TextEdit]) -> bool:
        """Whether ``edits`` write MindSpore's alias (``ms.nn.Dense``, a template's ``ms.ops.relu(x)``,
        an adapter's body) into a file that does not import it yet."""
        if self.alias_edit is None:
            return False
        pattern = re.compile(rf"(?<![\w.]){re.escape(self.alias)}\b(?!\s*=)")
        return any(pattern.search(e.new_text) for e in edits)

    def fixes(self) -> list[Fix]:
        """One fix per distinct edit set (a class migration is one fix for all its uses)."""
        found, seen = [], set()
        for use in self.uses:
            fix = self.fix(use)
            if fix is not None and fix.key not in seen:
                seen.add(fix.key)
                found.append(fix)
        return found


class Engine:
    def __init__(self, kb: KnowledgeBase | Catalog, settings: EngineSettings | None = None) -> None:
        self.catalog = kb if isinstance(kb, Catalog) else Catalog(kb)
        self._settings = settings or EngineSettings()
        # Planned rewrites by content (the call's text, relative offsets): an unchanged
        # call is not planned again after an edit elsewhere in the file.
        self._plans: dict[tuple, tuple] = {}
        self._choices: dict[int, Any] = {}  # id(record) -> see _verdict
        self._memos: dict[tuple, tuple] = {}  # see _memo
        self._settings_key = (self._settings.family, self._settings.ms_version, self._settings.device)

    @property
    def settings(self) -> EngineSettings:
        return self._settings

    @settings.setter
    def settings(self, value: EngineSettings) -> None:
        """New settings (the language server's didChangeConfiguration): caches start over."""
        self._settings = value
        self._settings_key = (value.family, value.ms_version, value.device)
        self._plans.clear()
        self._choices.clear()
        self._memos.clear()

    def analyze(self, document: Document | str | bytes) -> Analysis:
        """The document's uses; after a small edit only the edited statement is redone."""
        if not isinstance(document, Document):  # nobody else sees this document: no caching, and
            return self._analyze_safely(Document(document), None)  # no Document <-> Analysis cycle for the GC
        key = ("analysis", id(self), self.settings)
        previous = document.cache.get(key)
        if previous is not None and previous.revision == document.revision:
            return previous
        found = self._analyze_safely(document, previous)
        document.cache[key] = found
        return found

    def _analyze_safely(self, document: Document, previous: Analysis | None) -> Analysis:
        try:
            found = reanalyze(self, document, previous) if previous is not None else None
            return found if found is not None else self._analyze(document)
        except Exception as exc:  # never fail an editor or a scan: report nothing, say why
            found = Analysis(document, [], "ms", None, {})
            found.error = f"{type(exc).__name__}: {exc}"
            return found

    def fixes(self, document: Document | str | bytes, use: Use) -> list[Fix]:
        fix = self.analyze(document).fix(use)
        return [fix] if fix is not None else []

    def fix_all(self, document: Document | str | bytes, *, module: bool = False) -> Any:
        """Every safe fix at once: a ``fixall.FixAllResult`` (``.edit()`` is one LSP edit); ``module``: a
        module to run (convert), whose torch imports become stand-ins even where nothing else changed."""
        from kb.analysis.fixall import fix_all

        return fix_all(self, document, module=module)

    # -- internals -------------------------------------------------------------------
    def _analyze(self, document: Document) -> Analysis:
        source = document.source
        if not (mentions_roots(source) or self.settings.project_tensor_files):
            return Analysis(document, [], "ms", None, {})
        root = document.tree.root_node
        resolver = Resolver(root, source, self.catalog, document.imported_classes)
        sites = resolver.run()
        skip = {n.bound for _, n in resolver.imports.names}
        skip |= {b.name for bs in resolver.bindings.table.values() for b in bs if b.kind in ("typed", "class")}
        tensors = resolver.has_torch_imports or self.settings.project_tensor_files  # tensors can reach this file
        sites += rules.find_sites(rules.SiteContext(root, source, self.catalog, self.settings, tensors, skip, set()),
                                  sites)
        alias, alias_edit = choose_alias(root, source, resolver.imports)
        choices = {id(s): self.choose(s) for s in sites}
        base_apis = {s.local_class.key: choices[id(s)].api for s in sites
                     if s.kind == "class_base" and s.local_class is not None and choices[id(s)] is not None
                     and choices[id(s)].api}
        for site in sites:  # methods of a migrated class map to methods of its new base
            if site.kind == "method_def" and site.local_class is not None and site.local_class.key in base_apis:
                own = member_target(site.record, base_apis[site.local_class.key], self.settings)
                if own is not None:
                    choices[id(site)] = own
        renames: dict[int, list[TextEdit]] = {}
        for site in sites:
            if site.kind == "method_def" and site.local_class is not None:
                edit = method_renames(site, choices[id(site)])
                if edit is not None:
                    renames.setdefault(site.local_class.key, []).append(edit)
                    old = source[site.node.start_byte:site.node.end_byte].decode("utf-8", "replace")
                    renames[site.local_class.key] += rules.follow_renames(site.local_class, old, edit.new_text)
        direct_bases = {s.local_class.key for s in sites if s.kind == "class_base" and s.local_class}
        ascii = source.isascii()
        uses = [self._use(site, choices[id(site)], source, alias, renames, direct_bases, ascii) for site in sites]
        self.with_extensions(document, sites, uses, alias, resolver.has_torch_imports)
        read = uses  # (what the rules read)
        uses = self.with_rules(document, uses, alias, resolver.has_torch_imports)
        class_uses = {u.group: u for u in uses if u.kind == "class_base" and u.edits}
        bases = {u.group: u for u in uses if u.kind == "class_base"}
        for use in uses:  # a method of a migrated class is fixed by its class's migration
            if use.kind != "method_def" or use.group not in direct_bases:
                continue
            base = class_uses.get(use.group)
            if base is not None:
                use.title, use.edits, use.behaviour = base.title, base.edits, base.behaviour
            else:
                use.edits = []
                why = bases[use.group].reason if use.group in bases else ""
                use.reason = use.reason or f"its class is not migrated automatically ({why})"
            use.category = categorize(False, use.choice, bool(use.edits), use.behaviour)
        found = self._result(document, uses, alias, alias_edit, lambda: resolver.ref_counts, resolver.imports,
                             (resolver, skip), tensors)
        found.rule_inputs = self.rule_inputs(document, alias, resolver.has_torch_imports, self._named(read))
        return found

    def with_rules(self, document: Document, uses: list[Use], alias: str, has_torch_imports: bool,
                   named: Callable[..., list[Use]] | None = None,
                   only: set[str] | None = None, within: tuple[int, int] | None = None,
                   spans: Callable[[], set[tuple[int, int]]] | None = None,
                   inputs: dict[str, Hashable] | None = None) -> list[Use]:
        """``uses`` (the uses of torch names) with what every registered rule (those in ``only``) finds in
        the document (kb/analysis/rules), less the uses a finding replaces; rule uses come last, in rule order.
        ``named`` and ``spans``: the uses of torch names by prefix and all their spans, when not ``uses``."""
        context = self._context(document, uses, alias, has_torch_imports, named, within)
        if spans is not None:
            context.use_spans = spans
        context.known_inputs = inputs
        found = rules.run(context, only)
        gone = rules.replaced(found)
        if gone:
            rules.hold_replaced(found, [u for u in uses if (u.torch_name, u.start, u.end) in gone])
            uses = [u for u in uses if (u.torch_name, u.start, u.end) not in gone]
        return uses + found

    def rule_inputs(self, document: Document, alias: str, has_torch_imports: bool,
                    named: Callable[..., list[Use]] | None = None) -> dict[str, Hashable]:
        """Every registered rule's ``inputs`` in the document (what an edit compares to rerun it everywhere)."""
        context = self._context(document, [], alias, has_torch_imports, named)
        return rules.inputs(context, [rule.name for rule in rules.registered()])

    def with_extensions(self, document: Document, sites: list[Site], uses: list[Use], alias: str,
                        has_torch_imports: bool) -> None:
        """The edits every registered extension adds to ``uses`` (``sites[i]`` resolved ``uses[i]``), added to
        them in place (kb/analysis/rules: ``extend``)."""
        rules.extend(self._context(document, uses, alias, has_torch_imports), sites, uses)

    def _context(self, document: Document, uses: list[Use], alias: str, has_torch_imports: bool,
                 named: Callable[..., list[Use]] | None = None,
                 within: tuple[int, int] | None = None) -> rules.Context:
        """What a rule or an extension reads about ``document`` (``uses``: the uses of torch names so far)."""
        root, source = document.tree.root_node, document.source
        return rules.Context(root, source, None, alias, self.catalog, self.settings, has_torch_imports,
                             self.choose_record, named or self._named(uses), within or (0, len(source)),
                             lambda site: self.use_of(site, source, alias), document.imported_classes or {},
                             lines=(lambda: document.lines) if document.source is source else None)

    @staticmethod
    def _named(uses: list[Use]) -> Callable[..., list[Use]]:
        """The uses of torch names starting with one of some prefixes (``exact``: named so), among ``uses``."""
        def named(prefixes: tuple[str, ...], exact: bool = False) -> list[Use]:
            return [u for u in uses if (u.torch_name in prefixes if exact else u.torch_name.startswith(prefixes))]
        return named

    def choose_record(self, record: dict) -> Any:
        """The target choice for ``record`` under the current settings."""
        return self._verdict(record)[0]

    def _result(self, *args: Any) -> Analysis:
        return Analysis(*args)

    # -- the public API of incremental re-analysis (``kb.analysis.incremental``) -----------
    def incremental_analysis(self, document: Document, previous: Analysis, uses: list[Use],
                             spans: list[tuple[int, int]], alias_edit: TextEdit | None,
                             ref_counts: dict[str, int] | Callable[[], dict[str, int]],
                             environment: Any, lag: list[tuple[int, int]] | None = None) -> Analysis:
        """The ``Analysis`` of ``document`` made from ``previous`` after a local edit: ``uses`` (in order,
        each covering ``spans``, moved by ``lag``: see ``Analysis``), the import edit, reference counts and
        the environment the next re-analysis starts from; the rest (alias, torch imports) is ``previous``'s."""
        return self._result(document, uses, previous.alias, alias_edit, ref_counts, None, environment,
                            previous.has_torch_imports, True, spans, lag)

    def use_of(self, site: Site, source: bytes, alias: str) -> Use:
        """The use of one resolved site of ``source`` (a site of an edited window)."""
        return self._use(site, self.choose(site), source, alias, {}, set())

    def choose(self, site: Site) -> Any:
        return self._verdict(site.record)[0]

    def _verdict(self, record: dict) -> tuple:
        """(target choice, relevant caveats, record, per-use outcomes) of a record, once per record
        (new settings clear the table; the identity check guards against a reused id)."""
        found = self._choices.get(id(record))
        if found is None or found[2] is not record:
            choice = choose_target(record, self.settings)
            found = (choice, relevant_caveats(record, choice, self.settings), record, {})
            self._choices[id(record)] = found
        return found

    def _fixed(self, site: Site, choice: Any, caveats: list) -> Any:
        """(title, behaviour, reason, category) of a call or attribute use when its text cannot matter
        (no target, no equivalent, or a target that is never rewritten automatically); else False."""
        reason = self._missing_reason(site.record, choice)
        if reason is None and unverified_consistent(choice):
            return False  # decided per use: a call without arguments, a class reference (rewrite.plan)
        if reason is None and not is_auto(choice):
            reason = manual_reason(choice, caveats)
        elif reason is None:
            return False
        category = categorize(site.guess, choice, False, None)
        return "", None, GUESS_REASON if category == "guess" else reason, category

    def _missing_reason(self, record: dict, choice: Any) -> str | None:
        """Why a use has no MindSpore API to go to (no target, or no equivalent); None when it has one."""
        if choice is None:
            return f"no MindSpore {self.settings.ms_version} target in the KB"
        if (choice.relation == "no_equivalent" or not choice.api) and not choice.target.get("template"):
            return self._memo("none", record, choice.target, lambda: no_equivalent_reason(record, choice))
        return None

    def _use(self, site: Site, choice: Any, source: bytes, alias: str, renames: dict[int, list[TextEdit]],
             direct_bases: set[int], ascii: bool = False) -> Use:
        use = self._planned_use(site, choice, source, alias, renames, direct_bases, ascii)
        if (site.guess and choice is not None and not use.edits and not is_auto(choice)
                and not runs_as_written(site, choice)):
            # said even on a guess: if it is a tensor, it would fail here (no kernel) or a probe found it differ
            use.reason = manual_reason(choice, [])
            use.unchanged = False  # (as written it would not run, or not as torch)
        fallback = rules.fallback_for(site, choice)  # a registered plan for what the record leaves without a fix
        if fallback is not None:
            planning = rules.Planning(alias, self.catalog.lookup, lambda other: self._planned_use(
                other, self.choose(other), source, alias, {}, set(), ascii))
            try:
                planned = fallback.plan(planning, site, choice)
            except Blocked as blocked:
                use.reason = f"{manual_reason(choice, [])}; {blocked}"
            else:
                if planned is not None:
                    (use.title, use.edits), use.extended_by = planned, use.extended_by + (fallback.name,)
                    use.reason, use.behaviour, use.unchanged = "", None, False
                    use.category = categorize(site.guess, choice, True, None)
                    if use.category == "guess":
                        use.reason = GUESS_REASON
        return use

    def _planned_use(self, site: Site, choice: Any, source: bytes, alias: str, renames: dict[int, list[TextEdit]],
                     direct_bases: set[int], ascii: bool = False) -> Use:
        # A method called through an object (``model.to(...)``, ``opt.step()``) is underlined from its
        # name: the receiver is not the API (the call's span still covers it, for re-analysis).
        node = site.member if site.member is not None and site.call is not None else site.node
        if node is not None and ascii:  # columns are UTF-16 units, which ASCII bytes are one by one
            (line, column), (end_line, end_column) = node.start_point, node.end_point
            span = _new(Range, (_new(Position, (line, column, node.start_byte)),
                                _new(Position, (end_line, end_column, node.end_byte))))
        elif node is not None:
            span = byte_range(source, node.start_byte, node.end_byte, node.start_point, node.end_point)
        else:
            span = byte_range(source, site.start, site.end)
        verdict = self._verdict(site.record)
        as_type = site.kind == "attribute" and site.node is not None and in_type_context(site.node)
        if choice is verdict[0] and (site.kind == "call" or site.kind == "attribute") and not as_type:
            known = verdict[3]  # most uses: the verdict alone decides, once per record
            fixed = known.get(site.guess)
            if fixed is None:
                fixed = known[site.guess] = self._fixed(site, choice, verdict[1])
            if fixed is not False:
                use = Use(str(site.record.get("torch") or site.torch_name), site.kind, span, site.record, choice,
                          fixed[3], fixed[2], guess=site.guess, member=site.member is not None, caveats=verdict[1],
                          title=fixed[0], edits=[], behaviour=fixed[1])
                if site.call is not None:
                    use.call_span = (site.call.start_byte, site.call.end_byte)
                return use
        caveats = verdict[1] if choice is verdict[0] else relevant_caveats(site.record, choice, self.settings)
        group = site.local_class.key if site.local_class is not None else None
        use = Use(str(site.record.get("torch") or site.torch_name), site.kind, span, site.record, choice, "none",
                  guess=site.guess, member=site.member is not None, caveats=caveats, group=group)
        if site.call is not None:
            use.call_span = (site.call.start_byte, site.call.end_byte)
        missing = self._missing_reason(site.record, choice)
        typeless = missing is not None or not choice.api  # no MindSpore type, even where a call has a template
        if missing is not None:  # (a fallback may still plan it: device: torch.device -> device: object)
            use.reason = missing
        elif typeless and as_type:  # isinstance(d, torch.device): only its calls have a template
            use.reason = no_equivalent_reason(site.record, choice)
        elif site.kind == "import":
            use.reason = ""
        elif site.kind == "method_def" and group in direct_bases:
            pass  # its fix is the class migration's (filled in by ``_analyze``)
        else:
            use.title, use.edits, use.behaviour, use.reason = self._plan(site, choice, caveats, source, alias,
                                                                         renames.get(group, []) if group else [])
            use.unchanged = not use.edits and not use.reason and site.kind in ("call", "attribute")
        if site.kind == "import":
            use.category = categorize(False, choice, choice is not None and bool(choice.api), None)
            if choice is not None and choice.api:
                use.behaviour = behaviour_note(choice, caveats)
                use.category = categorize(False, choice, True, use.behaviour)
        else:
            use.category = categorize(site.guess, choice, bool(use.edits) or use.unchanged, use.behaviour)
        if use.category == "guess" and (use.edits or use.unchanged or not use.reason):
            use.reason = GUESS_REASON  # (a guess that would need a rewrite msmap cannot make keeps why)
        return use

    def _plan(self, site: Site, choice: Any, caveats: list, source: bytes, alias: str,
              renames: list[TextEdit]) -> tuple[str, list[TextEdit], str | None, str]:
        """(title, edits, behaviour, reason) for a site, cached by the text it covers.

        Class bases and method definitions are not cached: their plans depend on text
        outside the anchor (the class name in the title, the methods it renames).
        """
        class_migration = site.kind == "class_base" and choice.relation == "context_change"
        as_type = site.kind == "attribute" and in_type_context(site.node)
        templated = bool(choice.target.get("template")) and is_auto(choice)  # templates.py, even with no API
        removes = templated and removes_construct(choice)  # the construct goes
        same_class = site.kind == "attribute" and unverified_consistent(choice) and site.record.get("kind") == "class"
        if not (choice.api or templated) or not (is_auto(choice) or class_migration or as_type
                                                or bare_call(site, choice) or same_class):
            # what ``plan`` would refuse, whatever the text
            return "", [], None, self._memo("manual", choice.target, caveats, lambda: manual_reason(choice, caveats))
        anchor = site.call if site.call is not None else site.node
        key = None
        # Plans that read or write outside the anchor are not cached: a reference's (a partial's
        # arguments, a torch-signature adapter defined once per file), a removed construct's.
        reference = site.kind == "attribute" and not as_type
        # A call that unpacks ``**name`` may carry the rewrite of that name's factory dict (factorykwargs.py).
        if not renames and anchor is not None and site.kind not in ("class_base", "method_def") and not reference \
                and not removes and b"**" not in anchor.text:
            member = (site.member.start_byte - anchor.start_byte) if site.member is not None else -1
            key = (site.kind, as_type, site.torch_name, self._settings_key, alias,
                   site.node.start_byte - anchor.start_byte, site.node.end_byte - anchor.start_byte, member,
                   source[anchor.start_byte:anchor.end_byte])
            cached = self._plans.get(key)
            if cached is not None:
                title, edits, behaviour, reason = cached
                shift = anchor.start_byte
                return title, [TextEdit(e.start + shift, e.end + shift, e.new_text) for e in edits], behaviour, reason
        try:
            rewrite = plan(site, choice, caveats, source, alias, renames)
            result = (rewrite.title, rewrite.edits, rewrite.behaviour, "")
        except Blocked as blocked:
            reason = str(blocked)
            if "not an automatic rewrite" in reason:
                reason = manual_reason(choice, caveats)
            result = ("", [], None, reason)
        # a plan that writes outside the anchor (a helper's definition) is not cached: where it writes depends on
        # the rest of the file
        if key is not None and all(anchor.start_byte <= e.start and e.end <= anchor.end_byte for e in result[1]):
            if len(self._plans) > 50_000:
                self._plans.clear()
            shift = anchor.start_byte
            self._plans[key] = (result[0], [TextEdit(e.start - shift, e.end - shift, e.new_text) for e in result[1]],
                                result[2], result[3])
        return result


    def _memo(self, kind: str, first: Any, second: Any, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per (``first``, ``second``) by identity: the same few records recur thousands of times."""
        key = (kind, id(first), id(second))
        found = self._memos.get(key)
        if found is None or found[0] is not first or found[1] is not second:
            found = self._memos[key] = (first, second, compute())
        return found[2]


def no_equivalent_reason(record: dict, choice: Any) -> str:
    advice = record.get("advice") or choice.target.get("note")
    return "no MindSpore equivalent" + (f": {first_sentence(advice)}" if advice else "")


def manual_reason(choice: Any, caveats: list) -> str:
    """Why a use needs a human, in one line: the target's note, else its gravest caveat."""
    if not choice.runs:
        return f"no kernel on the configured device: {choice.api} did not run there in a probe"
    detail = first_sentence(choice.target.get("note"))
    if not detail:
        serious = [c for c in caveats if c.get("severity") in ("error", "warning")]
        detail = first_sentence(serious[0].get("title")) if serious else "not rewritten automatically"
    return f"{choice.relation.replace('_', ' ')}: {detail}"


_new = tuple.__new__  # builds a NamedTuple without its Python-level __new__ (a third of the cost)
