"""torch's choice of attention kernel: ``with torch.backends.cuda.sdp_kernel(enable_flash=False):`` and
``with torch.nn.attention.sdpa_kernel(SDPBackend.MATH):`` as ``with`` items, and the statements
``torch.backends.cuda.enable_flash_sdp(False)`` (math, memory-efficient, cuDNN alike). They pick which CUDA
implementation computes the same attention; MindSpore has no such switch (its fused attention is called
explicitly: ``mindspore.ops.flash_attention_score``), so the item or statement goes and its body stays."""
from __future__ import annotations

from collections.abc import Iterable

from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.settingstatements import node_of, own_line, statement_of
from kb.analysis.stepparts import removal as removed
from kb.analysis.templates import Blocked, removal

CONTEXTS = ("torch.backends.cuda.sdp_kernel", "torch.nn.attention.sdpa_kernel")
SWITCHES = tuple(f"torch.backends.cuda.enable_{kind}_sdp" for kind in ("flash", "math", "mem_efficient", "cudnn"))
TITLE = "Remove the attention kernel choice: MindSpore has no such switch"


@register
class AttentionKernels(Rule):
    name = "attention-kernels"
    scope = "statement"
    record = {"torch": CONTEXTS[0]}
    title = TITLE
    order = 40
    example = """\
import torch
import torch.nn.functional as F
torch.backends.cuda.enable_flash_sdp(False)
def attend(q, k, v):
    with torch.backends.cuda.sdp_kernel(enable_flash=False):
        return F.scaled_dot_product_attention(q, k, v)
"""

    def find(self, context: Context) -> Iterable[Finding]:
        if b"sdp" not in context.source:
            return
        for use in context.uses_named(CONTEXTS + SWITCHES):
            if use.torch_name not in CONTEXTS + SWITCHES:
                continue
            call = node_of(context.root, use)
            if call is None or call.type != "call":
                continue
            if use.torch_name in SWITCHES:
                statement = statement_of(call)
                if statement is None or not own_line(statement, context.source):
                    continue
                edits = [removed(statement, context.source)]
            else:
                try:
                    edits = removal(call, context.source)
                except Blocked:
                    continue
            yield Finding((use.start, use.end), edits, call_span=(call.start_byte, call.end_byte),
                          replaces=use.torch_name, record=use.record)
