"""Which registered rules an edit runs again, and where (kb/analysis/rules, after ``incremental.reanalyze``).

A rule runs again after an edit when the edit holds one of its trigger words, overlaps one of its findings (what
the finding underlines, its fix and the bytes they read: ``Use.extent``), when it has no trigger words, or when
its ``inputs`` (what it reads of the file beyond its scope) changed. It runs again in the piece of its scope that
holds the edit (``rules.region``: a statement of a function's body, the function, the top-level statement) and
keeps its findings elsewhere, moved with the text; in the whole file when its scope is the file, when its inputs
changed, or when a finding the edit overlaps reaches out of that piece (a helper written at the top of the file).
Both ways, its findings are what a fresh analysis of the new text finds.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Hashable
from typing import Any

from kb.analysis import rules
from kb.analysis.document import Document
from kb.analysis.uses import Use

Region = tuple[int, int] | None  # None: the whole file
Lag = tuple[int, int]
STILL = (0, 0)


def plan(previous: Any, document: Document, edited: tuple[int, int, int], old_window: tuple[int, int],
         window: tuple[int, int], inputs: dict[str, Hashable]) -> dict[str, Region]:
    """{rule: where it runs again} for the rules an edit of the window (old ``old_window``, new ``window``) may
    change the findings of; ``edited`` is the edit (start, old end, new end), ``inputs`` each rule's inputs in the
    new text."""
    old_lo, old_hi = old_window
    lo, hi = window
    start, old_end, new_end = edited
    delta = new_end - old_end
    uses, _ = previous.held()
    touched: dict[str, list[tuple[int, int]]] = {}  # rule -> the spans (new offsets) of its findings the edit overlaps
    for use, (a, b) in zip(uses, previous.spans(), strict=True):
        if use.rule is not None and not (b < old_lo or a > old_hi):
            touched.setdefault(use.rule, []).append((a if a <= start else a + delta, b if b <= start else b + delta))
    root = document.tree.root_node
    piece = document.source[lo:hi]  # (blanks around the window belong to no piece: a space typed after a statement)
    if piece.strip():
        lo, hi = lo + len(piece) - len(piece.lstrip()), hi - len(piece) + len(piece.rstrip())
    function = rules.region("function", root, lo, hi)
    if function is None:  # (no function or top-level statement holds the window: all of them, everywhere)
        return {rule.name: None for rule in rules.registered()}
    text = document.source[function[0]:function[1]]
    edited_text = previous.source[old_lo:old_hi] + b"\0" + document.source[lo:hi]
    names = rules.to_rerun(edited_text, text, set(touched))
    before = previous.rule_inputs
    found: dict[str, Region] = {}
    for rule in rules.registered():
        value = inputs.get(rule.name)
        everywhere = rule.name not in before or before[rule.name] != value or rule.reaches(value, edited_text)
        if rule.name not in names and not everywhere:
            continue
        region = None if everywhere else rules.region(rule.scope, root, lo, hi)
        if region is not None and any(a < region[0] or b > region[1] for a, b in touched.get(rule.name, ())):
            region = None  # a finding the edit overlaps reaches out of the piece: found again everywhere
        found[rule.name] = region
    return found


def replaced_outside(previous: Any, edited: tuple[int, int, int], old_window: tuple[int, int],
                     regions: dict[str, Region]) -> set[tuple[str, int, int]]:
    """(torch name, start, end), in the new text, of the uses that findings of the rules run again took the place
    of, outside the re-analysed window (old offsets) and inside the rule's region (new offsets): nothing finds
    those again unless a finding still takes their place."""
    old_lo, old_hi = old_window
    start_at, old_end, new_end = edited
    uses, lag = previous.held()
    found = set()
    for index, use in enumerate(uses):
        if use.rule is None or not use.replaces or use.rule not in regions:
            continue
        moved = lag[index][0] if lag else 0
        start, end = use.start + moved, use.end + moved
        if old_lo <= start < old_hi:
            continue
        shift = new_end - old_end if start >= old_end else 0
        region = regions[use.rule]
        if region is not None and not region[0] <= start + shift < region[1]:
            continue  # (found again only in its region: elsewhere its finding is kept)
        found.add((use.replaces, start + shift, end + shift))
    return found


def with_rules(engine: Any, document: Document, alias: str, has_torch_imports: bool, uses: list[Use],
               spans: list[tuple[int, int]], lag: list[Lag], previous: Any, edited: tuple[int, int, int],
               old_window: tuple[int, int], window: tuple[int, int], settle: Callable[[Use, int, int], Use]
               ) -> tuple[list[Use], list[tuple[int, int]], list[Lag], dict[str, Hashable]] | None:
    """The uses of torch names kept or redone, with the rules the edit may change run again on the new text
    (``plan``; their previous findings there dropped, the others kept, moved with the text), and every rule's
    inputs in the new text; None when a full analysis is needed. A rule use goes after the uses at the same
    place, as a full analysis orders them."""
    # What the rules read, as in a full analysis: the uses of torch names, those a rule use took the place of
    # among them (``Use.replaced``, moved to where their rule use is now), not the rule uses.
    read: list[Use] = []
    read_lag: list[Lag] = []
    for use, moved in zip(uses, lag, strict=True):
        if use.rule is None:
            read.append(use)
            read_lag.append(moved)
        elif use.replaced is not None:
            was = use.replaced
            read.append(was)
            read_lag.append((use.start + moved[0] - was.start, use.range.start.line + moved[1] - was.range.start.line))
    by_name: dict[str, list[int]] = {}  # (the rules ask by prefix: look at each name once, not at each use)
    settled: dict[int, Use] = {}  # a lagging use moved once for all the rules that ask for it
    starts: list[int] = []  # where each of ``read`` starts now (in order: uses move whole, in order)
    widest = max((u.end - u.start for u in read), default=0)

    def between(region: tuple[int, int]) -> range:
        """The indexes of ``read`` whose uses may overlap ``region`` (found by their starts)."""
        if not starts:
            starts.extend(u.start + moved[0] for u, moved in zip(read, read_lag, strict=True))
        return range(bisect_left(starts, region[0] - widest), bisect_right(starts, region[1]))

    def placed(index: int) -> Use:
        found = settled.get(index)
        if found is None:
            use, moved = read[index], read_lag[index]
            found = settled[index] = settle(use, *moved) if moved != STILL else use
        return found

    def named(prefixes: tuple[str, ...], exact: bool = False, region: Region = None) -> list[Use]:
        if region is not None:  # (the uses a rule run in one piece may read: those in the piece)
            return [placed(i) for i in between(region) if read[i].end + read_lag[i][0] > region[0]
                    and read[i].start + read_lag[i][0] < region[1]
                    and (read[i].torch_name in prefixes if exact else read[i].torch_name.startswith(prefixes))]
        if not by_name:
            for index, use in enumerate(read):
                by_name.setdefault(use.torch_name, []).append(index)
        indexes = sorted(i for name, found in by_name.items()
                         if (name in prefixes if exact else name.startswith(prefixes)) for i in found)
        return [placed(i) for i in indexes]

    def use_spans(region: Region = None) -> set[tuple[int, int]]:  # (a use moves whole: its span by its lag's bytes)
        indexes = range(len(read)) if region is None else between(region)
        return {(read[i].start + read_lag[i][0], read[i].end + read_lag[i][0]) for i in indexes}

    inputs = engine.rule_inputs(document, alias, has_torch_imports, named)
    regions = plan(previous, document, edited, old_window, window, inputs)
    if not regions:
        return uses, spans, lag, inputs
    replaced_before = replaced_outside(previous, edited, old_window, regions)

    def redone(use: Use, moved: Lag) -> bool:
        if use.rule is None or use.rule not in regions:
            return False
        region = regions[use.rule]
        return region is None or region[0] <= use.start + moved[0] < region[1]

    kept = [i for i, (use, moved) in enumerate(zip(uses, lag, strict=True)) if not redone(use, moved)]
    if len(kept) != len(uses):
        uses, spans, lag = [uses[i] for i in kept], [spans[i] for i in kept], [lag[i] for i in kept]
    order = {rule.name: index for index, rule in enumerate(rules.registered())}
    found: list[Use] = []
    for region in dict.fromkeys(regions.values()):  # (one run per piece, its rules in their order)
        names = {name for name, where in regions.items() if where == region}
        ran = engine.with_rules(document, [], alias, has_torch_imports,
                                lambda prefixes, exact=False, region=region: named(prefixes, exact, region), names,
                                region, lambda region=region: use_spans(region), inputs)
        found += ran if region is None else [u for u in ran if region[0] <= u.start < region[1]]
    gone = {(u.replaces, u.start, u.end) for u in found if u.replaces}
    if not replaced_before <= gone:
        return None  # a use a finding took the place of, outside the window, is back: a full analysis finds it
    if not found:
        return uses, spans, lag, inputs
    if gone:
        names = {name for name, _, _ in gone}
        rules.hold_replaced(found, [placed(i) for i, (u, moved) in enumerate(zip(read, read_lag, strict=True))
                                    if u.torch_name in names and (u.torch_name, u.start + moved[0], u.end + moved[0])
                                    in gone])
        drop = {i for i, (u, moved) in enumerate(zip(uses, lag, strict=True)) if u.torch_name in names
                and (u.torch_name, u.start + moved[0], u.end + moved[0]) in gone}
        if drop:
            keep = [i for i in range(len(uses)) if i not in drop]
            uses, spans, lag = [uses[i] for i in keep], [spans[i] for i in keep], [lag[i] for i in keep]
    keys = [(u.start + moved[0], u.end + moved[0]) for u, moved in zip(uses, lag, strict=True)]
    uses, spans, lag = list(uses), list(spans), list(lag)
    # (rule order kept on ties, as one run of every rule gives them)
    for use in sorted(found, key=lambda u: (u.start, u.end, order.get(u.rule or "", len(order)))):
        index = bisect_right(keys, (use.start, use.end))
        keys.insert(index, (use.start, use.end))
        uses.insert(index, use)
        spans.insert(index, use.extent())
        lag.insert(index, STILL)
    return uses, spans, lag, inputs
