"""Re-analysis after a small edit: redo one statement, shift the rest.

An edit is *local* when the text it removes and the text it inserts hold none
of the names the resolver followed (``torch``, ``nn``, ``self``, ``opt`` ...),
no ``import``/``def``/``class``/``lambda``/``global`` keyword and no
``mindspore``, and it does not re-indent existing code (no edit in a line's
indentation, no line break followed by code on the same line): then no binding
or scope changed, and every use outside the edited statement is the same use,
moved by the edit's length (and line count).  The edited
statement (widened to any call that crosses it, and to whatever tree-sitter says
changed) is scanned again and resolved against the bindings of the last full
analysis, whose offsets are reached through the list of edits made since.
Whenever any of this does not hold, the caller falls back to a full analysis.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

from kb.analysis import rules
from kb.analysis.document import Document, common_prefix, common_suffix
from kb.analysis.imports import is_torch_path, mentions_roots
from kb.analysis.reruns import with_rules
from kb.analysis.resolver import Rediscovery, Resolver, count_references
from kb.analysis.text import Position, Range, TextEdit, utf16_len
from kb.analysis.uses import Use

_STRUCTURAL = re.compile(rb"\r|\b(?:import|from|def|class|lambda|global|nonlocal|async|ms|ms_|mindspore_ms)\b"
                         rb"|mindspore")
_SCOPES = frozenset({"function_definition", "class_definition", "lambda", "list_comprehension",
                     "set_comprehension", "dictionary_comprehension", "generator_expression", "module"})
_WORD = re.compile(rb"\w")
MAX_EDITS = 200  # after this many incremental steps, a full analysis starts a fresh base
SIMPLE_STATEMENTS = frozenset({
    "expression_statement", "return_statement", "delete_statement", "raise_statement", "assert_statement",
    "pass_statement", "break_statement", "continue_statement", "print_statement", "exec_statement",
    "type_alias_statement",
})


@dataclass
class Environment:
    """What a re-analysis reuses from the last full analysis."""

    resolver: Resolver  # bindings and scopes, in the offsets of the full analysis
    pattern: re.Pattern  # the names the resolver followed
    skip: set[str]  # receivers never taken for tensors
    refs: list[int]  # sorted offsets of references (current offsets)
    ref_names: list[str]  # their names, same order
    non_refs: list[int]  # sorted offsets of binding occurrences (current offsets)
    edits: list[tuple[int, int, int]] = field(default_factory=list)  # (start, new end, delta) since the base
    counted: frozenset = frozenset()  # names whose references are counted (bound by torch imports)


def to_base(edits: list[tuple[int, int, int]], offset: int) -> int:
    """An offset of the current text, in the text the base analysis saw."""
    for start, new_end, delta in reversed(edits):
        if offset >= new_end:
            offset -= delta
        elif offset > start:
            offset = start
    return offset


def environment(resolver: Resolver, skip: set[str]) -> Environment:
    names = sorted(resolver.names, key=len, reverse=True) or ["torch"]
    pattern = re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in names) + rb")\b")
    refs = sorted(resolver.refs)
    counted = frozenset(n.bound for _, n in resolver.imports.names if is_torch_path(n.target))
    return Environment(resolver, pattern, skip, refs, [resolver.refs[r].name for r in refs],
                       sorted(resolver.non_refs), counted=counted)


def _word_bounds(source: bytes, start: int, end: int) -> tuple[int, int]:
    while start > 0 and _WORD.match(source, start - 1):
        start -= 1
    while end < len(source) and _WORD.match(source, end):
        end += 1
    return start, end


def _statement_span(root: Any, source: bytes, start: int, end: int) -> tuple[int, int]:
    node = root.descendant_for_byte_range(start, max(start, end - 1) if end > start else start)
    while node is not None and node.type not in SIMPLE_STATEMENTS and node.type not in ("block", "module"):
        node = node.parent
    if node is not None and node.type in SIMPLE_STATEMENTS:
        return min(start, node.start_byte), max(end, node.end_byte)
    line_start = source.rfind(b"\n", 0, start) + 1
    line_end = source.find(b"\n", end)
    return line_start, len(source) if line_end < 0 else line_end


def _statement_end(root: Any, offset: int) -> int:
    """End of the module-level statement at ``offset`` (or of the next one, when ``offset`` is in the
    blanks before it: an indented first line); ``offset`` when none is there.
    (Not ``Node.first_child_for_byte``: it crashes the process when no child lies past the byte.)"""
    node = root.descendant_for_byte_range(offset, offset)
    if node is None or node == root:
        following = next((child for child in root.children if child.end_byte > offset), None)
        return offset if following is None else max(offset, following.end_byte)
    parent = node.parent
    while parent is not None and parent != root:
        node, parent = parent, parent.parent
    return max(offset, node.end_byte)


_new = tuple.__new__  # builds a NamedTuple without its Python-level __new__
_FIELDS = [f.name for f in fields(Use)]
_VALUES = attrgetter(*_FIELDS)
_RANGE, _EDITS, _CALL_SPAN, _REACH = (_FIELDS.index(name) for name in ("range", "edits", "call_span", "reach"))


def _copy(use: Use, changes: dict[int, Any]) -> Use:
    """A copy of ``use`` with the fields at the indexes of ``changes`` replaced.  Built by ``Use``'s own
    constructor: copying ``__dict__`` would make each copy (and the original) carry a dict object, one
    more for the garbage collector to track per moved use, for as long as the analysis is kept."""
    values = list(_VALUES(use))
    for index, value in changes.items():
        values[index] = value
    return Use(*values)


STILL = (0, 0)  # the lag of a use at its place (see ``moved``)


def settle(uses: list[Use], lag: list[tuple[int, int]]) -> list[Use]:
    """``uses`` each moved by its lag (bytes, lines): see ``moved``."""
    return [_settled(use, *moved) if moved[0] or moved[1] else use for use, moved in zip(uses, lag, strict=True)]


def _settled(use: Use, delta: int, lines: int) -> Use:
    """A copy of ``use`` moved ``delta`` bytes and ``lines`` lines, all of it (its line and every fix
    after the edits that moved it: ``moved`` lags no other use), at the same column."""
    start, end = use.range
    changes: dict[int, Any] = {
        _RANGE: _new(Range, (_new(Position, (start.line + lines, start.character, start.offset + delta)),
                             _new(Position, (end.line + lines, end.character, end.offset + delta))))}
    if use.edits:
        changes[_EDITS] = [TextEdit(e.start + delta, e.end + delta, e.new_text) for e in use.edits]
    _shift_spans(use, delta, changes)
    return _copy(use, changes)


def _shift_spans(use: Use, delta: int, changes: dict[int, Any]) -> None:
    """Its call and its extensions' reach moved ``delta`` bytes, into ``changes``."""
    if use.call_span is not None:
        changes[_CALL_SPAN] = (use.call_span[0] + delta, use.call_span[1] + delta)
    if use.reach is not None:
        changes[_REACH] = (use.reach[0] + delta, use.reach[1] + delta)


def _shift_use(use: Any, at: int, delta: int, source: bytes, edit_line: int, lines: int) -> Any:
    """``use`` moved by ``delta`` bytes and ``lines`` lines (it lies after the edit at ``at``,
    which ended on old line ``edit_line``); the original is untouched."""
    start, end = use.range
    changes: dict[int, Any] = {}
    if start.line != edit_line and end.line != edit_line:  # (tuple.__new__: a third of NamedTuple's cost)
        changes[_RANGE] = _new(Range, (_new(Position, (start.line + lines, start.character, start.offset + delta)),
                                       _new(Position, (end.line + lines, end.character, end.offset + delta))))
    else:
        def position(p: Position) -> Position:
            offset = p.offset + delta
            line_start = source.rfind(b"\n", 0, offset) + 1
            return Position(p.line + lines, utf16_len(source[line_start:offset]), offset)

        changes[_RANGE] = Range(position(start), position(end))
    if use.edits:
        changes[_EDITS] = [TextEdit(e.start + delta, e.end + delta, e.new_text) if e.start >= at else e
                           for e in use.edits]
    _shift_spans(use, delta, changes)
    return _copy(use, changes)


def _broken(root: Any, start: int, end: int) -> bool:
    """True when the syntax around ``start..end`` has an error (or a missing token)."""
    node = root.descendant_for_byte_range(start, max(start, end - 1))
    while node is not None and (node.start_byte > start or node.end_byte < end):
        node = node.parent
    node = node or root
    while node is not None and node.type not in SIMPLE_STATEMENTS and node.parent is not None and \
            node.parent.type not in ("block", "module"):
        node = node.parent
    return node is None or node.has_error or node.is_missing


_SPLAT = re.compile(rb"[(,][ \t\n]*\*\*?[ \t]*([A-Za-z_]\w*)")  # f(*args), g(x, **dd): not a * b


def _feeds_a_splat(window: bytes, source: bytes) -> bool:
    """Whether ``window`` (the old and new text of the edited statements) mentions a name that a call in
    ``source`` unpacks (``*args``, ``**dd``): how such a call converts depends on what that name holds
    (a factory dict's keys, a tuple's length), so every use must be looked at again."""
    splatted = {m[1] for m in _SPLAT.finditer(source)}
    return bool(splatted) and any(word in splatted for word in re.findall(rb"[A-Za-z_]\w*", window))


def _enclosing(root: Any, start: int, end: int, types: Any) -> Any:
    node = root.descendant_for_byte_range(start, max(start, end - 1))
    while node is not None and (node.start_byte > start or node.end_byte < end or node.type not in types):
        node = node.parent
    return node


def _same_scope(edited: Any, root: Any, source: bytes, lo: int, hi: int, breaks: bool) -> bool:
    """Whether the window ``lo..hi`` lies in the same scope in the old tree (``edited``: told about
    the edit, so in current offsets) and the new one, and, for an edit with line breaks, in one
    block of simple statements owned by the same node."""
    piece = source[lo:hi]
    if piece.strip():  # a block starts at its first statement, not at the line's indentation
        lo, hi = lo + len(piece) - len(piece.lstrip()), hi - len(piece) + len(piece.rstrip())
    pairs = [(_enclosing(edited, lo, hi, _SCOPES), _enclosing(root, lo, hi, _SCOPES))]
    if breaks:
        blocks = ("block", "module")
        # (in the old tree a block starting where the edit inserted was moved past the insertion)
        pairs.append((_enclosing(edited, max(lo, hi - 1), hi, blocks), _enclosing(root, lo, hi, blocks)))
    for before, after in pairs:
        if before is None or after is None or before.type != after.type or before.end_byte != after.end_byte:
            return False
        if before.type == "block":  # a block may start with the edit: compare its owner
            before, after = before.parent, after.parent
            if before is None or after is None or before.type != after.type:
                return False
        if before.start_byte != after.start_byte:
            return False
    if breaks:
        for node in (pairs[1][0], pairs[1][1]):
            for child in node.named_children:
                if child.end_byte >= lo and child.start_byte <= hi and child.type not in SIMPLE_STATEMENTS \
                        and child.type != "comment":
                    return False
    return True


def _shift_edits(use: Any, at: int, delta: int) -> Any:
    """``use`` (before the edit) whose fix reaches past it (a class migration's renames)."""
    return _copy(use, {_EDITS: [TextEdit(e.start + delta, e.end + delta, e.new_text) if e.start >= at else e
                                for e in use.edits]})


def edit_span(old: bytes, new: bytes) -> tuple[int, int, int]:
    """(start, old end, new end) of the one edit that turns ``old`` into ``new``; a pure insertion or
    deletion of whole lines is slid to its line's start."""
    start = common_prefix(old, new)
    tail = common_suffix(old, new, min(len(old), len(new)) - start)
    old_end, new_end = len(old) - tail, len(new) - tail
    if (old_end == start) != (new_end == start):
        piece = new[start:new_end] if old_end == start else old[start:old_end]
        column = start - (old.rfind(b"\n", 0, start) + 1)
        if b"\n" in piece and column and piece.endswith(old[start - column : start]):
            start, old_end, new_end = start - column, old_end - column, new_end - column
    return start, old_end, new_end


def widen(previous: Any, spans: list[tuple[int, int]], lo: int, hi: int, start: int, delta: int,
          to_old: Callable[..., int]) -> tuple[int, int] | None:
    """The window [lo, hi) widened over every use that crosses it (and what its extensions read: the window's
    uses are extended again, ``window_uses``); None when an import, a class base or a method definition
    does (a full analysis is needed)."""
    uses = previous.held()[0]  # (a use's kind: as it was, however far it moved)
    widened = True
    while widened:
        widened = False
        old_lo, old_hi = to_old(lo), to_old(hi, True)
        # spans are sorted by start; a use crossing the window starts before its end
        first = bisect_left(previous.starts, old_lo - previous.longest)
        last = bisect_right(previous.starts, old_hi)
        for index in range(first, last):
            a, b = spans[index]
            if b < old_lo or a > old_hi or uses[index].rule is not None:
                continue  # (a rule's finding is found again after every edit: ``with_rules``)
            if uses[index].kind in ("import", "class_base", "method_def"):
                return None
            new_a, new_b = (a if a <= start else a + delta), (b if b < start else b + delta)
            if new_a < lo or new_b > hi:
                lo, hi = min(lo, new_a), max(hi, new_b)
                widened = True
    return lo, hi


def window_sites(env: Environment, root: Any, new: bytes, lo: int, hi: int,
                 base_edits: list[tuple[int, int, int]]) -> tuple[list[Any], list[tuple[int, str]]] | None:
    """The resolved sites of the references in [lo, hi) of ``new`` and every reference found there
    (offset, name); None when resolving would need a new binding (a full analysis is needed)."""
    env.resolver.frozen = True
    sites = []
    try:
        new_refs: list[tuple[int, str]] = []
        for match in env.pattern.finditer(new, lo, hi):
            ref = Resolver.reference_at(root, new, match.start(), match.end())
            if ref is None:
                continue
            new_refs.append((match.start(), ref.name))
            site = env.resolver.resolve(ref, to_base(base_edits, match.start()))
            if site is not None:
                sites.append(site)
    except Rediscovery:
        return None
    finally:
        env.resolver.frozen = False
    return sites, new_refs


def shifted_references(env: Environment, old_lo: int, old_hi: int, delta: int,
                       new_refs: list[tuple[int, str]]) -> tuple[list[int], list[str], dict[str, int]]:
    """References after the edit: the window's old ones dropped, the rest shifted, the new ones added
    (the window is [lo, hi): a reference starting at its end was not scanned again, so it is kept);
    with the count of each counted name."""
    first, last = bisect_left(env.refs, old_lo), bisect_left(env.refs, old_hi)
    refs = env.refs[:first] + [o + delta for o in env.refs[last:]]
    ref_names = env.ref_names[:first] + env.ref_names[last:]
    for offset, name in new_refs:
        index = bisect_left(refs, offset)
        refs.insert(index, offset)
        ref_names.insert(index, name)
    counts: dict[str, int] = {}
    for name in ref_names:
        if name in env.counted:
            counts[name] = counts.get(name, 0) + 1
    return refs, ref_names, counts


@dataclass(frozen=True)
class Edit:
    """The one edit between the analysed text and the document's: ``old[start:old_end]`` became
    ``new[start:new_end]``, changing the line count by ``lines``."""

    start: int
    old_end: int
    new_end: int
    lines: int
    breaks: bool  # it removed or inserted a line break
    names: bool  # it removed or inserted a name the resolver follows

    @property
    def delta(self) -> int:
        return self.new_end - self.old_end

    def to_old(self, offset: int, high: bool = False) -> int:
        """``offset`` in the old text; inside the edit, its start (or its old end, for a window's end)."""
        if offset < self.start or (offset == self.start and not high):
            return offset
        return offset - self.delta if offset >= self.new_end else self.old_end if high else self.start


@dataclass
class Parts:
    """The uses of the previous analysis on either side of the re-analysed window, with their spans
    and lags (see ``moved``)."""

    before: list[Any]
    before_spans: list[tuple[int, int]]
    after: list[Any]
    after_spans: list[tuple[int, int]]
    before_lag: list[tuple[int, int]]
    after_lag: list[tuple[int, int]]


def reanalyze(engine: Any, document: Document, previous: Any) -> Any | None:
    """A new ``Analysis`` built from ``previous``, or None when a full analysis is needed."""
    env: Environment | None = previous.environment
    dirty = document.dirty_since(previous.revision)
    if env is None or dirty is None or len(env.edits) >= MAX_EDITS:
        return None
    edit = local_edit(previous, document, env)
    if edit is None:
        return None
    window = edited_window(previous, document, edit, dirty)
    if window is None:
        return None
    lo, hi = window
    old_lo, old_hi = edit.to_old(lo), edit.to_old(hi, True)
    if _feeds_a_splat(previous.source[old_lo:old_hi] + b" " + document.source[lo:hi], document.source):
        return None  # a call elsewhere unpacks a name the window mentions (``torch.zeros(n, **dd)``)
    if env.non_refs and bisect_left(env.non_refs, old_lo) != bisect_right(env.non_refs, old_hi):
        return None  # a binding occurrence (an assignment's target) in the window
    base_edits = env.edits + [(edit.start, edit.new_end, edit.delta)]
    redone = window_uses(engine, env, previous, document, lo, hi, base_edits)
    if redone is None:
        return None
    window_list, new_refs = redone
    parts = moved(kept_parts(previous, old_lo, old_hi), edit, previous.source, document.source, (old_lo, old_hi))
    if parts is None:
        return None
    window_spans = [u.extent() for u in window_list]
    following, ref_counts = next_environment(env, document, edit, old_lo, old_hi, new_refs, base_edits)
    alias_edit = previous.alias_edit
    if alias_edit is not None and alias_edit.start >= edit.start:
        alias_edit = TextEdit(alias_edit.start + edit.delta, alias_edit.end + edit.delta, alias_edit.new_text)
    ruled = with_rules(engine, document, previous.alias, env.resolver.has_torch_imports,
                       parts.before + window_list + parts.after, parts.before_spans + window_spans + parts.after_spans,
                       parts.before_lag + [STILL] * len(window_list) + parts.after_lag, previous,
                       (edit.start, edit.old_end, edit.new_end), (old_lo, old_hi), (lo, hi), _settled)
    if ruled is None:
        return None
    uses, spans, lag, inputs = ruled
    found = engine.incremental_analysis(document, previous, uses, spans, alias_edit, ref_counts, following, lag)
    found.rule_inputs = inputs
    return found


def local_edit(previous: Any, document: Document, env: Environment) -> Edit | None:
    """The edit since ``previous``, when it is local (see the module's doc); else None."""
    old, new = previous.source, document.source
    if not mentions_roots(new):
        return None
    start, old_end, new_end = edit_span(old, new)
    names = False
    for text, (a, b) in ((old, _word_bounds(old, start, old_end)), (new, _word_bounds(new, start, new_end))):
        piece = text[a:b]
        if _STRUCTURAL.search(piece):
            return None
        names = names or env.pattern.search(piece) is not None
    line_start = new.rfind(b"\n", 0, start) + 1
    line_end = new.find(b"\n", new_end)
    rest = new[new_end : len(new) if line_end < 0 else line_end].strip()
    lines = new.count(b"\n", start, new_end) - old.count(b"\n", start, old_end)
    breaks = b"\n" in old[start:old_end] or b"\n" in new[start:new_end]
    if rest and breaks:  # code after the edit moves: only when it still starts its line, as indented
        old_prefix = old[old.rfind(b"\n", 0, old_end) + 1 : old_end]
        if old_prefix.strip() or old_prefix != new[new.rfind(b"\n", 0, new_end) + 1 : new_end]:
            return None
    elif rest and not new[line_start:start].strip():
        return None  # existing code would move to another indentation
    if previous.alias_edit is not None and start <= _statement_end(previous.tree.root_node, previous.alias_edit.start):
        return None  # where ``import mindspore`` goes (before that statement, after a docstring) may change
    return Edit(start, old_end, new_end, lines, breaks, names)


def edited_window(previous: Any, document: Document, edit: Edit,
                  dirty: list[tuple[int, int]]) -> tuple[int, int] | None:
    """The bytes of the new text to scan again: the edited statement, widened over every use that
    crosses it and over what tree-sitter says changed; None when a full analysis is needed."""
    new, root = document.source, document.tree.root_node
    word_lo, word_hi = _word_bounds(new, edit.start, edit.new_end)  # a word edited in its middle was another word
    lo = min([edit.start, word_lo] + [a for a, _ in dirty])
    hi = max([edit.new_end, word_hi] + [b for _, b in dirty])
    lo, hi = _statement_span(root, new, lo, hi)
    window = widen(previous, previous.spans(), lo, hi, edit.start, edit.delta, edit.to_old)
    if window is None:
        return None
    lo, hi = window
    old_root = previous.tree.root_node
    if _broken(root, lo, hi) or _broken(old_root, edit.to_old(lo), edit.to_old(hi, True)):
        return None  # error recovery may have regrouped code around the window
    if (edit.breaks or edit.names) and (document.revision != previous.revision + 1 or
                                        not _same_scope(old_root, root, new, lo, hi, edit.breaks)):
        return None  # new lines or names: the window must sit in the same scope and block as before
    return lo, hi


def kept_parts(previous: Any, old_lo: int, old_hi: int) -> Parts:
    """The previous uses before and after the window ``old_lo..old_hi`` (old offsets), as they were."""
    spans = previous.spans()
    uses, lag = previous.held()
    lag = lag or [STILL] * len(uses)
    cut_lo = bisect_left(previous.starts, old_lo - previous.longest)
    cut_hi = bisect_right(previous.starts, old_hi)
    before, before_spans, before_lag = uses[:cut_lo], spans[:cut_lo], lag[:cut_lo]
    for index in range(cut_lo, cut_hi):
        if spans[index][1] < old_lo:
            before.append(uses[index])
            before_spans.append(spans[index])
            before_lag.append(lag[index])
    return Parts(before, before_spans, uses[cut_hi:], spans[cut_hi:], before_lag, lag[cut_hi:])


def window_uses(engine: Any, env: Environment, previous: Any, document: Document, lo: int, hi: int,
                base_edits: list[tuple[int, int, int]]) -> tuple[list[Any], list[tuple[int, str]]] | None:
    """The uses in the window, sorted, and the references found there; None when a full analysis is needed."""
    new, root = document.source, document.tree.root_node
    found = window_sites(env, root, new, lo, hi, base_edits)
    if found is None:
        return None
    sites, new_refs = found
    sites += rules.find_sites(rules.SiteContext(root, new, engine.catalog, engine.settings,
                                                previous.has_torch_imports, env.skip, set(), lo, hi), sites)
    uses = [engine.use_of(site, new, previous.alias) for site in sites]
    engine.with_extensions(document, sites, uses, previous.alias, previous.has_torch_imports)
    return sorted(uses, key=lambda u: (u.start, u.end)), new_refs


def moved(parts: Parts, edit: Edit, old: bytes, new: bytes, window: tuple[int, int]) -> Parts | None:
    """``parts`` in the new text: uses after the edit shifted by its length and line count, fixes
    of uses before it that reach past it shifted where they do; None (a full analysis is needed) when
    a fix of one of them writes inside the re-analysed ``window`` (old offsets), whose text its plan
    read (a class migration renaming ``super().forward`` in a method below: edited, it may no longer be
    that call).

    A use on a later line than the edit, whose fixes all lie after it, moves by whole lines and
    bytes, its columns unchanged: it is kept as it is, with its lag (bytes, lines since it was
    built) grown by the edit's, and moved when someone reads it (``Analysis.uses``).  A keystroke
    then builds no copy of the thousand uses below it, and leaves none for the garbage collector.
    The rest (on the edit's line, or with a fix before the edit) is moved at once."""
    if not (edit.delta or edit.lines):
        return parts
    delta, lines, at = edit.delta, edit.lines, edit.start
    edit_line = old.count(b"\n", 0, edit.old_end)
    after, after_lag = [], []
    grown: dict[tuple[int, int], tuple[int, int]] = {}  # old lag -> new: one tuple per distinct lag
    on_line = True  # (the uses on the edit's line come first: ``after`` is in order)
    for use, lagged in zip(parts.after, parts.after_lag, strict=True):
        on_line = on_line and use.range.start.line + lagged[1] == edit_line
        edits = use.edits
        if not on_line and (not edits or min(e.start for e in edits) + lagged[0] >= at):
            after.append(use)
            found = grown.get(lagged)
            if found is None:
                found = grown[lagged] = (lagged[0] + delta, lagged[1] + lines)
            after_lag.append(found)
            continue
        if _inside(edits, lagged[0], window):
            return None
        if lagged != STILL:
            use = _settled(use, *lagged)
        after.append(_shift_use(use, at, delta, new, edit_line, lines))
        after_lag.append(STILL)
    before, before_lag = [], []
    for use, lagged in zip(parts.before, parts.before_lag, strict=True):
        if use.edits and use.edits[-1].end + lagged[0] > window[0] and _inside(use.edits, lagged[0], window):
            return None
        if use.edits and use.edits[-1].end + lagged[0] > at:
            use = _shift_edits(_settled(use, *lagged) if lagged != STILL else use, at, delta)
            lagged = STILL
        before.append(use)
        before_lag.append(lagged)
    return Parts(before, parts.before_spans, after, [(a + delta, b + delta) for a, b in parts.after_spans],
                 before_lag, after_lag)


def _inside(edits: list[TextEdit], lag: int, window: tuple[int, int]) -> bool:
    """Whether an edit of a fix (``lag`` bytes behind the text it was planned in) writes inside ``window``."""
    lo, hi = window
    return any(e.start + lag < hi and e.end + lag > lo for e in edits)


def next_environment(env: Environment, document: Document, edit: Edit, old_lo: int, old_hi: int,
                     new_refs: list[tuple[int, str]],
                     base_edits: list[tuple[int, int, int]]) -> tuple[Environment, Any]:
    """The environment the next re-analysis starts from, and the reference counts of this one
    (a dict, or what computes it on first use)."""
    refs, ref_names, counts = shifted_references(env, old_lo, old_hi, edit.delta, new_refs)
    unfollowed = env.counted - env.resolver.names  # see Resolver.ref_counts: counted on demand
    ref_counts: Any = counts
    if unfollowed:
        tree, text = document.tree, document.source
        ref_counts = lambda: {**counts, **count_references(tree.root_node, text, unfollowed)}  # noqa: E731
    non_refs = [o if o < edit.start else o + edit.delta for o in env.non_refs]
    following = Environment(env.resolver, env.pattern, env.skip, refs, ref_names, non_refs, base_edits, env.counted)
    return following, ref_counts
