"""``hasattr(torch, 'compiler')`` and its spellings are False after migration (kb/analysis/featuretests.py)."""
from __future__ import annotations

from collections.abc import Iterable

from kb.analysis.featuretests import RECORD, TITLE, feature_tests
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.text import TextEdit


@register
class FeatureTests(Rule):
    name = "feature-test"
    scope = "expression"
    record = RECORD
    title = TITLE
    needs_torch_imports = False  # the finder itself looks for names bound by torch imports
    order = 10
    example = """\
import torch.nn.functional as F
if hasattr(F, "scaled_dot_product_attention"):
    FAST = True
"""

    def find(self, context: Context) -> Iterable[Finding]:
        for call, text in feature_tests(context.root, context.source, context.imports):
            yield Finding(call, [TextEdit(call.start_byte, call.end_byte, text)],
                          call_span=(call.start_byte, call.end_byte))
