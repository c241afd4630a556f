"""A function (or a class) whose calls convert by a template, used as a value: ``fn = rearrange``,
``partial(rearrange, ...)``, ``apply(repeat, xs, 'b n -> b k n', k=2)``, ``{"mean": reduce}``.

A call ``rearrange(x, p, h=2)`` becomes the template's code (``MsEinops.apply(x, p, h=2)``); the target's API
(``ops.permute``) is only what that code mostly calls, so renaming a reference to it gives a function that takes
other arguments (esbn-pytorch's ``repeat`` passed in became ``ops.tile``: ``TypeError ... keyword argument 'b'``).
Where the template passes every parameter of torch's signature on, in order (``MsEinops.apply({tensor}, {pattern}
{**axes_lengths})``), the reference becomes a function with torch's signature whose body is that call, written once
into the file with the template's helper::

    def ms_einops_rearrange(tensor, pattern, **axes_lengths):
        return MsEinops.apply(tensor, pattern, **axes_lengths)

so every later call, positional or by torch's keywords, runs the code a call converts to. A class whose calls
become a helper class taking torch's parameters (``self.dist = torch.distributions.Categorical`` ->
``MsCategorical``) is referred to the same way, and only where such a template exists. Where the template does more
with the arguments (a condition, an optional keyword, the receiver), a reference the engine would rename to the
target's API is left for a human with the reason; its markers and torch-signature adapters stay as they are.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from kb.analysis.adapters import insertion
from kb.analysis.rewrite import in_type_context, is_auto, spelled
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.text import TextEdit
from kb.analysis.transforms import MISSING, literal, parse_signature

TITLE = "Refer to a function with torch's parameters that runs the converted call"
FIELD = re.compile(r"\{(\*{0,2})([A-Za-z_]\w*)\}")
STAR = {"positional": "", "keyword_only": "", "var_positional": "*", "var_keyword": "**"}


@register
class TemplateReferences(Rule):
    name = "template-references"
    scope = "expression"
    record = {"torch": "einops.rearrange"}
    title = TITLE
    order = 60
    example = """\
from functools import partial
from einops import rearrange
def run(x):
    to_rows = partial(rearrange, pattern='b n d -> (b n) d')
    return to_rows(x)
"""

    def find(self, context: Context) -> Iterable[Finding]:
        for use in context.uses_named(("",)):
            kind = (use.record or {}).get("kind")
            if use.kind != "attribute" or use.member or kind not in ("function", "class"):
                continue
            choice = context.choose(use.record)
            templates = choice.target.get("template") if choice is not None and is_auto(choice) else None
            if not templates or templates == [""]:
                continue  # (a plain rename: the engine's)
            if kind == "class" and not _builds_helper_class(choice.target):
                continue
            node = context.root.named_descendant_for_byte_range(use.start, use.end)
            if node is None or in_type_context(node):
                continue
            made = _function(use.record, choice.target, context.alias)
            if isinstance(made, str):
                if kind == "function" and [e.new_text for e in use.edits] == [spelled(choice.api, context.alias)]:
                    # (renamed to the API the template mostly calls: a function taking other arguments)
                    yield Finding((use.start, use.end), reason=made, record=use.record, replaces=use.torch_name)
                continue  # (a marker or a torch-signature adapter already: the engine's)
            name, definitions = made
            edits = [TextEdit(use.start, use.end, name)]
            for defined, text in definitions:
                added = insertion(node, context.source, defined, text)
                edits += [added] if added is not None else []
            yield Finding((use.start, use.end), edits, record=use.record, replaces=use.torch_name,
                          title=f"{TITLE} ({name})")


def _builds_helper_class(target: dict[str, Any]) -> bool:
    """Whether a class's calls become its helper class's (``MsCategorical(...)`` of ``class MsCategorical``)."""
    found = re.match(r"class (\w+)\(", target.get("helper") or "")
    return found is not None and all(t.startswith(found[1] + "(") for t in target.get("template") or [])


def _function(record: dict[str, Any], target: dict[str, Any], alias: str) -> tuple[str, list[tuple[str, str]]] | str:
    """(the function's name, [(name, definition)] of the template's helper and the function), or why there is none."""
    torch = str(record.get("torch"))
    why = f"{torch} is referenced without a call and its calls convert by a template"
    signature = parse_signature(record.get("torch_signature"))
    if signature is None:
        return f"{why}; torch's signature is unknown"
    for template in target.get("template") or []:
        text = template.replace("{ms}", alias)
        fields = FIELD.findall(text)
        wanted = [(STAR[p.kind], p.name) for p in signature.parameters]
        if "{" in FIELD.sub("", text) or sorted(fields, key=lambda f: f[1]) != sorted(wanted, key=lambda f: f[1]):
            continue  # (a condition, an optional keyword, the receiver; or a parameter it does not pass on)
        if [n for _, n in fields] != [n for _, n in wanted] or any(
                p.default is not None and literal(p.default) is MISSING for p in signature.parameters):
            continue
        body = FIELD.sub(lambda m: ", **" + m[2] if m[1] == "**" else m[1] + m[2], text)
        body = body.replace("(, **", "(**")
        header, star = [], False
        for p in signature.parameters:
            if p.kind == "keyword_only" and not star:
                header.append("*")
            star = star or p.kind in ("keyword_only", "var_positional")
            header.append(STAR[p.kind] + p.name + ("" if p.default is None else f"={p.default}"))
        name = "ms_" + re.sub(r"\W", "_", torch)
        doc = f'"""{torch}\'s parameters, running the code its calls convert to (written by msmap convert)."""'
        definitions = []
        helper = target.get("helper")
        if helper:
            helper_name = helper.split(None, 1)[1].split("(", 1)[0].split(":", 1)[0]
            definitions.append((helper_name, helper.replace("{ms}", alias).rstrip("\n") + "\n"))
        definitions.append((name, f"def {name}({', '.join(header)}):\n    {doc}\n    return {body}\n"))
        return name, definitions
    return f"{why} that does more than pass its arguments on"
