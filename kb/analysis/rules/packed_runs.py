"""``self.rnn(packed)`` runs the layer on the padded batch with seq_length (kb/analysis/packedsequences.py)."""
from __future__ import annotations

from collections.abc import Iterable

from kb.analysis.adapters import insertion
from kb.analysis.packedsequences import PACK, PACKED_BY, RECORD, TITLE, consumers
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.tensors import call_at
from kb.analysis.text import TextEdit


@register
class PackedRuns(Rule):
    name = "packed-run"
    scope = "function"
    record = RECORD
    title = TITLE
    needs_torch_imports = False
    order = 60
    triggers = (b"pack_padded_sequence",)
    example = """\
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(4, 8, batch_first=True)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(x, lengths, batch_first=True)
        out, _ = self.rnn(packed)
        y, _ = pad_packed_sequence(out, batch_first=True)
        return y
"""

    def find(self, context: Context) -> Iterable[Finding]:
        packing = [u for u in context.uses_named((PACK,))
                   if u.torch_name == PACK and u.call_span and u.edits and u.target]
        # the packed-sequence functions (data)
        definition = packing[0].target.get("helper") if packing and packing[0].target else None
        calls = [c for u in packing if u.call_span and (c := call_at(context.root, u.call_span)) is not None]
        for call, text in consumers(context.root, context.source, calls):
            helper = None if definition is None else insertion(
                call, context.source, PACKED_BY.decode(), definition.replace("{ms}", context.alias).rstrip("\n") + "\n")
            yield Finding(call, [TextEdit(call.start_byte, call.end_byte, text)] + ([helper] if helper else []),
                          call_span=(call.start_byte, call.end_byte))
