"""``q, k, v = map(lambda t: t.reshape(b, h, -1), (q, k, v))`` in code a forward reaches: a generator expression.

MindSpore 2.10's graph compiler (GRAPH_MODE) compiles ``map`` only over a function with no free variable of the
calling function: a lambda (or a nested ``def``) reading one of its locals (``b``, ``h``) raises "The Map
operator don't support Closure with free variable yet". A generator expression compiles, whatever it reads, and
means the same in Python (a lazy iterable over the same items, the function's body evaluated per item in a scope
of its own)::

    map(lambda t: f(t, h), seq)          ->  (f(t, h) for t in seq)
    map(lambda a, b: a * b + s, xs, ys)  ->  (a * b + s for a, b in zip(xs, ys))
    map(merge, seq)                      ->  (merge(item) for item in seq)   (merge: a nested def reading a local)

Only in functions GRAPH_MODE compiles (kb/analysis/graphmode.py), only when the function closes over a local of
the caller, and only for a lambda of plain parameters, one per iterable (``map(f, a, b)`` stops at the shortest,
as ``zip`` does).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kb.analysis.graphmode import compiled_functions, local_names, own_nodes, reads
from kb.analysis.roles import BIND, IMPORT, role
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.text import TextEdit

RECORD: dict[str, Any] = {
    "torch": "map(lambda ...)", "kind": "pattern", "namespace": "builtins", "source": "curated",
    "targets": [], "caveats": [], "torch_signature": None,
    "advice": "GRAPH_MODE compiles no map over a function that closes over a local: a generator expression "
              "does the same and compiles.",
}
TITLE = "Write the map as a generator expression (GRAPH_MODE compiles no map over a closure)"


@register
class GraphMaps(Rule):
    name = "graph-maps"
    scope = "file"  # whether a function is compiled depends on the forwards of the file
    record = RECORD
    title = TITLE
    order = 80
    triggers = (b"map",)
    example = """\
import torch.nn as nn
class Attention(nn.Module):
    def forward(self, q, k, v):
        b = q.shape[0]
        q, k, v = map(lambda t: t.reshape(b, -1), (q, k, v))
        return q + k + v
"""

    def find(self, context: Context) -> Iterable[Finding]:
        if b"map(" not in context.source or _rebound(context.root, b"map"):
            return
        for function in compiled_functions(context.root):
            nodes = list(own_nodes(function))
            locals_ = local_names(function)
            nested = {n.child_by_field_name("name").text: n for n in nodes if n.type == "function_definition"}
            for call in nodes:
                edits = _rewrite(call, locals_, nested) if call.type == "call" else None
                if edits:
                    yield Finding(call, edits)


def _rewrite(call: Any, locals_: set[bytes], nested: dict[bytes, Any]) -> list[TextEdit] | None:
    """The edits that turn ``map(fn, *iterables)`` into a generator expression, when ``fn`` closes over one of
    ``locals_``; else None."""
    callee, arguments = call.child_by_field_name("function"), call.child_by_field_name("arguments")
    if callee is None or callee.type != "identifier" or callee.text != b"map" or arguments.type != "argument_list":
        return None
    args = list(arguments.named_children)
    if len(args) < 2 or any(a.type in ("keyword_argument", "list_splat", "dictionary_splat", "comment",
                                       "parenthesized_list_splat") for a in args):
        return None
    fn, iterables = args[0], args[1:]
    if fn.type == "lambda":
        params = _plain_parameters(fn)
        body = fn.child_by_field_name("body")
        if params is None or len(params) != len(iterables) or body is None or _yields(body) \
                or not _closes_over(body, locals_ - set(params)):
            return None
        names, start, end, applied = ", ".join(p.decode() for p in params), body.start_byte, body.end_byte, ""
    elif fn.type == "identifier" and fn.text in nested and len(iterables) == 1:
        definition = nested[fn.text]
        if not _closes_over(definition.child_by_field_name("body"), locals_ - local_names(definition)):
            return None
        names = _fresh(call, b"item")
        start, end, applied = fn.start_byte, fn.end_byte, f"({names})"
    else:
        return None
    many = len(iterables) > 1
    bare = _sole_argument(call)  # tuple(map(...)) -> tuple(f(t) for t in seq): the call's parentheses suffice
    return [TextEdit(call.start_byte, start, "" if bare else "("),
            TextEdit(end, iterables[0].start_byte, f"{applied} for {names} in {'zip(' if many else ''}"),
            TextEdit(iterables[-1].end_byte, call.end_byte, (")" if many else "") + ("" if bare else ")"))]


def _sole_argument(node: Any) -> bool:
    """Whether ``node`` is the only argument of a call, with no trailing comma."""
    parent = node.parent
    return parent is not None and parent.type == "argument_list" and len(parent.named_children) == 1 \
        and parent.text[node.end_byte - parent.start_byte:].strip() == b")"


def _plain_parameters(fn: Any) -> list[bytes] | None:
    """The names of a lambda's parameters when all are plain (no default, no star, no annotation)."""
    params = fn.child_by_field_name("parameters")
    if params is None:
        return []
    names = [p.text for p in params.named_children]
    if any(p.type != "identifier" for p in params.named_children) or len(set(names)) != len(names):
        return None
    return names


def _closes_over(body: Any | None, names: set[bytes]) -> bool:
    return body is not None and any(node.text in names for node in reads(body))


def _yields(body: Any) -> bool:
    stack = [body]
    while stack:
        node = stack.pop()
        if node.type in ("yield", "await", "named_expression"):
            return True
        stack.extend(node.named_children)
    return False


def _fresh(call: Any, stem: bytes) -> str:
    """A name the enclosing function's text does not hold (the generator's loop variable)."""
    function = call.parent
    while function is not None and function.type != "function_definition":
        function = function.parent
    text = (function or call).text
    name, n = stem, 0
    while name in text:
        n += 1
        name = stem + str(n).encode()
    return name.decode()


def _rebound(root: Any, name: bytes) -> bool:
    """Whether the file binds ``name`` itself (a ``def map``, an import or an assignment): not the builtin."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "identifier" and node.text == name and role(node)[0] in (BIND, IMPORT):
            return True
        if node.type in ("function_definition", "class_definition") and node.child_by_field_name("name").text == name:
            return True
        stack.extend(node.named_children)
    return False
