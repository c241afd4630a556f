"""``getattr(nn, name)`` becomes a dict of the torch classes the name can be (kb/analysis/namelookups.py)."""
from __future__ import annotations

from collections.abc import Callable, Iterable

from kb.analysis.imports import ImportTable
from kb.analysis.namelookups import RECORD, TITLE, UNLISTED, name_lookups, replacement
from kb.analysis.rewrite import is_auto, unverified_consistent
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.runtimelookups import lookup_edits, plain_rename, reference_converts
from kb.analysis.text import TextEdit


def table_tests(context: Context) -> tuple[Callable[[str], bool], Callable[[str], list[str]],
                                           Callable[[str], bool]]:
    """What ``runtimelookups.table_names`` asks, for the context: whether a name may sit in the table (its
    reference converts), the module's names, whether a function of the module is a plain rename for ``f(x)``."""
    def in_table(name: str) -> bool:
        record = context.catalog.lookup(name)
        return record is not None and reference_converts(record, context.choose(record), context.alias)

    def renamed(name: str) -> bool:
        record = context.catalog.lookup(name)
        return record is not None and plain_rename(record, context.choose(record))

    return in_table, context.catalog.names_below, renamed


@register
class NameLookups(Rule):
    name = "name-lookup"
    scope = "function"
    record = RECORD
    title = TITLE
    needs_torch_imports = False  # the finder itself looks for names bound by torch imports
    order = 20
    triggers = (b"getattr",)
    example = """\
import torch.nn as nn
def make_norm(dims, width):
    return getattr(nn, f"BatchNorm{dims}d")(width)
"""

    def find(self, context: Context) -> Iterable[Finding]:
        def converts(name: str) -> bool:
            """Whether a reference to the torch class ``name`` (``norm = nn.BatchNorm2d``) converts automatically."""
            record = context.catalog.lookup(name)
            if record is None or record.get("kind") != "class":
                return False
            choice = context.choose(record)
            # a target written by a template (a helper such as MsInstanceNorm) has no MindSpore class to name
            return choice is not None and bool(choice.api) and not choice.target.get("template") \
                and (is_auto(choice) or unverified_consistent(choice))

        module_level: set[str] | None = None
        for call, module in name_lookups(context.root, context.source, context.imports):
            span = (call.start_byte, call.end_byte)
            text = replacement(call, module, context.catalog.names_below, converts)
            if text is None:  # names known only at run time, or no class listed: a table of the proven ones
                if module_level is None:  # (its definition goes at module level: the receiver must be bound there)
                    module_level = {n.bound for _, n in ImportTable.build(context.root, context.source).names}
                receiver = call.child_by_field_name("arguments").named_children[0].text.decode("utf-8", "replace")
                edits = lookup_edits(call, module, receiver.split(".")[0] in module_level, context.source,
                                     *table_tests(context))
                if edits:
                    yield Finding(call, edits, title="Look the name up at run time among the proven conversions",
                                  call_span=span)
                    continue
            if text is None:
                yield Finding(call, reason=UNLISTED, call_span=span)
            else:
                yield Finding(call, [TextEdit(call.start_byte, call.end_byte, text)], call_span=span)
