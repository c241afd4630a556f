"""Fix-all: every safe fix, the MindSpore import once, unused torch imports removed.

Fixes are collected in one pass; those whose edits overlap an already chosen
one (a call nested in another call's argument) wait for the next pass, which
re-analyzes the new text.  Each pass's result must parse (``ast.parse``); a fix
that breaks parsing is dropped and the rest go on.  The loop ends when a pass
finds nothing to do, so running fix-all on its own output changes nothing.
A source that does not parse to begin with comes back unchanged.
"""
from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from kb.analysis.document import Document, common_prefix, common_suffix
from kb.analysis.imports import is_torch_path
from kb.analysis.text import TextEdit, apply_edits, decode, shift_offset

MAX_PASSES = 25


def parses(source: bytes) -> Optional[str]:
    """None when ``source`` is valid Python, else a one-line reason."""
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
    error: Optional[str] = None  # why nothing was done (the input does not parse)
    found: int = 0  # torch uses in the original (imports and guesses not counted)
    left: list[Leftover] = field(default_factory=list)  # uses not converted, at offsets in ``source``

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

    def edit(self) -> Optional[TextEdit]:
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


def fix_all(engine: Any, document: Union[Document, str, bytes]) -> FixAllResult:
    doc = document if isinstance(document, Document) else Document(document)
    original = doc.source
    result = FixAllResult(original, original)
    problem = parses(original)
    if problem is not None:
        result.error = problem
        return result
    before = engine.analyze(doc)
    counted = [u for u in before.uses if u.counts and not u.guess]
    result.found = len(counted)
    # Uses still to convert, keyed by (torch name, offset in the current text).  A use
    # can vanish from later analyses (``opt.step()`` once ``opt`` is a MindSpore
    # optimizer) and still needs a human, so the set is carried from pass to pass.
    pending = {(u.torch_name, u.start): Leftover(u.torch_name, u.start, u.category, u.reason) for u in counted}
    if any(use.edits and not use.guess for use in before.uses):
        counts_before = dict(before.ref_counts)
        work = Document(original)
        rejected: set[tuple[str, int]] = set()
        for _ in range(MAX_PASSES):
            analysis = engine.analyze(work)
            chosen, taken = [], []
            for use in analysis.uses:
                if use.counts and not use.guess:
                    pending.setdefault((use.torch_name, use.start),
                                       Leftover(use.torch_name, use.start, use.category, use.reason))
                if not use.edits or use.guess or (use.torch_name, use.start) in rejected:
                    continue
                if all(any(e == t for t in taken) for e in use.edits):
                    chosen.append(use)  # shares its fix with a chosen use (a class migration)
                    continue
                if any(e.overlaps(t) for e in use.edits for t in taken):
                    continue  # nested in another fix: next pass
                chosen.append(use)
                taken.extend(use.edits)
            if not chosen:
                break
            applied = _apply(work.source, chosen, analysis, rejected, result)
            if applied is None:
                continue
            new_source, edits, done = applied
            for use in done:
                pending.pop((use.torch_name, use.start), None)
            rejected = {(name, shift_offset(offset, edits)) for name, offset in rejected}
            pending = _shifted(pending, edits)
            work.update(new_source)
        cleaned = _cleanup(engine, work, counts_before)
        if cleaned is not None:
            pending = _shifted(pending, cleaned[1])
            work.update(cleaned[0])
        result.source = work.source
    result.left = sorted(pending.values(), key=lambda x: x.offset)
    return result


def _shifted(pending: dict, edits: list[TextEdit]) -> dict:
    moved = {}
    for left in pending.values():
        left.offset = shift_offset(left.offset, edits)
        moved[(left.torch_name, left.offset)] = left
    return moved


def _apply(source: bytes, chosen: list, analysis: Any, rejected: set, result: FixAllResult):
    def edits_of(uses: list) -> list[TextEdit]:
        edits = [e for u in uses for e in u.edits]
        seen, unique = set(), []
        for edit in edits:  # a class migration's uses share their edits
            key = (edit.start, edit.end, edit.new_text)
            if key not in seen:
                seen.add(key)
                unique.append(edit)
        if analysis.alias_edit is not None and any(
            e.new_text == analysis.alias or e.new_text.startswith(analysis.alias + ".") for e in unique
        ):
            unique.append(analysis.alias_edit)
        return unique

    def attempt(uses: list) -> Optional[tuple[bytes, list[TextEdit]]]:
        edits = edits_of(uses)
        try:
            new = apply_edits(source, edits)
        except ValueError:
            return None
        return (new, edits, uses) if parses(new) is None else None

    done = attempt(chosen)
    if done is None:
        good = [u for u in chosen if attempt([u]) is not None]
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


def _cleanup(engine: Any, work: Document, counts_before: dict[str, int]) -> Optional[tuple[bytes, list]]:
    """Remove torch imports whose names the fixes left unused (and only those)."""
    analysis = engine.analyze(work)
    if analysis.imports is None:
        return None
    counts = analysis.ref_counts
    edits: list[TextEdit] = []
    by_statement: dict[int, list] = {}
    for stmt, name in analysis.imports.names:
        by_statement.setdefault(stmt.start_byte, []).append((stmt, name))
    for rows in by_statement.values():
        stmt = rows[0][0]
        unused = [n for _, n in rows if is_torch_path(n.target) and counts_before.get(n.bound, 0) > 0
                  and counts.get(n.bound, 0) == 0]
        if unused:
            edits += _remove_names(stmt, [n for _, n in rows], unused, work.source)
    if not edits:
        return None
    try:
        new = apply_edits(work.source, edits)
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
