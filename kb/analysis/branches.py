"""Branches a folded value decides: once a call is known to answer a constant (``torch.cuda.is_available()`` is
``False`` on a CPU target), the ``if`` or conditional expression testing it may have one way it can go, and the
other way is code that cannot run. ``Decision`` says which, and the edits that take the dead code out:

- ``A if <False> else B`` becomes ``B`` (``A`` for a true test);
- ``if <False>: ...`` goes (its ``else`` body takes its place; a first ``elif`` becomes the ``if``), and so does
  an ``elif <False>:`` clause; an ``elif <True>:`` ends the chain;
- ``if <True>: ... else: ...`` loses its ``elif``/``else`` clauses, and when the body always leaves its block
  (``return``, ``raise``, ``continue``, ``break``) the statements after it in that block go too.

A test is decided only through ``not``, ``and``, ``or``, parentheses, ``True``/``False`` and comparisons of a
folded number with an integer literal; anything else the test holds must be free of effects (names, attributes,
literals) for the test itself to go, else it stays (``if f() and False:`` keeps ``f()``: its body becomes ``pass``).
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any

from kb.analysis.settingstatements import own_line
from kb.analysis.text import TextEdit

TESTS = ("not_operator", "boolean_operator", "parenthesized_expression", "comparison_operator")
PURE = {"identifier", "attribute", "true", "false", "none", "integer", "float", "string", "string_start",
        "string_content", "string_end", "not_operator", "boolean_operator", "parenthesized_expression",
        "comparison_operator", "unary_operator"}
EXITS = ("return_statement", "raise_statement", "continue_statement", "break_statement")
COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
           "!=": operator.ne}


@dataclass
class Decision:
    """What a folded test decides: ``edits`` (the dead code out; empty when nothing is decided), ``dead`` (the
    byte spans that cannot run) and whether ``edits`` already hold the test itself (then no fold is needed)."""

    edits: list[TextEdit] = field(default_factory=list)
    dead: list[tuple[int, int]] = field(default_factory=list)
    covers_test: bool = False


def test_of(node: Any) -> Any:
    """The whole test ``node`` (a folded call) is part of: the largest ``not``/``and``/``or``/comparison/parenthesised
    expression around it."""
    while node.parent is not None and node.parent.type in TESTS:
        node = node.parent
    return node


def truth(node: Any, known: dict[tuple[int, int], Any]) -> Any:
    """The value of ``node`` given the folded values ``known`` (by byte span); ``...`` when it is not decided.
    ``and``/``or`` give a truth value (what an ``if`` reads), not Python's operand."""
    span = (node.start_byte, node.end_byte)
    if span in known:
        return known[span]
    kind = node.type
    if kind in ("true", "false"):
        return kind == "true"
    if kind == "integer":
        try:
            return int(node.text.decode(), 0)
        except ValueError:
            return ...
    if kind == "parenthesized_expression" and len(node.named_children) == 1:
        return truth(node.named_children[0], known)
    if kind == "not_operator":
        value = truth(node.child_by_field_name("argument"), known)
        return ... if value is ... else not value
    if kind == "boolean_operator":
        left = truth(node.child_by_field_name("left"), known)
        right = truth(node.child_by_field_name("right"), known)
        word = node.child_by_field_name("operator").type
        if word == "and":
            if (left is not ... and not left) or (right is not ... and not right):
                return False
            return ... if ... in (left, right) else True
        if (left is not ... and left) or (right is not ... and right):
            return True
        return ... if ... in (left, right) else False
    if kind == "comparison_operator" and len(node.named_children) == 2:
        words = [c.type for c in node.children if not c.is_named]
        left, right = (truth(c, known) for c in node.named_children)
        if len(words) == 1 and words[0] in COMPARE and isinstance(left, int) and isinstance(right, int):
            return COMPARE[words[0]](left, right)
    return ...


def pure(node: Any, known: dict[tuple[int, int], Any]) -> bool:
    """Whether evaluating ``node`` has no effect beyond the folded calls (which go with it)."""
    if (node.start_byte, node.end_byte) in known:
        return True
    return node.type in PURE and all(pure(c, known) for c in node.named_children)


def decide(test: Any, known: dict[tuple[int, int], Any], source: bytes) -> Decision:
    """The dead code a test (``test_of``) holding folded calls decides, and the edits that take it out."""
    value = truth(test, known)
    parent = test.parent
    if value is ... or parent is None:
        return Decision()
    if parent.type == "conditional_expression" and len(parent.named_children) == 3 \
            and parent.named_children[1] == test and pure(test, known):
        kept, gone = parent.named_children[0], parent.named_children[2]
        if not value:
            kept, gone = gone, kept
        return Decision([TextEdit(parent.start_byte, parent.end_byte, kept.text.decode("utf-8", "surrogateescape"))],
                        [(gone.start_byte, gone.end_byte)], covers_test=True)
    if parent.type == "if_statement" and parent.child_by_field_name("condition") == test:
        return _true_if(parent, source) if value else _false_if(parent, test, known, source)
    if parent.type == "elif_clause" and parent.child_by_field_name("condition") == test:
        return _elif(parent, value, pure(test, known))
    return Decision()


def _elif(clause: Any, value: bool, pure_test: bool) -> Decision:
    """A decided ``elif``: a true one ends the chain (the clauses after it go), a false one goes itself."""
    statement = clause.parent
    clauses = statement.children_by_field_name("alternative")
    index = next(i for i, c in enumerate(clauses) if c == clause)
    if value:
        span = (clause.end_byte, statement.end_byte)
        return Decision([TextEdit(*span, "")] if index + 1 < len(clauses) else [], [span])
    if not pure_test:
        body = clause.child_by_field_name("consequence")
        return Decision([TextEdit(body.start_byte, body.end_byte, "pass")], [(body.start_byte, body.end_byte)])
    if index + 1 < len(clauses):
        span = (clause.start_byte, clauses[index + 1].start_byte)
    else:
        before = clauses[index - 1] if index else statement.child_by_field_name("consequence")
        span = (before.end_byte, clause.end_byte)
    return Decision([TextEdit(*span, "")], [span], covers_test=True)


def _true_if(statement: Any, source: bytes) -> Decision:
    body = statement.child_by_field_name("consequence")
    clauses = statement.children_by_field_name("alternative")
    decision = Decision()
    if clauses:
        span = (body.end_byte, statement.end_byte)
        decision.edits.append(TextEdit(*span, ""))
        decision.dead.append(span)
    block = statement.parent
    statements = [c for c in body.named_children if c.type != "comment"]
    if block is not None and block.type == "block" and statements and statements[-1].type in EXITS:
        after = [c for c in block.named_children if c.start_byte >= statement.end_byte]
        if after:
            span = (statement.end_byte, after[-1].end_byte)
            decision.edits.append(TextEdit(*span, ""))
            decision.dead.append(span)
    return decision


def _false_if(statement: Any, test: Any, known: dict[tuple[int, int], Any], source: bytes) -> Decision:
    body = statement.child_by_field_name("consequence")
    clauses = statement.children_by_field_name("alternative")
    if not pure(test, known) or not own_line(statement, source):  # (the test stays: only its body goes)
        return Decision([TextEdit(body.start_byte, body.end_byte, "pass")], [(body.start_byte, body.end_byte)])
    if clauses and clauses[0].type == "elif_clause":  # the first elif becomes the if
        return Decision([TextEdit(statement.start_byte, clauses[0].start_byte + 2, "")],
                        [(statement.start_byte, clauses[0].start_byte)], covers_test=True)
    if clauses:  # an else: its body in the if's place
        text = _dedented(clauses[0].child_by_field_name("body"), statement.start_point[1], source)
        if text is None:
            return Decision([TextEdit(body.start_byte, body.end_byte, "pass")], [(body.start_byte, body.end_byte)])
        return Decision([TextEdit(statement.start_byte, statement.end_byte, text)],
                        [(statement.start_byte, clauses[0].start_byte)], covers_test=True)
    block = statement.parent
    alone = block is not None and block.type == "block" \
        and len([c for c in block.named_children if c.type != "comment"]) == 1
    if alone:
        return Decision([TextEdit(statement.start_byte, statement.end_byte, "pass")],
                        [(statement.start_byte, statement.end_byte)], covers_test=True)
    start = source.rfind(b"\n", 0, statement.start_byte) + 1
    end = source.find(b"\n", statement.end_byte)
    end = len(source) if end < 0 else end + 1
    return Decision([TextEdit(start, end, "")], [(start, end)], covers_test=True)


def _dedented(body: Any, indent: int, source: bytes) -> str | None:
    """The statements of ``body`` re-indented to ``indent`` columns (the first line starts where the ``if`` did);
    None when a line would lose text (a string spanning lines, a tab-indented line)."""
    text = source[body.start_byte:body.end_byte].decode("utf-8", "surrogateescape")
    if '"""' in text or "'''" in text:
        return None
    shift = body.start_point[1] - indent
    lines = text.split("\n")
    out = [lines[0]]
    for line in lines[1:]:
        if line.strip() and not line.startswith(" " * body.start_point[1]):
            return None
        out.append(line[shift:] if line.strip() else "")
    return "\n".join(out)
