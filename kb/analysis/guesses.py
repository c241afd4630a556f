"""Tensor-method guesses: ``x.view(...)`` where ``view`` is a ``torch.Tensor`` method.

Without types the engine cannot know ``x`` is a tensor, so these uses are marked
``guess=True``.  Receivers that are certainly not tensors are left alone: ``self``
and ``cls``, literals, ``super()``, modules imported from elsewhere (``np``, ``os``),
objects whose torch type is already known (those resolved as real uses), and what a chain of calls
starting at an array or data library other than torch gives
(``np.asarray(y).reshape(2, 3).transpose(1, 0)``, ``pd.Series(y).map(type).unique()``): their own
arrays, never torch tensors.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from kb.analysis.catalog import Catalog
from kb.analysis.resolver import Site

_METHOD_CALL = re.compile(rb"\.[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(")
_LITERALS = frozenset({
    "string", "concatenated_string", "integer", "float", "list", "dictionary", "set", "tuple",
    "list_comprehension", "dictionary_comprehension", "set_comprehension", "true", "false", "none",
})


# array and data libraries whose calls return their own arrays, frames and numbers: never a torch tensor (not Python's
# own modules: copy.deepcopy(t), random.choice(ts) and functools.reduce give back what they were given)
NOT_TENSOR_LIBRARIES = frozenset({"numpy", "pandas", "scipy", "sklearn", "polars", "math"})
_IMPORT = re.compile(rb"(?m)^[ \t]*import[ \t]+([A-Za-z_][\w.]*)(?:[ \t]+as[ \t]+([A-Za-z_]\w*))?[ \t]*$")
_FROM = re.compile(rb"(?m)^[ \t]*from[ \t]+([A-Za-z_][\w.]*)[ \t]+import[ \t]+([\w, \t]+)$")


@lru_cache(maxsize=4)  # asked once per guessed use: a file of thousands of uses read it again each time
def library_names(source: bytes) -> frozenset[bytes]:
    """The names the file binds by importing ``NOT_TENSOR_LIBRARIES`` (``np``, ``from numpy import asarray``)."""
    names = set()
    for match in _IMPORT.finditer(source):
        if match[1].split(b".")[0].decode() in NOT_TENSOR_LIBRARIES:
            names.add(match[2] or match[1].split(b".")[0])
    for match in _FROM.finditer(source):
        if match[1].split(b".")[0].decode() in NOT_TENSOR_LIBRARIES:
            for part in match[2].split(b","):
                words = part.split()
                if words:
                    names.add(words[-1])
    return frozenset(names)


_HELD = {"attribute": "object", "call": "function", "subscript": "value"}


def not_a_tensor(receiver: Any, source: bytes) -> bool:
    """The receiver's chain starts at a local name that every assignment of its function binds to a value of an
    array or data library (``a = np.zeros(3)``, then ``a.abs_()`` or ``a.clip(0, 1).sum()``), and that is no
    parameter, loop or ``with`` target: a NumPy array or a frame, never a tensor. It reads the whole function:
    for whole-file readers (fix-all, convert's markers), not for the per-statement site finders."""
    root = _chain_root(receiver)
    if root is None or root.type != "identifier":
        return False
    function = root.parent
    while function is not None and function.type not in ("function_definition", "lambda", "module"):
        function = function.parent
    if function is None or function.type != "function_definition":
        return False
    libraries = library_names(source)
    if not libraries:
        return False
    text = root.text
    if any(n.type == "identifier" and n.text == text for n in _descendants(function.child_by_field_name("parameters"))):
        return False
    bound = False
    for node in _descendants(function.child_by_field_name("body")):
        if node.type in ("for_statement", "for_in_clause", "with_item", "named_expression", "as_pattern",
                         "augmented_assignment", "global_statement", "nonlocal_statement"):
            if text in node.text and any(n.type == "identifier" and n.text == text
                                         for n in _descendants(node.child_by_field_name("left") or node)):
                return False
        elif node.type == "assignment":
            left = node.child_by_field_name("left")
            if left is None or text not in left.text or left.type in ("attribute", "subscript"):
                continue
            if left.type != "identifier":
                return False  # (``a, b = pair``: whatever the pair held)
            if left.text != text:
                continue
            value = _chain_root(node.child_by_field_name("right"))
            if value is None or value.type != "identifier" or value.text not in libraries:
                return False
            bound = True
    return bound


def _descendants(node: Any) -> Any:
    """``node`` and everything under it, not entering nested functions, classes or lambdas."""
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        yield current
        stack.extend(c for c in current.named_children
                     if c.type not in ("function_definition", "class_definition", "lambda"))


def _chain_root(node: Any) -> Any:
    """The name a chain of attributes, calls and subscripts starts at (``pd`` of ``pd.Series(y).map(type)``)."""
    while node is not None and node.type in ("attribute", "call", "subscript", "parenthesized_expression"):
        if node.type == "parenthesized_expression":
            inner = node.named_children
            node = inner[0] if len(inner) == 1 else None
        else:
            node = node.child_by_field_name(_HELD[node.type])
    return node


def _root(node: Any) -> Any:
    while node.type == "attribute":
        node = node.child_by_field_name("object")
        if node is None:
            return None
    return node


def tensor_method_sites(
    root: Any, source: bytes, catalog: Catalog, skip_names: set[str], taken: Iterable[tuple[int, int]],
    start: int = 0, end: int | None = None,
) -> list[Site]:
    """Guessed ``torch.Tensor`` method calls in ``start..end``; ``taken`` spans are already resolved."""
    taken = set(taken)
    sites: list[Site] = []
    libraries: frozenset[bytes] | None = None
    methods = catalog.tensor_methods  # method name (bytes) -> torch name or None, kept per catalog
    for match in _METHOD_CALL.finditer(source, start, len(source) if end is None else end):
        word = match[1]
        if word in methods:
            torch_name = methods[word]
        else:
            torch_name = methods[word] = catalog.tensor_method(word.decode())
        if torch_name is None:
            continue
        at = match.start(1)
        ident = root.named_descendant_for_byte_range(at, at + len(word))
        if ident is None or ident.type != "identifier" or ident.start_byte != at:
            continue
        attribute = ident.parent
        if attribute is None or attribute.type != "attribute" \
                or (attribute.start_byte, attribute.end_byte) in taken:
            continue
        call = attribute.parent
        if call is None or call.type != "call" or call.start_byte != attribute.start_byte:
            continue
        receiver = attribute.child_by_field_name("object")
        if receiver is None or receiver.type in _LITERALS:
            continue
        if receiver.type == "identifier" and source[receiver.start_byte:receiver.end_byte] in (b"self", b"cls"):
            continue
        if receiver.type == "call":
            function = receiver.child_by_field_name("function")
            if function is not None and function.type == "identifier" and function.text == b"super":
                continue
        base = _root(receiver)
        data = receiver.type == "attribute" and receiver.child_by_field_name("attribute").text == b"data"
        if base is not None and base.type == "identifier" and base.text.decode("utf-8", "replace") in skip_names \
                and not data:  # ``self.w.data.zero_()``: a tensor's data, whatever ``self`` is
            continue
        if receiver.type in ("call", "subscript") or receiver.type == "attribute" and base is not None \
                and base.type != "identifier":
            chained = _chain_root(receiver)
            if libraries is None:
                libraries = library_names(source)
            if chained is not None and chained.type == "identifier" and chained.text in libraries:
                continue  # (a NumPy, pandas or standard-library value)
        record = catalog.lookup(torch_name)
        if record is not None:
            sites.append(Site(torch_name, record, "call", attribute, member=ident, call=call, guess=True))
    return sites
