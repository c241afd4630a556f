"""Assignments to torch's performance and determinism flags (``torch.backends.cudnn.deterministic = True``,
``torch.backends.cudnn.benchmark = False``, ``torch.backends.cuda.matmul.allow_tf32 = True``): the statement
becomes MindSpore's switch for the same thing where one exists on the configured device, or a comment saying
why it has no effect there. Other flags keep their marker."""
from __future__ import annotations

from collections.abc import Iterable

from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.settingstatements import commented, node_of, own_line, statement_of
from kb.analysis.text import TextEdit

GPU_PRECISION = "device_context.gpu.op_precision"
# flag -> (the MindSpore call setting it, on which devices; None: none), why it goes elsewhere
FLAGS: dict[str, tuple[str | None, tuple[str, ...], str]] = {
    "torch.backends.cudnn.deterministic": (
        "set_deterministic({value})", ("CPU", "GPU", "Ascend"), ""),
    "torch.backends.cudnn.benchmark": (
        None, (), "cuDNN autotuning flag removed: it only picks faster kernels, MindSpore has no such switch"),
    "torch.backends.cudnn.enabled": (
        None, (), "cuDNN on/off flag removed: MindSpore picks its kernels per device and has no such switch"),
    "torch.backends.cuda.matmul.allow_tf32": (
        GPU_PRECISION + ".matmul_allow_tf32({value})", ("GPU",),
        "TF32 matmul flag removed: an NVIDIA GPU setting MindSpore on {device} does not have"),
    "torch.backends.cudnn.allow_tf32": (
        GPU_PRECISION + ".conv_allow_tf32({value})", ("GPU",),
        "TF32 convolution flag removed: an NVIDIA GPU setting MindSpore on {device} does not have"),
}
TITLE = "Set the flag through MindSpore, or remove it where it has no effect"


@register
class BackendFlags(Rule):
    name = "backend-flags"
    scope = "statement"
    record = {"torch": "torch.backends.cudnn.benchmark"}
    title = TITLE
    order = 40
    example = """\
import torch
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False
if True:
    torch.backends.cuda.matmul.allow_tf32 = True
"""

    def find(self, context: Context) -> Iterable[Finding]:
        if b"backends" not in context.source:
            return
        source, device = context.source, context.settings.device
        for use in context.uses_named(("torch.backends.",)):
            node = node_of(context.root, use)
            while node.parent is not None and node.parent.type == "attribute" \
                    and node.parent.child_by_field_name("object") == node:
                node = node.parent  # (the use may name a prefix: ``torch.backends.cuda.matmul``)
            assignment = node.parent
            if assignment is None or assignment.type != "assignment" \
                    or assignment.child_by_field_name("left") != node or assignment.child_by_field_name("type"):
                continue
            flag = use.torch_name + source[use.end:node.end_byte].decode("utf-8", "replace")
            value = assignment.child_by_field_name("right")
            statement = statement_of(assignment)
            if flag not in FLAGS or value is None or value.type == "assignment" or statement is None:
                continue
            call, devices, why = FLAGS[flag]
            if call is not None and device in devices:
                if not own_line(statement, source):
                    continue
                text = f"{context.alias}." + call.format(value=value.text.decode("utf-8", "surrogateescape"))
                edit = TextEdit(statement.start_byte, statement.end_byte, text)
            else:
                edit = commented(statement, source, why.format(device=device))
            yield Finding((use.start, use.end), [edit], call_span=(statement.start_byte, statement.end_byte),
                          replaces=use.torch_name, record=use.record)
