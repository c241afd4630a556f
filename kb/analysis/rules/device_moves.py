"""``self.to(device)`` / ``model.to("cuda:0")``: a module moved to a device. MindSpore places a network by its
context (kb record ``torch.nn.Module.to``: "device moves are not needed"), so the statement goes, and a move
whose value is used (``net = Net().to(device)``) becomes the module itself (``Module.to`` returns it). A move
whose argument may be a dtype (``torch.float64``, a name that does not say) keeps its marker: the record's
answer for a cast (``to_float``) is a context change, not a deletion."""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.settingstatements import node_of, own_line, statement_of
from kb.analysis.stepparts import removal as removed
from kb.analysis.text import TextEdit

NAME = "torch.nn.Module.to"
TITLE = "Remove the device move: MindSpore places the network by its context"
# the last name of an argument that holds a device (``device``, ``args.device``, ``x.device``, ``local_rank``)
DEVICE_NAME = re.compile(r"(?:^|_)(?:device|devices|dev|gpu|gpu_id|gpu_ids|cuda|rank|local_rank)(?:$|_)", re.I)


@register
class DeviceMoves(Rule):
    name = "device-moves"
    scope = "statement"
    record = {"torch": NAME}
    title = TITLE
    order = 40
    example = """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, device="cpu"):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.to(device)
net = Net().to(torch.device("cpu"))
"""

    def find(self, context: Context) -> Iterable[Finding]:
        if b".to(" not in context.source:
            return
        devices = {(u.start, u.end) for u in context.uses_named(("torch.device",)) if u.torch_name == "torch.device"}
        for use in context.uses_named((NAME,)):
            if use.torch_name != NAME:
                continue
            call = node_of(context.root, use)
            function = call.child_by_field_name("function") if call is not None and call.type == "call" else None
            if function is None or function.type != "attribute" or not _moves_to_device(call, devices):
                continue
            statement = statement_of(call)
            if statement is not None:
                if not own_line(statement, context.source):
                    continue
                edit = removed(statement, context.source)
            else:
                receiver = function.child_by_field_name("object")
                edit = TextEdit(call.start_byte, call.end_byte, receiver.text.decode("utf-8", "surrogateescape"))
            yield Finding((use.start, use.end), [edit], call_span=(call.start_byte, call.end_byte),
                          replaces=use.torch_name, record=use.record)


def _moves_to_device(call: Any, devices: set[tuple[int, int]]) -> bool:
    """Whether ``call`` (``m.to(...)``) names a device and nothing else (``non_blocking`` aside)."""
    arguments = call.child_by_field_name("arguments")
    positional = [a for a in arguments.named_children if a.type not in ("keyword_argument", "comment")]
    keywords = {}
    for argument in arguments.named_children:
        if argument.type == "keyword_argument":
            keywords[argument.child_by_field_name("name").text.decode()] = argument.child_by_field_name("value")
    if set(keywords) - {"device", "non_blocking"} or len(positional) + ("device" in keywords) != 1:
        return False
    return "device" in keywords or _is_device(positional[0], devices)


def _is_device(node: Any, devices: set[tuple[int, int]]) -> bool:
    """A string (``"cuda:0"``, an f-string), an int (a GPU index), ``torch.device(...)``, a conditional between
    devices, or a name that says it holds one (``device``, ``self.device``, ``local_rank``)."""
    if node.type in ("string", "concatenated_string", "integer"):
        return True
    if node.type == "call":
        function = node.child_by_field_name("function")
        return function is not None and (function.start_byte, function.end_byte) in devices
    if node.type == "conditional_expression":
        branches = [c for c in node.named_children]
        return len(branches) == 3 and _is_device(branches[0], devices) and _is_device(branches[2], devices)
    if node.type == "parenthesized_expression" and len(node.named_children) == 1:
        return _is_device(node.named_children[0], devices)
    if node.type == "attribute":
        node = node.child_by_field_name("attribute")
    if node.type == "identifier":
        name = node.text.decode("utf-8", "replace")
        return "dtype" not in name.lower() and DEVICE_NAME.search(name) is not None
    return False
