"""``hasattr(torch, 'compiler')`` and its spellings answered for the converted code (kb/analysis/featuretests.py)."""
from __future__ import annotations

from collections.abc import Iterable

from kb.analysis.featuretests import RECORD, RUNTIME_TITLE, TITLE, feature_tests, present_title
from kb.analysis.rewrite import spelled
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.rules.name_lookups import table_tests
from kb.analysis.runtimelookups import table_names
from kb.analysis.text import TextEdit


@register
class FeatureTests(Rule):
    name = "feature-test"
    scope = "expression"
    record = RECORD
    title = TITLE
    needs_torch_imports = False  # the finder itself looks for names bound by torch imports
    order = 10
    triggers = (b"hasattr", b"dir", b"getattr")
    example = """\
import torch.nn.functional as F
if hasattr(F, "scaled_dot_product_attention"):
    FAST = True
"""

    def find(self, context: Context) -> Iterable[Finding]:
        def converts(torch_name: str) -> str | None:
            """The MindSpore API the name converts to in the configured family (as the engine chooses)."""
            record = context.catalog.lookup(torch_name)
            choice = context.choose(record) if record is not None else None
            api = choice.api if choice is not None else None
            return api if api and api.startswith("mindspore") else None

        def table(module: str) -> list[str]:
            """The names the module's table of run-time lookups holds (runtimelookups.py)."""
            return table_names(module, *table_tests(context))

        for call, text, tested, api in feature_tests(context.root, context.source, context.imports, converts, table):
            if api and text == api:  # getattr(nn, 'SiLU', None): the API itself
                text = spelled(api, context.alias)
            runtime = tested is not None and tested.endswith(".<name>")
            title = present_title(tested, api) if tested and api else RUNTIME_TITLE if runtime else None
            yield Finding(call, [TextEdit(call.start_byte, call.end_byte, text)], title=title,
                          call_span=(call.start_byte, call.end_byte))
