"""``torch.ops.aten.<op>[.<overload>](...)``: a call of one of torch's own ATen operators through the operator
registry. Where torch has a public function of that name (``torch.ops.aten.mul.Tensor(x, y)`` is ``torch.mul(x,
y)``), the call is spelled as that function and converts by its knowledge-base record in the next pass (markers and
all, when that record is not automatic). The arguments stay as written: the public function takes the operator's
positional arguments in the same order; a ``self=`` keyword (the public name is ``input``) or an ``out`` overload
keeps the marker. An ATen operator with no public function (``aten.slice``) and any other namespace
(``torch.ops.my_lib.op``: a registered C++ kernel) keep the marker, the first with a short reason.
"""
from __future__ import annotations

from collections.abc import Iterable

from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.text import TextEdit

NAME = "torch.ops"
TITLE = "Call the public torch function of the ATen operator"


@register
class AtenOps(Rule):
    name = "aten-ops"
    scope = "expression"
    record = {"torch": NAME}
    title = TITLE
    order = 30
    triggers = (b"aten",)
    example = """\
import torch
def f(x, y):
    return torch.ops.aten.mul.Tensor(x, y) + torch.ops.aten.relu(x)
"""

    def find(self, context: Context) -> Iterable[Finding]:
        if b"aten" not in context.source:
            return
        for use in context.uses_called((NAME,)):
            spelled = context.source[use.start:use.end].decode("utf-8", "replace")
            node = context.root.named_descendant_for_byte_range(use.start, use.end)
            if node is None or not spelled.endswith(".ops"):
                continue
            chain, callee = [], node
            while callee.parent is not None and callee.parent.type == "attribute" \
                    and callee.parent.child_by_field_name("object") == callee:
                callee = callee.parent
                chain.append(callee.child_by_field_name("attribute").text.decode())
            call = callee.parent
            if call is None or call.type != "call" or call.child_by_field_name("function") != callee \
                    or not 2 <= len(chain) <= 3 or chain[0] != "aten":
                continue
            op, overload = chain[1], (chain[2] if len(chain) == 3 else "default")
            public = context.catalog.lookup(f"torch.{op}")
            arguments = call.child_by_field_name("arguments")
            keywords = [c.child_by_field_name("name").text.decode() for c in arguments.named_children
                        if c.type == "keyword_argument"] if arguments is not None else []
            if public is None or public.get("kind") != "function" or "out" in overload.split("_") \
                    or "self" in keywords:
                why = (f"aten.{op}: an ATen operator with no public torch function (write the indexing or the ops "
                       f"it stands for)" if public is None else f"aten.{op}.{overload}: not the public torch.{op}")
                yield Finding((use.start, use.end), reason=why, replaces=NAME, record=use.record)
                continue
            text = spelled[:-len(".ops")] + "." + op
            yield Finding((use.start, use.end), [TextEdit(callee.start_byte, callee.end_byte, text)],
                          replaces=NAME, record=use.record, title=f"{TITLE} (torch.{op})",
                          call_span=(callee.start_byte, callee.end_byte))
