"""``msmap convert`` for one source: fix-all, then a note on each line left for a human.

A note is a comment at the end of the line, ``# msmap: <reason> (see: msmap
lookup <torch name>)``: one short reason (``leftovers.short_reason``), the lookup
says the rest; uses on one line with the same reason share it (``see: msmap lookup
a, b``).  A line that already carries ``# msmap:`` gets no second note, so
converting twice equals converting once.  When the end of the
line is inside a string or after a backslash, the note goes to the end of the
statement instead; if that is not possible either, the line gets no note.
"""
from __future__ import annotations

from typing import Any

from kb.analysis import standins
from kb.analysis.document import Document
from kb.analysis.fixall import FixAllResult, Leftover, parses
from kb.analysis.leftovers import short_reason
from kb.analysis.text import TextEdit, apply_edits, encode

MARKER = "# msmap:"
_STRINGY = frozenset({"string", "string_content", "string_start", "string_end", "concatenated_string",
                      "escape_sequence", "interpolation"})


SHARED_LIMIT = 50  # characters of each kind of reason when a line holds several


def line_note(items: list[Leftover]) -> str:
    """The note of one line: each distinct short reason once, with the names it stands for; when the
    line holds several, only their kinds (``no MindSpore equivalent``, ``if this is a tensor``)."""
    several = len({short_reason(item.reason) for item in items}) > 1
    names: dict[str, list[str]] = {}
    for item in items:
        reason = short_reason((item.reason or "").split(": ", 1)[0], SHARED_LIMIT) if several \
            else short_reason(item.reason)
        bucket = names.setdefault(reason, [])
        if item.torch_name not in bucket:
            bucket.append(item.torch_name)
    return "; ".join(f"{reason} (see: msmap lookup {', '.join(found)})" for reason, found in names.items())


def convert_source(engine: Any, source: str | bytes, imported_classes: dict | None = None) -> FixAllResult:
    """Fix-all's result, its text with a note on each line left for a human (``left`` gets lines).

    ``imported_classes``: torch classes the file imports from its siblings (siblingclasses.py)."""
    text = encode(source) if isinstance(source, str) else source
    shadow = standins.as_imports(text)  # a file converted before: its stand-ins read as the imports they were
    fixed: FixAllResult = engine.fix_all(Document(shadow or text, imported_classes=imported_classes), module=True)
    if shadow is not None:
        (fixed.source, cuts), fixed.original = standins.trim(fixed.source), text
        for item in fixed.left + fixed.unsure:
            item.offset = standins.moved(item.offset, cuts)
    for left in fixed.left + fixed.unsure:
        left.line = fixed.source.count(b"\n", 0, left.offset) + 1
    if fixed.error is not None or not (fixed.left or fixed.unsure):
        return fixed
    annotated = annotate(fixed.source, fixed.left + fixed.unsure)
    if annotated is not None and parses(annotated) is None:
        fixed.source = annotated
    return fixed


def annotate(source: bytes, left: list[Leftover]) -> bytes | None:
    """Add ``# msmap:`` notes for ``left``; None when nothing was added."""
    document = Document(source)
    root = document.tree.root_node
    notes: dict[int, list[Leftover]] = {}  # offset where the note goes -> what it says is left there
    for item in left:
        spot = _note_offset(root, source, item.offset)
        if spot is not None:
            notes.setdefault(spot, []).append(item)
    edits = [TextEdit(spot, spot, f"  {MARKER} " + line_note(items)) for spot, items in notes.items()]
    return apply_edits(source, edits) if edits else None


def _line_end(source: bytes, offset: int) -> int:
    end = source.find(b"\n", offset)
    end = len(source) if end < 0 else end
    if end > 0 and source[end - 1 : end] == b"\r":
        end -= 1
    return end


def _note_offset(root: Any, source: bytes, offset: int) -> int | None:
    """Where a note for a use at ``offset`` goes, or None (already noted, or no safe place)."""
    for _ in range(8):
        end = _line_end(source, offset)
        start = source.rfind(b"\n", 0, offset) + 1
        if MARKER.encode() in source[start:end]:
            return None
        if _safe_line_end(root, source, end):
            return end
        statement = _statement_of(root.descendant_for_byte_range(offset, offset))
        if statement is None or statement.end_byte <= end:
            return None
        offset = statement.end_byte
    return None


def _safe_line_end(root: Any, source: bytes, end: int) -> bool:
    if source[:end].rstrip(b" \t").endswith(b"\\"):
        return False
    node = root.descendant_for_byte_range(max(end - 1, 0), end)
    while node is not None:
        if node.type in _STRINGY and node.end_byte > end:
            return False
        if node.type == "comment":
            return True
        node = node.parent
    return True


def _statement_of(node: Any) -> Any | None:
    while node is not None:
        if node.type.endswith("_statement") or node.type in ("decorated_definition", "function_definition",
                                                              "class_definition"):
            return node
        node = node.parent
    return None
