"""The RNN call that takes a packed sequence: ``out, h = self.rnn(packed)``.

MindSpore has no packed sequences: its RNN layers take the padded batch and the lengths as
``seq_length`` (``construct(x, hx=None, seq_length=None)``), stop each sequence at its length
and give zeros past it. ``pack_padded_sequence`` becomes a small function that keeps the padded
batch with its lengths, and ``pad_packed_sequence`` one that cuts and pads it back (data: the
templates of those two records). Between them, the call that consumes the packed value is
rewritten here::

    packed = pack_padded_sequence(x, lengths, batch_first=True)      # record template
    out, _ = self.rnn(packed)                -> ms_run_packed(self.rnn, packed)
    y, _ = pad_packed_sequence(out, batch_first=True)                # record template

A consumer is a call in the same function whose first argument is a variable assigned from
``pack_padded_sequence`` (or from the function it became); ``ms_run_packed`` runs the layer with
``seq_length`` (turning the batch if the layer's ``batch_first`` differs) and packs its output the
same way, so ``pad_packed_sequence`` can undo it. The three functions are one definition in the
records' data (``helper``), written once before the first statement that needs one of them.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

PACK = "torch.nn.utils.rnn.pack_padded_sequence"
PACKED_BY = b"ms_pack_padded_sequence"  # what PACK becomes (its record's template), and the helper's name
NAME = "ms_run_packed"
RECORD: dict[str, Any] = {
    "torch": "torch.nn.RNNBase.__call__", "kind": "function", "namespace": "torch.nn", "source": "curated",
    "targets": [], "caveats": [], "torch_signature": "(input, hx=None)",
    "advice": "An RNN layer given a packed sequence runs on the padded batch with seq_length=lengths.",
}
TITLE = f"Run the RNN on the padded batch with seq_length ({NAME})"



def consumers(root: Any, source: bytes, packing_calls: Iterable[Any]) -> Iterable[tuple[Any, str]]:
    """``(call, replacement)`` for each call that takes a packed variable as its first argument."""
    calls = {c.id: c for c in [*packing_calls, *_converted_packing(root, source)]}
    seen: set[int] = set()
    for call in calls.values():
        statement = call.parent
        if statement is None or statement.type != "assignment":
            continue
        left = statement.child_by_field_name("left")
        function = _enclosing_function(statement)
        if left is None or left.type != "identifier" or function is None:
            continue
        for consumer in _calls_taking(function, left.text):
            if consumer.id not in seen and consumer.id not in calls:
                seen.add(consumer.id)
                callee = consumer.child_by_field_name("function")
                args = consumer.child_by_field_name("arguments")
                inner = source[args.start_byte + 1:args.end_byte - 1].decode("utf-8", "replace").strip()
                yield consumer, f"{NAME}({callee.text.decode('utf-8', 'replace')}, {inner})"


def _calls_taking(function: Any, name: bytes) -> Iterable[Any]:
    stack = [function.child_by_field_name("body")]
    while stack:
        node = stack.pop()
        if node is None:
            continue
        if node.type == "call":
            callee = node.child_by_field_name("function")
            args = node.child_by_field_name("arguments")
            items = [a for a in args.named_children if a.type != "comment"] if args is not None else []
            if callee is not None and callee.text.split(b".")[-1] != PACKED_BY and callee.text != NAME.encode() \
                    and items and items[0].type == "identifier" and items[0].text == name \
                    and all(a.type != "keyword_argument" or a.child_by_field_name("name").text == b"hx"
                            for a in items[1:]) and len(items) <= 2:
                yield node
        stack.extend(node.named_children)


def _converted_packing(root: Any, source: bytes) -> Iterable[Any]:
    """Calls of the function ``pack_padded_sequence`` became (a later pass of fix-all)."""
    at = source.find(PACKED_BY + b"(")
    while at >= 0:
        node = root.named_descendant_for_byte_range(at, at + len(PACKED_BY))
        call = node.parent if node is not None else None
        if call is not None and call.type == "call" and call.child_by_field_name("function").id == node.id:
            yield call
        at = source.find(PACKED_BY + b"(", at + 1)


def _enclosing_function(node: Any) -> Any | None:
    while node is not None and node.type != "function_definition":
        node = node.parent
    return node

