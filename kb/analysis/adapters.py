"""Torch-signature adapters: a MindSpore layer class passed around as a value.

Model code often hands a layer class to other code that calls it later with torch's
arguments: ``norm_layer = nn.BatchNorm2d``, ``conv_layer=nn.Conv2d``,
``partial(nn.LayerNorm, eps=1e-6)``. Where a plain rename would change what those later
calls mean (torch's defaults differ, parameters are renamed or sit at other positions),
the reference becomes an adapter function written once into the converted file::

    def ms_Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                  bias=True, padding_mode='zeros', device=None, dtype=None):
        \"\"\"torch.nn.Conv2d's parameters, building mindspore.nn.Conv2d (written by msmap convert).\"\"\"
        if padding_mode != 'zeros':
            raise NotImplementedError(...)
        return ms.nn.Conv2d(in_channels=in_channels, ..., group=groups, has_bias=bias, pad_mode=...)

It takes torch's parameters with torch's defaults and builds the MindSpore layer through
the same parameter map as a call would (``plan_arguments``, with the exact transforms,
since every value is a variable). A parameter MindSpore cannot honour raises
``NotImplementedError`` when a caller gives it a value other than torch's default; so does
one whose torch default is ``None`` where MindSpore's default is a value (``dtype``), and a
value of a class the target's rewrite probe did not prove where it found others differ
(valueguards.py: ``mode='bicubic'`` for ``F.interpolate``).
"""
from __future__ import annotations

import re
from typing import Any

from kb.analysis.arguments import Blocked, plan_arguments
from kb.analysis.text import TextEdit, apply_edits
from kb.analysis.transforms import MISSING, NotComputable, Refused, apply_transform, literal, parse_signature
from kb.analysis.tupleparams import widened
from kb.analysis.valueguards import guards as value_guards

PREFIX = "ms_"
DROPPING = ("dropped", "unsupported")


def adapter_name(api: str) -> str:
    """``mindspore.nn.Conv2d`` -> ``ms_Conv2d``; ``mindspore.mint.nn.Linear`` -> ``mint_Linear``."""
    return ("mint_" if ".mint." in f".{api}." else PREFIX) + api.rsplit(".", 1)[-1]


def adapter(record: dict[str, Any], target: dict[str, Any], alias: str, spelled_api: str) -> str:
    """The adapter's definition (Python source, ending with a newline); ``Blocked`` when the torch
    signature cannot be written in MindSpore code (``*args``, a default that is not a literal)."""
    from kb.analysis.document import Document

    signature = parse_signature(record.get("torch_signature"))
    if signature is None:
        raise Blocked("torch's signature is unknown, so no adapter can take its parameters")
    helper = forwarding_helper(target)
    if target.get("template") and helper is None:  # (F.normalize: ops.norm and ops.clamp written around the arguments)
        raise Blocked("its rewrite is a call template, which an adapter of the target's parameters cannot follow")
    target = widened(record, target)  # a list where MindSpore takes a tuple only (tupleparams.py)
    rules = {m["torch"]: m for m in target.get("params") or [] if isinstance(m, dict) and m.get("torch")
             and m.get("kind") != "added"}
    derived = {m["ms"]: m for m in target.get("params") or [] if isinstance(m, dict) and m.get("kind") == "added"
               and m.get("ms") and m.get("torch") and m.get("transform")}
    ms_signature = parse_signature(target.get("ms_signature"))
    ms_names = ms_signature.names if ms_signature is not None else None
    header: list[str] = []
    guards: list[str] = []
    passed: list[str] = []
    for param in signature.parameters:
        if param.kind not in ("positional", "keyword_only"):
            raise Blocked(f"torch's signature has *{param.name}, which an adapter cannot pass on")
        default = param.default
        if default is not None and literal(default) is MISSING:
            raise Blocked(f"torch's default {param.name}={default} is not a plain value")
        if param.kind == "keyword_only" and not any(h == "*" for h in header):
            header.append("*")
        header.append(param.name if default is None else f"{param.name}={default}")
        rule = rules.get(param.name, {})
        kind = rule.get("kind", "same")
        if not rule and ms_names is not None and param.name not in ms_names:
            kind = "unsupported"  # no rule and no MindSpore parameter of that name
        differs = f"{param.name} is not None" if default == "None" else f"{param.name} != {default}"
        if kind in DROPPING:
            if kind == "unsupported" and default is not None:
                guards.append(_guard(differs, param.name, spelled_api))
            continue
        if default == "None" and param.name in derived:  # what a call leaving it out gets (recompute_scale_factor,
            guards.append(_derived(param.name, derived[param.name]))  # a pool's stride=kernel_size)
        elif default == "None" and rule.get("ms_default") not in (None, "None"):
            # None means "torch decides"; MindSpore's own default is a value: a call leaving it out gets that
            # value (softmax's axis=-1), a value passed is mapped like any other; one to transform is refused
            fallback = rule.get("ms_default")
            if kind not in ("same", "renamed") or literal(fallback) is MISSING:
                guards.append(_guard(differs, param.name, spelled_api))
                continue
            guards.append(f"if {param.name} is None:\n        {param.name} = {fallback}")
        passed.append(param.name)
    guards += value_guards(record, target, [(p.name, p.default) for p in signature.parameters])
    call = f"{helper[0] if helper else spelled_api}({', '.join(f'{n}={n}' for n in passed)})"
    document = Document(call)
    node = document.tree.root_node.named_children[0].named_children[0]
    edits = plan_arguments(node, record, target, document.source, exact=True)
    built = apply_edits(document.source, edits).decode("utf-8")
    name = adapter_name(str(target.get("api")))
    doc = f'"""{record.get("torch")}\'s parameters, building {target.get("api")} (written by msmap convert)."""'
    # a transform that refuses some values (``refuse('why')``: normalized_shape with several axes) refuses
    # them at run time in the adapter, with its reason
    refuse = ["def refuse(why):\n        raise NotImplementedError(why)"] if "refuse(" in built else []
    body = [doc] + guards + refuse + [f"return {built}"]
    written = f"def {name}({', '.join(header)}):\n" + "".join(f"    {line}\n" for line in body)
    return helper[1].replace("{ms}", alias).rstrip("\n") + "\n\n\n" + written if helper else written


def forwarding_helper(target: dict[str, Any]) -> tuple[str, str] | None:
    """(name, source) of the target's helper class when its one template only calls it with the call's arguments
    under their own names (``MsAdam({params}{?lr}{?betas})``): a class built like the target's API, so an adapter
    may build it instead; None otherwise."""
    from kb.analysis.templates import FIELD_RE

    helper, templates = target.get("helper"), target.get("template") or []
    if not helper or not helper.startswith("class ") or len(templates) != 1:
        return None
    name = helper.split(None, 1)[1].split("(", 1)[0]
    template = templates[0]
    fields = list(FIELD_RE.finditer(template))
    if not template.startswith(f"{name}(") or not template.endswith(")") or any(f[3] or f[4] for f in fields) \
            or FIELD_RE.sub("", template) != f"{name}()" or not fields or fields[0][1]:
        return None  # (a renamed keyword, a condition, other code around the arguments, no first argument)
    return name, helper


def _derived(name: str, rule: dict[str, Any]) -> str:
    """``name = <value derived from another parameter>`` when the caller leaves ``name`` as None, as
    the rewrite of a call that omits it adds (``recompute_scale_factor=True`` with a scale_factor)."""
    try:
        value = apply_transform(str(rule["transform"]), str(rule["torch"]))
    except (NotComputable, Refused) as exc:
        raise Blocked(f"{name} derives from {rule['torch']}, and the adapter cannot compute it: {exc}") from None
    return f"if {name} is None:\n        {name} = {value}"


def _guard(condition: str, name: str, api: str) -> str:
    message = f"{name} is not supported by {api} in this conversion"
    return f"if {condition}:\n        raise NotImplementedError({message!r})"


_DEFINITION = re.compile(rb"(?:def|class) (\w+)\(")
_defined: tuple[bytes, dict[str, int]] = (b"", {})


def _definitions(source: bytes) -> dict[str, int]:
    """Where each ``def NAME(`` or ``class NAME(`` written in ``source`` first ends, found once per text: a
    file with thousands of calls needing one helper asked for it once per call, each a search of the text."""
    global _defined
    known = _defined
    if known[0] is not source:
        found: dict[str, int] = {}
        for match in _DEFINITION.finditer(source):
            found.setdefault(match[1].decode(), match.end())
        known = _defined = (source, found)
    return known[1]


def insertion(node: Any, source: bytes, name: str, definition: str) -> TextEdit | None:
    """The edit adding ``definition`` just before the module-level statement that holds ``node``
    (so a class using it as a default argument finds it defined); None when the file defines
    ``name`` above that statement already. Definitions for different statements go to different
    places, so one pass of fix-all can write many; two statements that need the same definition
    in one pass each get it (Python keeps the later one, which is the same)."""
    statement = node
    while statement.parent is not None and statement.parent.parent is not None:
        statement = statement.parent
    offset = source.rfind(b"\n", 0, statement.start_byte) + 1
    end = _definitions(source).get(name)  # (``name``: a helper's, an ASCII identifier)
    if end is not None and end <= offset:
        return None  # defined above already (a definition further down would come too late)
    newlines = 0
    while newlines < offset and source[offset - 1 - newlines] == 10:  # the blank lines just above
        newlines += 1
    before = "" if offset == 0 else "\n" * max(0, 3 - newlines)  # two blank lines before a def
    return TextEdit(offset, offset, before + definition + "\n\n")
