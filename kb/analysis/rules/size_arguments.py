"""A tensor's ``new_zeros`` / ``new_ones`` / ``new_empty`` given its size as several arguments: ``x.new_zeros(b, c,
*spatial)``, ``x.new_ones(*shape)``.

torch's methods collect the size from any number of arguments; MindSpore's take one (an int or a sequence), so
``x.new_zeros(2, 3)`` reads 3 as its dtype and ``x.new_zeros(*shape)`` raises (highresnet: ``new_zeros() takes 2
positional arguments but 4 were given``). The arguments become one tuple, ``x.new_zeros((b, c, *spatial))``; a
``device=`` or ``pin_memory=`` goes (MindSpore places tensors by its context) and ``dtype=`` stays. Where the receiver
is not known to be a tensor, the call is written behind a runtime type test as kb/analysis/guarded.py does
(``(x.new_zeros((*shape,)) if isinstance(x, ms.Tensor) else x.new_zeros(*shape))``). A call passing
``requires_grad`` or ``layout``, or on a receiver that is not simple, is left for a human with the reason.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kb.analysis.arguments import Blocked, read_arguments
from kb.analysis.guarded import in_runtime_test, runtime_test, simple
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.tensors import call_at
from kb.analysis.text import TextEdit, apply_edits

METHODS = ("torch.Tensor.new_zeros", "torch.Tensor.new_ones", "torch.Tensor.new_empty")
DROPPED = ("device", "pin_memory")
TITLE = "Pass the size as one tuple (MindSpore's method takes one size argument)"


@register
class SizeArguments(Rule):
    name = "size-arguments"
    scope = "expression"
    record = {"torch": "torch.Tensor.new_zeros"}
    title = TITLE
    order = 60
    example = """\
import torch
def pad(x: torch.Tensor, shape):
    return torch.cat([x.new_zeros(*shape), x])
"""

    def find(self, context: Context) -> Iterable[Finding]:
        uses = context.uses_named(METHODS)
        inner = context.spans_of_uses() if uses else set()
        for use in uses:
            if use.torch_name not in METHODS or use.call_span is None:
                continue
            call = call_at(context.root, use.call_span)
            if call is None:
                continue
            try:
                args, _ = read_arguments(call)
            except Blocked:
                continue
            positional = [a for a in args if a.keyword is None and a.star != "**"]
            if len(positional) < 2 and not any(a.star == "*" for a in positional):
                continue  # (one size: MindSpore takes it as it is)
            found = _finding(context, use, call, args, positional, inner)
            if found is not None:
                yield found


def _finding(context: Context, use: Any, call: Any, args: list, positional: list, inner: set) -> Finding | None:
    unsupported = [a.keyword for a in args if a.keyword in ("requires_grad", "layout")]
    if unsupported or any(a.star == "**" for a in args):
        why = f"passes {unsupported[0]}" if unsupported else "unpacks **kwargs"
        return Finding((use.start, use.end), reason=f"{use.torch_name} with its size in several arguments {why}",
                       record=use.record, replaces=use.torch_name)
    first, last = positional[0], positional[-1]
    closing = ",)" if len(positional) == 1 else ")"
    edits = [TextEdit(first.start, first.start, "("), TextEdit(last.end, last.end, closing)]
    for index, arg in enumerate(args):
        if arg.keyword in DROPPED:  # (from the end of the argument before it: ``x.new_zeros(*s, device=d)``)
            edits.append(TextEdit(args[index - 1].end if index else arg.start, arg.end, ""))
    if not use.guess:
        return Finding((use.start, use.end), edits, record=use.record, replaces=use.torch_name,
                       call_span=(call.start_byte, call.end_byte))
    receiver = call.child_by_field_name("function").child_by_field_name("object")
    if receiver is not None and in_runtime_test(call, receiver, f"{context.alias}.Tensor"):
        return None  # (converted already: a branch of the test)
    others = [s for s in inner if call.start_byte <= s[0] and s[1] <= call.end_byte and s != (use.start, use.end)]
    if receiver is None or not simple(receiver) or others:
        return Finding((use.start, use.end), reason=f"if this is a tensor: {use.torch_name} with its size in several "
                       "arguments takes them as one tuple", record=use.record, replaces=use.torch_name)
    old = call.text
    new = apply_edits(old, [TextEdit(e.start - call.start_byte, e.end - call.start_byte, e.new_text) for e in edits])
    text = runtime_test(new, old, receiver, f"{context.alias}.Tensor")
    return Finding((use.start, use.end), [TextEdit(call.start_byte, call.end_byte, text)], record=use.record,
                   replaces=use.torch_name, call_span=(call.start_byte, call.end_byte),
                   title=f"{TITLE} (if the receiver is a tensor, tested at run time)")
