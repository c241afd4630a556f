"""A name bound in one branch of an ``if`` only and read after it, in code a forward reaches: bound to None first.

    if is_image:                                 ps = None
        z, ps = pack_one(z, "b * d")             if is_image:
    ...                                    ->        z, ps = pack_one(z, "b * d")
    if is_image:                                 ...
        out = unpack_one(out, ps, "b * d")       if is_image:
                                                     out = unpack_one(out, ps, "b * d")

MindSpore 2.10's graph compiler (GRAPH_MODE) joins the branches of every ``if`` and refuses a name one branch
binds and another does not ("UnboundLocalError: The local variable 'ps' is not defined in false branch, but
defined in true branch"), even when the later read sits under the same condition. Binding the name to None
before the statement changes nothing Python runs, except that a read the branch did not reach gets None where it
raised UnboundLocalError. The binding goes before the statement of the function's body that holds the ``if``
(before a loop holding it, so a value a loop carries from one turn to the next is kept).

Only in functions GRAPH_MODE compiles (kb/analysis/graphmode.py), for a name that no statement before the ``if``
binds, that the function reads after it, and that is not global or nonlocal.
"""
from __future__ import annotations

import re
from collections.abc import Hashable, Iterable
from typing import Any

from kb.analysis.graphmode import compiled_functions, own_nodes, parameter_names
from kb.analysis.roles import BIND, REF, role
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.text import TextEdit
from kb.analysis.words import word_starts

RECORD: dict[str, Any] = {
    "torch": "if ...: name = ...", "kind": "pattern", "namespace": "builtins", "source": "curated",
    "targets": [], "caveats": [], "torch_signature": None,
    "advice": "GRAPH_MODE refuses a name bound in one branch of an if only and read later: bind it to None "
              "before the if.",
}
TITLE = "Bind the name to None before the if (GRAPH_MODE refuses a name only one branch binds)"
DEFINED = re.compile(rb"\bdef[ \t]+([A-Za-z_]\w*)")
WORDS = re.compile(rb"[A-Za-z_]\w*")
DEFINITE = ("assignment", "as_pattern_target")  # statements that bind a name whenever their block runs


@register
class GraphBranchNames(Rule):
    name = "graph-branch-names"
    scope = "function"  # and whether a function is compiled depends on the calls of the file's functions (inputs)
    record = RECORD
    title = TITLE
    order = 80
    triggers = (b"if",)
    example = """\
import torch.nn as nn
class Quantizer(nn.Module):
    def forward(self, z):
        is_image = z.ndim >= 4
        if is_image:
            shape = z.shape
            z = z.flatten(1)
        z = z * 2
        if is_image:
            z = z.reshape(shape)
        return z
"""

    def find(self, context: Context) -> Iterable[Finding]:
        start, end = context.within
        if b"if" not in context.source[start:end]:
            return
        found = []  # (the findings of every function here, kept for the compiled ones: most have none)
        for at in word_starts(context.source, b"def", start, end):
            function = context.root.named_descendant_for_byte_range(at, at + 3)
            if function is not None and function.type == "function_definition" \
                    and context.source[function.start_byte:at].split() in ([], [b"async"]):  # (its own ``def``)
                found += [(function.id, finding) for finding in _function_findings(function)]
        if found:
            compiled = {function.id for function in compiled_functions(context.root)}
            yield from (finding for function, finding in found if function in compiled)

    def inputs(self, context: Context) -> Hashable:
        """The names the file's functions are defined with: what a call that makes a function compiled names."""
        return frozenset(DEFINED.findall(context.source))

    def reaches(self, inputs: Hashable, edited: bytes) -> bool:
        """A call to one of the file's functions added or removed (``self.helper(x)``) may make another function
        compiled or not."""
        return isinstance(inputs, frozenset) and any(name in inputs for name in WORDS.findall(edited))


def _function_findings(function: Any) -> Iterable[Finding]:
    body = function.child_by_field_name("body")
    nodes = list(own_nodes(function))
    parameters = parameter_names(function)
    declared = {c.text for n in nodes if n.type in ("global_statement", "nonlocal_statement")
                for c in n.named_children}
    binds = [(n.start_byte, n.text) for n in nodes if n.type == "identifier" and role(n)[0] == BIND]
    refs = [(n.start_byte, n.text) for n in nodes if n.type == "identifier" and role(n)[0] == REF]
    done: set[bytes] = set()
    for statement in nodes:
        if statement.type != "if_statement":
            continue
        branches = _branches(statement)
        maybe = set().union(*(_bound(b) for b in branches))
        surely = set.intersection(*(_surely_bound(b) for b in branches)) if _has_else(statement) else set()
        names = [n for n in sorted(maybe - surely - parameters - declared - done)
                 if not any(at < statement.start_byte and name == n for at, name in binds)
                 and any(at >= statement.end_byte and name == n for at, name in refs)]
        if not names:
            continue
        done |= set(names)
        anchor = _top_statement(statement, body)
        indent = anchor.start_point[1]
        text = "".join(f"{n.decode()} = None\n{' ' * indent}" for n in names)
        yield Finding(statement.child_by_field_name("condition") or statement,
                      [TextEdit(anchor.start_byte, anchor.start_byte, text)])


def _branches(statement: Any) -> list[Any]:
    """The blocks of an ``if``/``elif``/``else`` chain."""
    found = [statement.child_by_field_name("consequence")]
    for clause in statement.named_children:
        if clause.type == "elif_clause":
            found.append(clause.child_by_field_name("consequence"))
        elif clause.type == "else_clause":
            found.append(clause.child_by_field_name("body"))
    return [b for b in found if b is not None]


def _has_else(statement: Any) -> bool:
    return any(c.type == "else_clause" for c in statement.named_children)


def _bound(block: Any) -> set[bytes]:
    """Every name the block binds in the function's own scope (comprehension variables aside)."""
    found = set()
    stack = [block]
    while stack:
        node = stack.pop()
        if node.type in ("function_definition", "class_definition", "lambda", "list_comprehension",
                         "set_comprehension", "dictionary_comprehension", "generator_expression"):
            if node.type in ("function_definition", "class_definition"):
                found.add(node.child_by_field_name("name").text)
            continue
        if node.type == "identifier" and role(node)[0] == BIND:
            found.add(node.text)
        stack.extend(node.named_children)
    return found


def _surely_bound(block: Any) -> set[bytes]:
    """The names the block's own statements bind whenever it runs: assignments and ``with ... as`` at its top
    level, and names every branch of an ``if`` at its top level binds."""
    found: set[bytes] = set()
    for statement in block.named_children:
        if statement.type == "if_statement" and _has_else(statement):
            found |= set.intersection(*(_surely_bound(b) for b in _branches(statement)))
        elif statement.type == "expression_statement":
            found |= {n for n in _bound(statement) if _binder(statement, n)}
        elif statement.type == "with_statement":
            clause = next((c for c in statement.named_children if c.type == "with_clause"), None)
            found |= _bound(clause) if clause is not None else set()
            found |= _surely_bound(statement.child_by_field_name("body"))
        elif statement.type in ("function_definition", "class_definition"):
            found.add(statement.child_by_field_name("name").text)
    return found


def _binder(statement: Any, name: bytes) -> bool:
    """Whether ``name`` is bound in ``statement`` by an assignment or an ``as`` (not a walrus in a condition)."""
    stack = [statement]
    while stack:
        node = stack.pop()
        if node.type == "identifier" and node.text == name and role(node)[0] == BIND \
                and role(node)[1] is not None and role(node)[1].type in DEFINITE:
            return True
        if node.type not in ("lambda", "list_comprehension", "generator_expression", "conditional_expression",
                             "boolean_operator"):
            stack.extend(node.named_children)
    return False


def _top_statement(node: Any, body: Any) -> Any:
    """The statement of the function's ``body`` that holds ``node``."""
    while node.parent is not None and node.parent.id != body.id:
        node = node.parent
    return node
