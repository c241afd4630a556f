"""Map a call's arguments from the torch signature to the MindSpore one.

Driven only by the target's ``params`` (``ParamMap`` rows) and the two
signatures: keywords are renamed, values transformed, dropped arguments
removed, a positional argument whose position differs becomes a keyword,
``added`` parameters with a ``transform`` are appended (their ``torch`` field,
when set, names the torch parameter the value derives from), and a torch default
that MindSpore does not share is written out so behaviour is kept.  Anything
that cannot be mapped raises ``Blocked`` with a reason a human can act on.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from kb.analysis.text import TextEdit
from kb.analysis.transforms import (
    MISSING,
    NotComputable,
    Refused,
    apply_transform,
    literal,
    parse_signature,
    same_value,
)


class Blocked(Exception):
    """No automatic rewrite; ``str(exc)`` says why."""


class Unpacked(Blocked):
    """The call unpacks ``*args`` or ``**kwargs`` (not a factory dict) into parameters the map renames,
    transforms or drops: which values they carry is known only when the code runs, so a torch-signature
    adapter takes them then (rewrite.py, adapters.py)."""


class UnsupportedValue(Blocked):
    """A torch-only switch (a parameter whose torch default is True or False) passed as an expression
    (``antialias=antialias``): its value is known only when the code runs, and is often torch's
    default, so a torch-signature adapter can check it then (rewrite.py). A value of another kind
    (``dtype=half``, ``generator=g``) is seldom the default: it stays ``Blocked``."""


@dataclass(slots=True)
class Arg:
    start: int
    end: int
    value_start: int
    value_end: int
    value: str
    keyword: str | None = None
    name_start: int = -1
    name_end: int = -1
    star: str = ""


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "surrogateescape")


def read_arguments(call: Any) -> tuple[list[Arg], Any]:
    node = call.child_by_field_name("arguments")
    if node is None or node.type != "argument_list":
        raise Blocked("the call's arguments cannot be read")
    if node.has_error or node.is_missing or any(c.is_missing for c in node.children):
        raise Blocked("the call is incomplete or has a syntax error")
    args = []
    for child in node.named_children:
        if child.type == "comment":
            continue
        if child.type == "keyword_argument":
            name, value = child.child_by_field_name("name"), child.child_by_field_name("value")
            if name is None or value is None:
                raise Blocked("the call is incomplete")
            args.append(Arg(child.start_byte, child.end_byte, value.start_byte, value.end_byte, _text(value),
                            _text(name), name.start_byte, name.end_byte))
        elif child.type in ("list_splat", "dictionary_splat"):
            star = "*" if child.type == "list_splat" else "**"
            args.append(Arg(child.start_byte, child.end_byte, child.start_byte, child.end_byte, _text(child),
                            star=star))
        else:
            args.append(Arg(child.start_byte, child.end_byte, child.start_byte, child.end_byte, _text(child)))
    return args, node


# the NumPy-style keywords torch's argument parser takes for its own names (torch.cat(ts, axis=-1),
# torch.sum(x, axis=0, keepdims=True)); MindSpore's mint functions take only torch's names
KEYWORD_ALIASES = {"axis": "dim", "keepdims": "keepdim"}


def _canonical_keywords(args: list[Arg], torch_sig: Any) -> tuple[list[Arg], dict[int, str]]:
    """``args`` with each alias keyword under torch's own name, where the signature has that name and not the
    alias; and ``id`` of each renamed argument -> the keyword as written."""
    if torch_sig is None or not any(a.keyword in KEYWORD_ALIASES for a in args):
        return args, {}
    names = torch_sig.names
    out, written = [], {}
    for arg in args:
        own = KEYWORD_ALIASES.get(arg.keyword or "")
        if own is not None and own in names and arg.keyword not in names:
            renamed = replace(arg, keyword=own)
            written[id(renamed)] = arg.keyword or ""
            arg = renamed
        out.append(arg)
    return out, written


def _maps(target: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in target.get("params") or [] if isinstance(m, dict)]


def _separator(source: bytes, start: int, end: int) -> int:
    """Offset of the comma between two arguments (comments skipped), or -1."""
    index = start
    while index < end:
        char = source[index : index + 1]
        if char == b"#":
            newline = source.find(b"\n", index, end)
            index = end if newline < 0 else newline
        elif char == b",":
            return index
        index += 1
    return -1


def _whole_lines(source: bytes, start: int, end: int) -> tuple[int, int]:
    """Widen ``[start, end)`` to whole lines when nothing else shares them."""
    line_start = source.rfind(b"\n", 0, start) + 1
    line_end = source.find(b"\n", end)
    line_end = len(source) if line_end < 0 else line_end
    if source[line_start:start].strip() == b"" and source[end:line_end].strip() == b"":
        return line_start, min(line_end + 1, len(source))
    return start, end


def _removal_edits(args: list[Arg], removed: set[int], arglist: Any, source: bytes,
                   after: int | None = None) -> list[TextEdit]:
    """Delete the removed arguments with their separators; comments of kept ones stay.

    ``after``: the end of arguments before ``args`` that stay (see ``plan_arguments``' ``skip``)."""
    if not removed:
        return []
    close = arglist.end_byte - 1
    if after is not None and 0 in removed:  # "partial(X, eps=1)" -> "partial(X)" when eps goes
        if len(removed) == len(args):
            return [TextEdit(after, args[-1].end, "")]
        rest = _removal_edits(args[1:], {i - 1 for i in removed if i}, arglist, source, args[0].end)
        return [TextEdit(after, args[0].end, "")] + rest
    if len(removed) == len(args):
        end = args[-1].end
        comma = _separator(source, end, close)
        return [TextEdit(args[0].start, comma + 1 if comma >= 0 else end, "")]
    edits, index = [], 0
    while index < len(args):
        if index not in removed:
            index += 1
            continue
        first = index
        while index + 1 < len(args) and index + 1 in removed:
            index += 1
        last = args[index]
        if index + 1 < len(args):  # a kept argument follows: delete up to it
            edits.append(TextEdit(args[first].start, args[index + 1].start, ""))
        elif b"\n" not in source[args[first - 1].end : args[first].start]:  # one line: "a, b" -> "a"
            edits.append(TextEdit(args[first - 1].end, last.end, ""))
        else:  # own lines: delete them; the comma before goes unless a trailing comma follows
            trailing = _separator(source, last.end, close)
            end = trailing + 1 if trailing >= 0 else last.end
            if trailing < 0:
                comma = _separator(source, args[first - 1].end, args[first].start)
                if comma >= 0:
                    edits.append(TextEdit(comma, comma + 1, ""))
            start, end = _whole_lines(source, args[first].start, end)
            edits.append(TextEdit(start, end, ""))
        index += 1
    return edits


def _value(text: str | None, transform: str | None, symbolic: str | None = None) -> str:
    """The MindSpore value text: ``transform`` folded over a literal; over any other expression,
    ``symbolic`` (when the rule has one) or ``transform`` with the expression put in for ``v``."""
    if not transform:
        return text or ""
    if symbolic and text is not None and literal(text) is MISSING:
        transform = symbolic
    try:
        return apply_transform(transform, text)
    except Refused as exc:
        raise Blocked(str(exc)) from None
    except NotComputable as exc:
        raise Blocked(f"cannot apply the transform {transform!r}: {exc}") from None


def _rule_value(text: str | None, rule: dict[str, Any]) -> str:
    return _value(text, rule.get("transform"), rule.get("symbolic"))


def plan_arguments(call: Any, record: dict[str, Any], target: dict[str, Any], source: bytes,
                   skip: int = 0, exact: bool = False) -> list[TextEdit]:
    """Edits that turn the torch call's arguments into the MindSpore target's.

    ``skip``: leading arguments that are not the callee's (``partial(nn.BatchNorm2d, eps=1e-3)``
    passes the class first); the callee's arguments are the rest. ``exact``: values that are not
    literals get the full transform, not the rule's ``symbolic`` shortcut (adapters.py).
    """
    value = (lambda text, rule: _value(text, rule.get("transform"))) if exact else _rule_value
    maps = _maps(target)
    node = call.child_by_field_name("arguments")
    if not maps and node is not None and node.type == "generator_expression" and not node.has_error:
        return []
    args, arglist = read_arguments(call)
    after = args[skip - 1].end if skip else None  # where added arguments go when no argument is kept
    args = args[skip:]
    torch_sig = parse_signature(record.get("torch_signature"))
    # torch functions only: a method's receiver may be MindSpore's own already, whose axis= is native there
    written: dict[int, str] = {}
    if not str(record.get("torch", "")).startswith("torch.Tensor."):
        args, written = _canonical_keywords(args, torch_sig)
    if not maps:  # same parameters: the arguments carry over unchanged, an alias under torch's own name
        return [TextEdit(a.name_start, a.name_end, a.keyword or "") for a in args if id(a) in written]
    by_torch = {m["torch"]: m for m in maps if m.get("torch") and m.get("kind") != "added"}
    added = [m for m in maps if m.get("kind") == "added" and m.get("ms")]
    ms_sig = parse_signature(target.get("ms_signature"))
    if any(a.star == "*" for a in args):
        relevant = _placeable_maps(args, by_torch, torch_sig)
        trivial = all(m.get("kind", "same") == "same" and m.get("ms") in (None, m.get("torch"))
                      for m in relevant) and not any(m.get("transform") for m in added)
        if not trivial:
            raise Unpacked("the call unpacks *args, so its parameters cannot be placed")
        return []
    if _unpacks_keywords(call, args) and not _keeps_keywords(by_torch, added):
        raise Unpacked("the call unpacks **kwargs, whose torch keywords the MindSpore target names otherwise")
    torch_order = torch_sig.positional if torch_sig else [m["torch"] for m in maps
                                                           if m.get("torch") and m.get("kind") != "added"]
    ms_order = ms_sig.positional if ms_sig else None
    # a layer whose MindSpore order is not recorded (``nn.RNN(*args, **kwargs)`` reads its arguments in
    # another order: nonlinearity is keyword-only there) keeps by position only torch's required arguments
    loose = {p.name for p in torch_sig.parameters if p.default is not None} \
        if ms_sig is None and torch_sig is not None and record.get("kind") == "class" else set()

    edits: list[TextEdit] = []
    removed: set[int] = set()
    passed: dict[str, Arg] = {}
    final: list[str] = []
    in_place = True  # positional arguments keep their position until one cannot
    # a ``**kwargs`` splat stays as written: its keys reach MindSpore unchanged (a torch-only name
    # among them fails loudly there); the arguments written out are mapped as usual
    positional = [i for i, a in enumerate(args) if a.keyword is None and not a.star]
    for number, index in enumerate(positional):
        arg = args[index]
        if number >= len(torch_order):
            if torch_sig is not None and torch_sig.has("var_positional") and in_place and \
                    (ms_sig is None or ms_sig.has("var_positional")):
                continue
            raise Blocked(f"more positional arguments than {record.get('torch')} takes")
        name = torch_order[number]
        rule = by_torch.get(name, {"kind": "same"})
        kind = rule.get("kind", "same")
        if _none_as_omitted(rule, arg):
            removed.add(index)
            in_place = False
            continue
        passed[name] = arg
        if kind in ("dropped", "unsupported"):
            if name != SWITCH:
                _drop(rule, arg, kind)
            removed.add(index)
            in_place = False
            continue
        ms_name = rule.get("ms") or name
        final.append(ms_name)
        new_value = value(arg.value, rule) if kind == "transformed" else None
        keeps = in_place and (
            ms_order[number] == ms_name if ms_order is not None and number < len(ms_order)
            else ms_order is None and kind == "same" and ms_name == name and name not in loose
        )
        if keeps:
            if new_value is not None and new_value != arg.value:
                edits.append(TextEdit(arg.start, arg.end, new_value))
            continue
        in_place = False
        if new_value is not None and new_value != arg.value:
            edits.append(TextEdit(arg.start, arg.end, f"{ms_name}={new_value}"))
        else:
            edits.append(TextEdit(arg.start, arg.start, f"{ms_name}="))
    for index, arg in enumerate(args):
        if arg.keyword is None:
            continue
        keyword_rule = by_torch.get(arg.keyword)
        if keyword_rule is not None and _none_as_omitted(keyword_rule, arg):
            removed.add(index)
            continue
        passed[arg.keyword] = arg
        if keyword_rule is None:
            final.append(arg.keyword)
            if id(arg) in written:  # (an alias of a parameter the map keeps: torch's own name)
                edits.append(TextEdit(arg.name_start, arg.name_end, arg.keyword))
            continue
        rule = keyword_rule
        kind = rule.get("kind", "same")
        if kind in ("dropped", "unsupported"):
            if arg.keyword != SWITCH:
                _drop(rule, arg, kind)
            removed.add(index)
            continue
        ms_name = rule.get("ms") or arg.keyword
        final.append(ms_name)
        if ms_name != written.get(id(arg), arg.keyword):
            edits.append(TextEdit(arg.name_start, arg.name_end, ms_name))
        if kind == "transformed":
            new_value = value(arg.value, rule)
            if new_value != arg.value:
                edits.append(TextEdit(arg.value_start, arg.value_end, new_value))
    extra = _defaults(by_torch, passed, final) + _added(added, by_torch, passed, final, value)
    duplicates = {n for n in final if final.count(n) > 1}
    if duplicates:
        raise Blocked(f"two arguments would both become {sorted(duplicates)[0]!r}")
    edits += _removal_edits(args, removed, arglist, source, after)
    if extra:
        kept = [a for i, a in enumerate(args) if i not in removed]
        text = ", ".join(extra)
        if kept:
            edits.append(TextEdit(kept[-1].end, kept[-1].end, ", " + text))
        elif after is not None:
            edits.append(TextEdit(after, after, ", " + text))
        else:
            edits.append(TextEdit(arglist.start_byte + 1, arglist.start_byte + 1, text))
    return edits


# torch's in-place switch of activations and dropout (``nn.ReLU(inplace=True)``, ``F.elu(x, inplace=True)``): the
# values are the same without it, so it goes; where torch's overwritten input could still be read, the call is
# marked (rules/inplace_activations.py)
SWITCH = "inplace"


def _none_as_omitted(rule: dict[str, Any], arg: Arg) -> bool:
    """An explicit ``None`` where torch's default is ``None`` (torch then computes the value:
    ``MaxPool2d(2, stride=None)`` strides by kernel_size) is the call that omits the argument, so it
    is removed and the omitted-argument rules apply (``stride=kernel_size``), unless MindSpore's
    default is ``None`` too (then ``None`` means the same there) or is not recorded."""
    if rule.get("kind", "same") not in ("same", "renamed", "transformed") or arg.value.strip() != "None":
        return False
    ms_default = rule.get("ms_default")
    return literal(rule.get("torch_default")) is None and ms_default is not None \
        and literal(ms_default) not in (None, MISSING)


def _drop(rule: dict[str, Any], arg: Arg, kind: str) -> None:
    if kind == "unsupported" and not same_value(literal(arg.value), literal(rule.get("torch_default"))):
        note = f": {rule['note']}" if rule.get("note") else ""
        switch = isinstance(literal(rule.get("torch_default")), bool) and literal(arg.value) is MISSING
        error = UnsupportedValue if switch else Blocked
        raise error(f"torch parameter {rule.get('torch')!r} has no MindSpore equivalent{note}")


def _defaults(by_torch: dict[str, dict], passed: dict[str, Arg], final: list[str]) -> list[str]:
    """Torch defaults MindSpore does not share, written out to keep behaviour."""
    extra = []
    for name, rule in by_torch.items():
        kind = rule.get("kind", "same")
        if name in passed or kind not in ("same", "renamed", "transformed"):
            continue
        torch_default, ms_default = rule.get("torch_default"), rule.get("ms_default")
        # A torch default of None usually means "computed" (MaxPool2d stride=None means
        # kernel_size): it is not a value to write out.
        if torch_default is None or ms_default is None or literal(torch_default) in (MISSING, None):
            continue
        value = _rule_value(torch_default, rule) if kind == "transformed" else torch_default
        ms_name = rule.get("ms") or name
        if literal(value) is not MISSING and not same_value(literal(value), literal(ms_default)) \
                and ms_name not in final:
            extra.append(f"{ms_name}={value}")
            final.append(ms_name)
    return extra


def _added(added: list[dict], by_torch: dict[str, dict], passed: dict[str, Arg], final: list[str],
           value: Any = None) -> list[str]:
    """MindSpore-only parameters whose value the data derives (e.g. ``pad_mode='pad'``)."""
    extra = []
    for rule in added:
        ms_name = rule["ms"]
        if not rule.get("transform") or ms_name in final:
            continue
        source_name = rule.get("torch")
        value_text: str | None = None
        if source_name:
            if source_name in passed:
                value_text = passed[source_name].value
            else:
                value_text = rule.get("torch_default") or by_torch.get(source_name, {}).get("torch_default")
        text = (value or _rule_value)(value_text, rule)
        if same_value(literal(text), literal(rule.get("ms_default"))):
            continue
        extra.append(f"{ms_name}={text}")
        final.append(ms_name)
    return extra


def reference_blocker(record: dict[str, Any], target: dict[str, Any], defaults_written: bool = False) -> str | None:
    """Why a class or function referenced without a call (``norm_layer = nn.BatchNorm2d``) cannot
    simply be renamed; None when a later call behaves the same under the new name.

    That holds when a call with no arguments gets nothing written out (every torch default
    is MindSpore's default, after transforms) and the positional parameters line up. A later
    call that passes a transformed parameter (BatchNorm's ``momentum``) is not seen: the
    rename's behaviour note names those parameters (``transformed_params``).
    """
    maps = _maps(target)
    by_torch = {m["torch"]: m for m in maps if m.get("torch") and m.get("kind") != "added"}
    added = [m for m in maps if m.get("kind") == "added" and m.get("ms")]
    gone = [name for name, m in by_torch.items() if m.get("kind") in ("dropped", "unsupported")]
    if gone:  # activation_layer(inplace=True) would reach MindSpore's ReLU
        return f"a later call may pass {gone[0]!r}, which MindSpore's {target.get('api')} does not take"
    try:
        extra = [] if defaults_written else _defaults(by_torch, {}, []) + _added(added, by_torch, {}, [])
    except Blocked as blocked:
        return str(blocked)
    if extra:
        return f"a later call would need {extra[0]} to keep torch's default"
    torch_sig = parse_signature(record.get("torch_signature"))
    ms_sig = parse_signature(target.get("ms_signature"))
    if torch_sig is None or ms_sig is None:
        return "its signatures are unknown, so later calls cannot be checked"
    ms_positional = ms_sig.positional
    for index, name in enumerate(torch_sig.positional):
        rule = by_torch.get(name, {"kind": "same"})
        if rule.get("kind") in ("dropped", "unsupported") or (name not in by_torch and name not in ms_sig.names):
            break  # from here on torch's parameters have no MindSpore place: nobody passes them by position
        ms_name = rule.get("ms") or name
        if index >= len(ms_positional) or ms_positional[index] != ms_name:
            return f"positional parameter {index + 1} ({name!r}) is {ms_name!r} at another place in MindSpore"
    return None


def transformed_params(target: dict[str, Any]) -> list[str]:
    """Torch parameters whose values a call must transform (``momentum`` -> ``1 - momentum``)."""
    return [m["torch"] for m in _maps(target) if m.get("kind") == "transformed" and m.get("torch")]


def _unpacks_keywords(call: Any, args: list[Arg]) -> bool:
    """Whether the call unpacks a ``**dict`` other than a factory dict (factorykwargs.py rewrites those)."""
    from kb.analysis.factorykwargs import splat_factory

    if not any(a.star == "**" for a in args):
        return False
    node = call.child_by_field_name("arguments")
    root = node
    while root.parent is not None:
        root = root.parent
    return any(c.type == "dictionary_splat" and splat_factory(c, root.text) is None for c in node.named_children)


def _keeps_keywords(by_torch: dict[str, dict], added: list[dict]) -> bool:
    """Whether any torch keyword a ``**dict`` may carry reaches MindSpore unchanged: every parameter keeps
    its name and value, no MindSpore-only parameter derives from one, and no torch default is written out
    (the dict may carry that keyword too)."""
    same = all(m.get("kind", "same") == "same" and m.get("ms") in (None, m.get("torch")) for m in by_torch.values())
    return same and not any(m.get("transform") for m in added) and not _defaults(by_torch, {}, [])


def _placeable_maps(args: list, by_torch: dict[str, dict], torch_sig: Any) -> list[dict]:
    """The parameter rules a call that unpacks ``*args`` may touch. Where torch's signature has
    its own ``*args`` (``checkpoint(function, *args, use_reentrant=None)``), the positional
    arguments before the first star fill the leading parameters, whose names then do not matter
    (a rename of ``function`` changes nothing), and keyword-only parameters the call does not
    pass cannot be reached; a torch-only parameter the call does not name blocks nothing. Without
    a recorded signature the rules' order stands for it."""
    if torch_sig is not None and not torch_sig.has("var_positional"):
        return list(by_torch.values())
    leading = []
    for arg in args:
        if arg.star or arg.keyword is not None:
            break
        leading.append(arg)
    order = torch_sig.positional if torch_sig is not None else list(by_torch)  # no signature: the map's order
    fixed = set(order[:len(leading)])
    keyword_only = {p.name for p in torch_sig.parameters if p.kind == "keyword_only"} if torch_sig else set()
    passed = {a.keyword for a in args if a.keyword is not None}
    return [m for name, m in by_torch.items()
            if name in passed or (name not in keyword_only and m.get("kind") not in ("unsupported", "dropped")
                                  and not (name in fixed and m.get("kind") == "renamed"))]
