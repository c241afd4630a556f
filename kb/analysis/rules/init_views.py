"""An in-place initialiser given a view of a tensor (``nn.init.eye_(self.fc.bias.view(n, n))``) fills the tensor.

torch's ``view`` shares the tensor's storage, so filling the view fills the tensor (a bias initialised as an
identity matrix). MindSpore's ``view`` is a copy: the rewrite ``ms_init_(b.view(n, n), ...)`` would fill the copy
and leave the parameter as it was, silently. So the fill goes through the base:

- where the chosen rewrite's helper takes the view's shape (``def ms_eye_(target, *view)``), the call becomes
  ``ms_eye_(self.fc.bias, n, n)``: the values of the view's shape written into the base, reshaped;
- any other initialiser of a view keeps a marker saying why.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kb.analysis.adapters import insertion
from kb.analysis.arguments import Blocked, read_arguments
from kb.analysis.rewrite import is_auto
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.settingstatements import node_of
from kb.analysis.text import TextEdit

PREFIX = "torch.nn.init."
VIEWS = ("view",)
TITLE = "Fill the tensor the view shares its storage with (a MindSpore view is a copy)"
LEFT = ("fills a view of a tensor: MindSpore's view is a copy, so the tensor would keep its values; "
        "initialise the tensor itself")


@register
class InitViews(Rule):
    name = "init-views"
    scope = "statement"
    record = {"torch": "torch.nn.init.eye_"}
    title = TITLE
    order = 60
    triggers = (b"view",)
    example = """\
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, n * n)
        nn.init.eye_(self.fc.bias.view(n, n))
"""

    def find(self, context: Context) -> Iterable[Finding]:
        if b".view(" not in context.source:
            return
        for use in context.uses_named((PREFIX,)):
            if not use.torch_name.startswith(PREFIX) or use.record is None:
                continue
            call = node_of(context.root, use)
            viewed = _viewed(call) if call is not None and call.type == "call" else None
            if viewed is None:
                continue
            base, shape = viewed
            choice = context.choose(use.record)
            helper = (choice.target.get("helper") or "") if choice is not None and is_auto(choice) else ""
            head = helper.split(None, 1)[1].split(")", 1)[0] if helper.startswith("def ") else ""
            span = (call.start_byte, call.end_byte)
            if not head.endswith("*view"):
                yield Finding((use.start, use.end), reason=LEFT, call_span=span, replaces=use.torch_name,
                              record=use.record)
                continue
            edits = [TextEdit(call.start_byte, call.end_byte, f"{head.split('(', 1)[0]}({base}, {shape})")]
            edits += helper_written(call, context, helper)
            yield Finding((use.start, use.end), edits, call_span=span, replaces=use.torch_name, record=use.record)


def helper_written(node: Any, context: Context, helper: str | None) -> list[TextEdit]:
    """The edit writing a target's ``helper`` (``def name(...)``/``class name(...)``) once before the statement
    holding ``node``; none when there is no helper or the file defines it above already."""
    if not helper:
        return []
    name = helper.split(None, 1)[1].split("(", 1)[0].split(":", 1)[0]
    added = insertion(node, context.source, name, helper.replace("{ms}", context.alias).rstrip("\n") + "\n")
    return [added] if added is not None else []


def _viewed(call: Any) -> tuple[str, str] | None:
    """(the base's text, the view's arguments' text) when the call's one argument is ``<base>.view(<shape>)``."""
    try:
        args, _ = read_arguments(call)
    except Blocked:  # (an incomplete call: the engine's use says why)
        return None
    arguments = call.child_by_field_name("arguments")
    if len(args) != 1 or args[0].star or arguments is None or args[0].keyword not in (None, "tensor"):
        return None
    value = next((c.child_by_field_name("value") if c.type == "keyword_argument" else c
                  for c in arguments.named_children if c.type != "comment"), None)
    if value is None or value.type != "call":
        return None
    function = value.child_by_field_name("function")
    attribute = function is not None and function.type == "attribute"
    method = function.child_by_field_name("attribute") if attribute else None
    if method is None or method.text.decode() not in VIEWS:
        return None
    base, inner = function.child_by_field_name("object"), value.child_by_field_name("arguments")
    if base is None or inner is None or not inner.named_children or \
            any(c.type in ("keyword_argument", "list_splat", "dictionary_splat") for c in inner.named_children):
        return None
    return base.text.decode("utf-8", "replace"), inner.text.decode("utf-8", "replace")[1:-1].strip()
