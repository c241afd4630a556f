"""``try: import torch ... except ImportError: ...`` settles as it runs without torch (importfallbacks.py)."""
from __future__ import annotations

from collections.abc import Iterable

from kb.analysis.importfallbacks import RECORD, TITLE, guarded_imports
from kb.analysis.rules import Context, Finding, Rule, register


@register
class GuardedImports(Rule):
    name = "guarded-import"
    scope = "statement"
    record = RECORD
    title = TITLE
    order = 80
    triggers = (b"try", b"except", b"import", b"Error")
    example = """\
try:
    from torch.hub import load_state_dict_from_url
except ImportError:
    from torch.utils.model_zoo import load_url as load_state_dict_from_url
"""

    def find(self, context: Context) -> Iterable[Finding]:
        for statement, edit in guarded_imports(context.root, context.source, context.imports):
            yield Finding(statement, [edit])
