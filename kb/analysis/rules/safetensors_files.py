"""``import safetensors.torch`` (and ``from safetensors.torch import ...``): its names bound to MsSafetensors, which
writes and reads the same file format for MindSpore tensors (kb/analysis/safetensorfiles.py)."""
from __future__ import annotations

from collections.abc import Iterable

from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.safetensorfiles import RECORD, TITLE, safetensor_imports


@register
class SafetensorsFiles(Rule):
    name = "safetensors-files"
    scope = "file"
    record = RECORD
    title = TITLE
    order = 70
    needs_torch_imports = False  # a checkpoint module may import safetensors.torch and not torch itself
    triggers = (b"safetensors",)
    example = """\
import safetensors.torch as st


def export(model, path):
    st.save_file(model.state_dict(), path)
"""

    def find(self, context: Context) -> Iterable[Finding]:
        if b"safetensors" not in context.source:
            return
        for statement, edits in safetensor_imports(context.root, context.source, context.alias):
            yield Finding(statement, edits)
