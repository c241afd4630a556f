"""Tensor-method guesses: ``x.view(...)`` where ``view`` is a ``torch.Tensor`` method.

Without types the engine cannot know ``x`` is a tensor, so these uses are marked
``guess=True``.  Receivers that are certainly not tensors are left alone: ``self``
and ``cls``, literals, ``super()``, modules imported from elsewhere (``np``, ``os``),
and objects whose torch type is already known (those resolved as real uses).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from kb.analysis.catalog import Catalog
from kb.analysis.resolver import Site

_METHOD_CALL = re.compile(rb"\.[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(")
_LITERALS = frozenset({
    "string", "concatenated_string", "integer", "float", "list", "dictionary", "set", "tuple",
    "list_comprehension", "dictionary_comprehension", "set_comprehension", "true", "false", "none",
})


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
        record = catalog.lookup(torch_name)
        if record is not None:
            sites.append(Site(torch_name, record, "call", attribute, member=ident, call=call, guess=True))
    return sites
