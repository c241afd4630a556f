"""``x.requires_grad`` read, and ``x.requires_grad_(...)`` used as a value, on what may be a plain tensor.

MindSpore 2.10 keeps the flag on a ``Parameter`` only: a plain ``Tensor`` has no ``requires_grad`` attribute
(AttributeError), and its ``requires_grad_`` returns None where torch's returns the tensor. So

    x.requires_grad                 ->  getattr(x, "requires_grad", False)
    w = torch.zeros(3).requires_grad_()  ->  w = ms_requires_grad_(ms.ops.zeros(3))

A Parameter answers with its own flag, as torch's does. A plain MindSpore tensor answers False: MindSpore differentiates
only what value_and_grad is given (a Parameter, or a positional input), so no tensor is tracked by itself; torch
answers True for a tensor computed from parameters with grad mode on, which code reads to decide whether to detach
before ``.numpy()`` (the same values either way). A store (``p.requires_grad = False``) works on a Parameter and is
left as written, and so is ``self.requires_grad`` (an object's own attribute).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kb.analysis.adapters import insertion
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.text import TextEdit
from kb.analysis.words import word_starts

RECORD: dict[str, Any] = {
    "torch": "torch.Tensor.requires_grad", "kind": "attribute", "namespace": "torch.Tensor", "source": "curated",
    "targets": [], "caveats": [], "torch_signature": None,
    "advice": "Only a mindspore.Parameter carries requires_grad; a plain tensor reads as not tracked.",
}
METHOD_RECORD: dict[str, Any] = {
    "torch": "torch.Tensor.requires_grad_", "kind": "method", "namespace": "torch.Tensor", "source": "curated",
    "targets": [], "caveats": [], "torch_signature": "(requires_grad=True)",
    "advice": "MindSpore's Tensor.requires_grad_ returns None: the helper returns the tensor, as torch's does.",
}
TITLE = "Read requires_grad where a plain MindSpore tensor has none (False)"
METHOD_TITLE = "Set requires_grad and keep the tensor as the value (MindSpore's requires_grad_ returns None)"
HELPER = '''\
def ms_requires_grad_(tensor, requires_grad=True):
    """Tensor.requires_grad_ (written by msmap convert): sets a Parameter's flag (MindSpore differentiates a plain
    tensor only as an input given to value_and_grad) and returns the tensor, as torch's does."""
    tensor.requires_grad_(requires_grad)
    return tensor
'''


@register
class RequiresGrad(Rule):
    name = "requires-grad"
    scope = "expression"
    record = RECORD
    title = TITLE
    order = 60
    triggers = (b"requires_grad",)
    example = """\
def to_numpy(t):
    return t.detach().numpy() if t.requires_grad else t.numpy()


def leaf():
    return torch.zeros(3).requires_grad_()
"""

    def find(self, context: Context) -> Iterable[Finding]:
        start, end = context.within if context.within != (0, 0) else (0, len(context.source))
        places = [(at, b"requires_grad") for at in word_starts(context.source, b"requires_grad", start, end)]
        places += [(at, b"requires_grad_") for at in word_starts(context.source, b"requires_grad_", start, end)]
        for at, word in sorted(places):
            node = context.root.named_descendant_for_byte_range(at, at + len(word))
            attribute = node.parent if node is not None and node.type == "identifier" else None
            if attribute is None or attribute.type != "attribute" \
                    or attribute.child_by_field_name("attribute").id != node.id:
                continue
            held = attribute.child_by_field_name("object")
            if held is None or held.type == "identifier" and held.text in (b"self", b"cls"):
                continue
            found = _read(attribute, held, context) if node.text == b"requires_grad" else \
                _valued_call(attribute, held, context) if node.text == b"requires_grad_" else None
            if found is not None:
                yield found


def _read(attribute: Any, held: Any, context: Context) -> Finding | None:
    parent = attribute.parent
    if parent is not None and parent.type in ("assignment", "augmented_assignment") \
            and parent.child_by_field_name("left") is not None \
            and parent.child_by_field_name("left").id == attribute.id:
        return None  # a store: a Parameter takes it
    if parent is not None and parent.type in ("pattern_list", "tuple_pattern", "delete_statement"):
        return None
    # the receiver's own text stays where it is (its own conversions apply inside)
    return Finding(attribute, [TextEdit(held.start_byte, held.start_byte, "getattr("),
                               TextEdit(held.end_byte, attribute.end_byte, ', "requires_grad", False)')])


def _valued_call(attribute: Any, held: Any, context: Context) -> Finding | None:
    call = attribute.parent
    if call is None or call.type != "call" or call.parent is None or call.parent.type == "expression_statement":
        return None  # a statement: MindSpore's requires_grad_ sets a Parameter's flag the same way
    arguments = call.child_by_field_name("arguments")
    passed = any(a.type != "comment" for a in arguments.named_children)
    edits = [TextEdit(held.start_byte, held.start_byte, "ms_requires_grad_("),
             TextEdit(held.end_byte, arguments.start_byte + 1, ", " if passed else "")]
    added = insertion(call, context.source, "ms_requires_grad_", HELPER)
    if added is not None:
        edits.append(added)
    return Finding(attribute, edits, title=METHOD_TITLE, record=METHOD_RECORD,
                   call_span=(call.start_byte, call.end_byte), replaces=METHOD_RECORD["torch"])
