"""Fix-all: every safe fix, the MindSpore import once, torch imports left unused removed.

Fixes are collected in one pass; those whose edits overlap an already chosen
one (a call nested in another call's argument) wait for the next pass, which
re-analyzes the new text.  Each pass's result must parse (``parses``); a fix
that breaks parsing is dropped and the rest go on.  The loop ends when a pass
finds nothing to do, so running fix-all on its own output changes nothing.
A source that does not parse to begin with comes back unchanged.
"""
from __future__ import annotations

import ast
import bisect
import re
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from kb.analysis import guarded, standins
from kb.analysis.document import Document, common_prefix, common_suffix
from kb.analysis.engine import GUESS_REASON
from kb.analysis.imports import is_torch_path
from kb.analysis.tensors import confident_guesses
from kb.analysis.text import TextEdit, apply_edits, decode, encode
from kb.analysis.uses import first_sentence

MAX_PASSES = 25
DEFINITION = re.compile(r"\n*(?:def|class) (\w+)\(")  # an adapter's or helper's definition (adapters.insertion)


def _defines(edit: TextEdit) -> str | None:
    """The name an inserted adapter or helper definition defines, if the edit is one."""
    found = DEFINITION.match(edit.new_text) if edit.start == edit.end else None
    return found[1] if found else None


def _joined_definitions(edits: list[TextEdit]) -> list[TextEdit]:
    """Definitions inserted at the same place become one insertion (in the order asked for)."""
    at: dict[int, int] = {}  # place -> index in ``joined`` of the definition written there
    joined: list[TextEdit] = []
    for edit in edits:
        if _defines(edit) and edit.start in at:
            index = at[edit.start]
            joined[index] = TextEdit(edit.start, edit.end, joined[index].new_text + edit.new_text)
            continue
        if _defines(edit):
            at[edit.start] = len(joined)
        joined.append(edit)
    return joined


def parses(source: bytes) -> str | None:
    """None when ``source`` is valid Python (``ast.parse`` takes it), else a one-line reason.

    ``compile`` answers first: it builds no Python objects for the syntax tree (``ast.parse``
    builds about 23 for ``x = torch.cat([x, y], dim=0)``, which the garbage collector then walks).
    It also refuses some code ``ast.parse`` takes (``return`` outside a function), so only when
    it refuses does ``ast.parse`` give the verdict and the reason."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(source, "<fix-all>", "exec", dont_inherit=True)
            return None
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            pass
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source)
    except SyntaxError as exc:
        return f"syntax error at line {exc.lineno}: {exc.msg}"
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        return f"cannot parse: {type(exc).__name__}"
    return None


@dataclass
class Leftover:
    """A use fix-all could not convert, located in the new text."""

    torch_name: str
    offset: int
    category: str
    reason: str
    line: int = 0  # 1-based line in the new text (filled by convert)


@dataclass
class FixAllResult:
    source: bytes  # the new text
    original: bytes
    applied: list[str] = field(default_factory=list)  # titles of the fixes applied
    dropped: list[str] = field(default_factory=list)  # fixes dropped because the result did not parse
    error: str | None = None  # why nothing was done (the input does not parse)
    found: int = 0  # torch uses in the original (imports and guesses not counted)
    apis: dict[str, int] = field(default_factory=dict)  # torch name -> uses found (the performance summary)
    left: list[Leftover] = field(default_factory=list)  # uses not converted, at offsets in ``source``
    # possible torch.Tensor method calls that need a rewrite, on receivers not known to be tensors
    # (``obj.size(0)``): not counted as uses, but marked by convert so no known crash goes unmarked
    unsure: list[Leftover] = field(default_factory=list)
    guarded: int = 0  # of ``found``: guessed tensor methods rewritten behind a runtime type test (guarded.py)

    @property
    def changed(self) -> bool:
        return self.source != self.original

    @property
    def converted(self) -> int:
        """Uses converted: those found less those left."""
        return self.found - len(self.left)

    @property
    def text(self) -> str:
        return decode(self.source)

    def edit(self) -> TextEdit | None:
        """One edit (on the original) that turns it into the result: its changed middle."""
        if not self.changed:
            return None
        old, new = self.original, self.source
        start = common_prefix(old, new)
        tail = common_suffix(old, new, min(len(old), len(new)) - start)
        while 0 < start < len(old) and (old[start] & 0xC0) == 0x80:  # whole UTF-8 characters
            start -= 1
        while tail > 0 and (old[len(old) - tail] & 0xC0) == 0x80:
            tail -= 1
        return TextEdit(start, len(old) - tail, decode(new[start : len(new) - tail]))


def fix_all(engine: Any, document: Document | str | bytes, *, module: bool = False) -> FixAllResult:
    """Every safe fix, applied; see the module's docstring.

    The torch imports something still refers to become stand-ins (``standins.py``) when the file changed
    otherwise, so a file the editor's fix-all cannot improve is left as it is; ``module`` (convert, which
    writes modules to run) makes every such file import without torch, changed or not.

    Few objects live while the passes run, so the garbage collector's full collections (each
    walks every tracked object) stay cheap and a file with n calls costs O(n): ``parses``
    compiles instead of building an ``ast`` tree (about 23 objects per ``x = torch.cat([x, y],
    dim=0)`` line, three trees per file), and the first pass reuses the analysis that counted
    the uses instead of analysing the same text again.  16,000 calls: 3 full collections
    (0.1-0.2 s) instead of 15 (2.1-3.0 s) when ``ast.parse`` checked the passes."""
    doc = document if isinstance(document, Document) else Document(document)
    original = doc.source
    result = FixAllResult(original, original)
    problem = parses(original)
    if problem is not None:
        result.error = problem
        return result
    before = engine.analyze(doc)
    sure = confident_guesses(before)  # guessed tensor methods whose receiver is a tensor (tensors.py)
    counted = [u for u in before.uses if u.counts and (not u.guess or u.call_span in sure)
               and not guarded.settled(u, before)]
    guards = [g for u in before.uses if u.guess and u.call_span not in sure and (g := guarded_use(u, before))]
    result.found, result.guarded = len(counted) + len(guards), sum(bool(g.edits) for g in guards)
    for u in counted:
        result.apis[u.torch_name] = result.apis.get(u.torch_name, 0) + 1
    # Uses still to convert, keyed by (torch name, offset in the current text).  A use
    # can vanish from later analyses (``opt.step()`` once ``opt`` is a MindSpore
    # optimizer) and still needs a human, so the set is carried from pass to pass.
    pending = {(u.torch_name, u.start): Leftover(u.torch_name, u.start, u.category, u.reason) for u in counted
               if not u.unchanged}
    unsure = _unsure(before, sure)
    work = Document(original, imported_classes=doc.imported_classes)
    fixable = any(g.edits for g in guards) or \
        any(use.edits and (not use.guess or use.call_span in sure) for use in before.uses)
    if fixable:
        rejected: set[tuple[str, int]] = set()
        analysis = before  # the first pass reads the original text, which ``before`` analysed
        for _ in range(MAX_PASSES):
            if analysis is None:
                analysis = engine.analyze(work)
            sure = confident_guesses(analysis)
            chosen, taken = [], _Taken()
            for use in analysis.uses:
                if guarded.settled(use, analysis):
                    continue  # a branch of a runtime type test: converted already
                guess = use.guess and use.call_span not in sure
                if guess and (shielded := guarded_use(use, analysis)) is not None:
                    use, guess = shielded, False  # its rewrite behind a runtime type test (guarded.py)
                if use.counts and not guess and not use.unchanged:
                    pending.setdefault((use.torch_name, use.start),
                                       Leftover(use.torch_name, use.start, use.category, use.reason))
                if not use.edits or guess or (use.torch_name, use.start) in rejected:
                    continue
                if all(e in taken for e in use.edits):
                    chosen.append(use)  # shares its fix with a chosen use (a class migration)
                    continue
                # Definitions (adapters, helpers) go between top-level statements: two fixes may
                # insert theirs at the same place (``edits_of`` writes them as one insertion).
                if any(e not in taken and not _defines(e) and taken.overlaps(e) for e in use.edits):
                    # nested in another fix: made inside that fix's new text when it carries this one's old text
                    # (``torch.save({'s': sched.state_dict()}, f)``: the receiver's torch type, which the
                    # next pass may no longer see, was read here), else next pass
                    _compose(use, chosen, taken, work.source)
                    continue
                chosen.append(use)
                taken.extend([e for e in use.edits if not _defines(e)])
            if not chosen:
                unsure = _unsure(analysis, sure)
                break
            applied = _apply(work.source, chosen, analysis, rejected, result)
            if applied is None:
                continue
            new_source, edits, done = applied
            for use in done:
                pending.pop((use.torch_name, use.start), None)
            if new_source == work.source:  # fixes that write the text as it is: nothing is left to change
                unsure = _unsure(analysis, sure)
                break
            shift = _shifter(edits)
            rejected = {(name, shift(offset)) for name, offset in rejected}
            pending = _shifted(pending, shift, edits)
            work.update(new_source)
            analysis = None
        else:  # passes used up: what is unsure is read from the text they left (not the first pass's offsets)
            analysis = analysis or engine.analyze(work)
            unsure = _unsure(analysis, confident_guesses(analysis))
    if fixable or module and before.has_torch_imports:  # (a module to run imports no torch nothing uses)
        cleaned = _cleanup(engine, work)
        if cleaned is not None:
            pending = _shifted(pending, _shifter(cleaned[1]))
            unsure = _shifted(unsure, _shifter(cleaned[1]))
            work.update(cleaned[0])
    # what is left imports no torch: it fails where it is reached (standins.py)
    if before.has_torch_imports and (module or work.source != original):
        stood = _stand_ins(engine, work, pending.values())
        if stood is not None:
            pending = _shifted(pending, _shifter(stood[1]), stood[1])
            unsure = _shifted(unsure, _shifter(stood[1]), stood[1])
            work.update(stood[0])
    result.source = work.source
    result.left = sorted(pending.values(), key=lambda x: x.offset)
    result.unsure = sorted(unsure.values(), key=lambda x: x.offset)
    return result


def _unsure(analysis: Any, sure: set) -> dict:
    """Guessed tensor methods that need a rewrite on receivers not known to be tensors, that have no kernel on
    the configured device, or whose rewrite msmap could not make on a known tensor (said with the reason)."""
    blocked = {u.call_span for u in analysis.uses if u.guess and not u.edits and u.reason and u.reason != GUESS_REASON}
    known = confident_guesses(analysis, with_edits=False) & blocked if blocked else set()
    return {(u.torch_name, u.start): Leftover(u.torch_name, u.start, "guess",
                                              f"if this is a tensor: {u.title or u.reason}")
            for u in analysis.uses if u.guess and u.call_span not in sure
            and (u.edits or (u.choice is not None and not u.choice.runs) or u.call_span in known)
            and not guarded.settled(u, analysis) and not _needs_nothing(u, analysis)}


def guarded_use(use: Any, analysis: Any) -> Any | None:
    """``use`` rewritten behind a runtime type test, when its receiver allows one (guarded.py)."""
    return guarded.guard(use, analysis, lambda edit: _defines(edit) is not None)


def _needs_nothing(use: Any, analysis: Any) -> bool:
    """A guess whose rewrite is the call as written (guarded.py): nothing to test, nothing to mark."""
    shielded = guarded_use(use, analysis) if use.edits else None
    return shielded is not None and shielded.unchanged


def _compose(inner: Any, chosen: list, taken: _Taken, source: bytes) -> bool:
    """Write ``inner``'s one edit into the chosen fix whose edit holds it, when that edit's new text carries
    the replaced text exactly once; its definitions (helpers) join that fix."""
    own = [e for e in inner.edits if not _defines(e)]
    if len(own) != 1 or own[0].end <= own[0].start:
        return False
    edit = own[0]
    old = source[edit.start:edit.end].decode("utf-8", "replace")
    for number, outer in enumerate(chosen):
        for index, held in enumerate(outer.edits):
            if _defines(held) or not (held.start <= edit.start and edit.end <= held.end) or held.end <= held.start:
                continue
            if (held.start, held.end) == (edit.start, edit.end):
                return False  # two fixes of the same text: not one inside the other
            if held.new_text.count(old) != 1:
                return False
            merged = TextEdit(held.start, held.end, held.new_text.replace(old, edit.new_text))
            edits = outer.edits[:index] + [merged] + outer.edits[index + 1:] + [e for e in inner.edits if _defines(e)]
            chosen[number] = replace(outer, edits=edits)  # (the analysis's own use stays as it was)
            taken.edits.discard(held)
            taken.edits.add(merged)
            return True
    return False


def _shifted(pending: dict, shift: Callable[[int], int], edits: list[TextEdit] | None = None) -> dict:
    """Pending uses at their offsets after ``edits``; a use inside text an edit replaced is dropped
    (the next pass finds it again where it now is, if it is still there)."""
    replaced = sorted((e.start, e.end) for e in edits or [] if e.end > e.start)
    starts = [start for start, _ in replaced]
    moved = {}
    for left in pending.values():
        index = bisect.bisect_left(starts, left.offset) - 1
        if index >= 0 and replaced[index][0] < left.offset < replaced[index][1]:
            continue
        left.offset = shift(left.offset)
        moved[(left.torch_name, left.offset)] = left
    return moved


def _shifter(edits: list[TextEdit]) -> Callable[[int], int]:
    """``shift_offset(offset, edits)`` for many offsets: O(log n) each instead of O(n).

    An offset moves by the size change of every edit that ends at or before it, except an
    insertion exactly at it."""
    ordered = sorted(edits, key=lambda e: e.end)
    ends = [e.end for e in ordered]
    totals = [0]
    here: dict[int, int] = {}  # insertions' growth, by offset
    for edit in ordered:
        growth = len(encode(edit.new_text)) - (edit.end - edit.start)
        totals.append(totals[-1] + growth)
        if edit.start == edit.end:
            here[edit.start] = here.get(edit.start, 0) + growth
    return lambda offset: offset + totals[bisect.bisect_right(ends, offset)] - here.get(offset, 0)


class _Taken:
    """The edits chosen in one pass, answering "is this edit taken?" and "does it overlap a taken
    one?" in O(log n), so a pass over n uses is not quadratic.  Their spans are kept sorted and
    disjoint (edits that overlap one another - one use's own - are kept as their union, which
    overlaps exactly what one of them overlaps), so the spans' ends ascend too and only the
    spans just before an edit's end need a look."""

    def __init__(self) -> None:
        self.edits: set[TextEdit] = set()
        self.spans: list[tuple[int, int]] = []

    def __contains__(self, edit: TextEdit) -> bool:
        return edit in self.edits

    def _near(self, start: int, end: int) -> Iterator[int]:
        """Indexes, last first, of the spans that can overlap [start, end)."""
        index = bisect.bisect_right(self.spans, (end, end))
        while index > 0 and self.spans[index - 1][1] >= start:
            index -= 1
            yield index

    def overlaps(self, edit: TextEdit) -> bool:
        return any(_overlap(edit.start, edit.end, *self.spans[i]) for i in self._near(edit.start, edit.end))

    def extend(self, edits: list[TextEdit]) -> None:
        for edit in edits:
            self.edits.add(edit)
            start, end = edit.start, edit.end
            for index in [i for i in self._near(start, end) if _overlap(edit.start, edit.end, *self.spans[i])]:
                first, last = self.spans.pop(index)  # indexes come last first: popping keeps the rest valid
                start, end = min(start, first), max(end, last)
            bisect.insort(self.spans, (start, end))


def _overlap(start: int, end: int, other_start: int, other_end: int) -> bool:
    """``TextEdit.overlaps`` on bare spans."""
    return TextEdit(start, end, "").overlaps(TextEdit(other_start, other_end, ""))


def _apply(source: bytes, chosen: list, analysis: Any, rejected: set, result: FixAllResult):
    def edits_of(uses: list) -> list[TextEdit]:
        edits = [e for u in uses for e in u.edits]
        # A definition an adapter or helper needs is written once, at the first place asked for
        # in this pass (each place is before the statement that needs it, so the first serves all).
        first: dict[str, int] = {}  # defined name -> where it goes
        for edit in edits:
            name = _defines(edit)
            if name:
                first[name] = min(first.get(name, edit.start), edit.start)
        seen, unique = set(), []
        for edit in edits:  # a class migration's uses share their edits
            key = (edit.start, edit.end, edit.new_text)
            name = _defines(edit)
            if key not in seen and (not name or first[name] == edit.start):
                seen.add(key)
                unique.append(edit)
        unique = _joined_definitions(unique)
        if analysis.needs_alias(unique):
            unique.append(analysis.alias_edit)
        return unique

    def attempt(uses: list) -> tuple[bytes, list[TextEdit], list] | None:
        edits = edits_of(uses)
        try:
            new = apply_edits(source, edits)
        except ValueError:
            return None
        return (new, edits, uses) if parses(new) is None else None

    done = attempt(chosen)
    if done is None:
        good = _parsing(chosen, attempt)
        for use in chosen:
            if use not in good:
                rejected.add((use.torch_name, use.start))
                result.dropped.append(use.title)
        done = attempt(good) if good else None
        if done is None and good:
            done = attempt(good[:1])
    if done is not None:
        result.applied.extend(dict.fromkeys(u.title for u in done[2]))
    return done


def _parsing(uses: list, attempt: Callable[[list], Any]) -> list:
    """The uses whose fixes, applied in groups, leave the text parsing: halves are tried before single uses,
    so a few bad fixes among thousands cost a few dozen parses of the file, not one per use."""
    if attempt(uses) is not None:
        return uses
    if len(uses) == 1:
        return []
    middle = len(uses) // 2
    return _parsing(uses[:middle], attempt) + _parsing(uses[middle:], attempt)


def _cleanup(engine: Any, work: Document) -> tuple[bytes, list] | None:
    """Remove torch imports nothing refers to any more: converted code cannot import torch."""
    analysis = _with_imports(engine, work)
    if analysis is None:
        return None
    counts = analysis.ref_counts
    edits: list[TextEdit] = []
    by_statement: dict[int, list] = {}
    for stmt, name in analysis.imports.names:
        by_statement.setdefault(stmt.start_byte, []).append((stmt, name))
    for rows in by_statement.values():
        stmt = rows[0][0]
        unused = [n for _, n in rows if is_torch_path(n.target)
                  and counts.get(n.bound, 0) == 0]
        if unused:
            edits += _remove_names(stmt, [n for _, n in rows], unused, work.source)
    return _applied(work.source, edits)


def _stand_ins(engine: Any, work: Document, left: Iterable[Leftover]) -> tuple[bytes, list] | None:
    """Torch imports that converted code still refers to become stand-ins that raise where they are used,
    with the reasons of the uses left (standins.py); None when there are none."""
    analysis = _with_imports(engine, work)  # (what ``_cleanup`` analysed, when it changed nothing)
    if analysis is None or not analysis.has_torch_imports:
        return None
    reasons: dict[str, str] = {}
    for leftover in left:
        reasons.setdefault(leftover.torch_name, first_sentence(leftover.reason, 160) or leftover.category)
    return _applied(work.source, standins.edits(analysis.imports, analysis.ref_counts, work.source, reasons))


def _with_imports(engine: Any, work: Document) -> Any | None:
    """An analysis of ``work`` with its import table (an incremental analysis keeps none: then the text is
    read afresh); None when there is none."""
    analysis = engine.analyze(work)
    if analysis.imports is None:
        analysis = engine.analyze(work.source)
    return analysis if analysis.imports is not None else None


def _applied(source: bytes, edits: list[TextEdit]) -> tuple[bytes, list] | None:
    """(``source`` with ``edits``, the edits) when there are edits and the result parses, else None."""
    if not edits:
        return None
    try:
        new = apply_edits(source, edits)
    except ValueError:
        return None
    return (new, edits) if parses(new) is None else None


def _remove_names(stmt: Any, names: list, unused: list, source: bytes) -> list[TextEdit]:
    if len(unused) == len(names):
        return _remove_statement(stmt, source)
    nodes = [n for n in stmt.children_by_field_name("name")]
    drop = {n.start for n in unused}
    edits, spans = [], [(n.start_byte, n.end_byte) for n in nodes]
    for index, (start, end) in enumerate(spans):
        if start not in drop:
            continue
        if index + 1 < len(spans):
            edits.append(TextEdit(start, spans[index + 1][0], ""))
        else:
            previous = max((i for i in range(index) if spans[i][0] not in drop), default=None)
            if previous is None:
                return []
            edits.append(TextEdit(spans[previous][1], end, ""))
    # merge touching removals so they never overlap
    edits.sort(key=lambda e: e.start)
    merged: list[TextEdit] = []
    for edit in edits:
        if merged and edit.start <= merged[-1].end:
            merged[-1] = TextEdit(merged[-1].start, max(edit.end, merged[-1].end), "")
        else:
            merged.append(edit)
    return merged


def _remove_statement(stmt: Any, source: bytes) -> list[TextEdit]:
    line_start = source.rfind(b"\n", 0, stmt.start_byte) + 1
    line_end = source.find(b"\n", stmt.end_byte)
    line_end = len(source) if line_end < 0 else line_end + 1
    before = source[line_start : stmt.start_byte]
    after = source[stmt.end_byte : line_end].strip()
    parent = stmt.parent
    alone = parent is not None and parent.type == "block" and \
        len([c for c in parent.named_children if c.type != "comment"]) == 1
    if before.strip() or (after and not after.startswith(b"#")) or alone:
        return [TextEdit(stmt.start_byte, stmt.end_byte, "pass")]
    return [TextEdit(line_start, line_end, "")]
