"""Call templates: rewrites that are not "new callee + mapped arguments".

Some torch calls become another shape of code: ``x.size(d)`` -> ``x.shape[d]``,
``nn.init.constant_(w, 0)`` -> ``w.set_data(initializer(Constant(0), w.shape, w.dtype))``.
A target lists such templates (data, in ``data/curated``); the first one whose required
placeholders the call passes is used. Placeholders:

- ``{ms}``: the file's MindSpore alias; ``{self}``: the receiver of a method call;
- ``{name}``: the text of torch argument ``name`` (required);
- ``{?name}`` / ``{?name:ms_name}``: ``, ms_name=<text>`` when the call passes ``name``, else nothing;
- ``{name=LITERAL}``: a condition that writes nothing: the template fits only a call passing ``name``
  with that literal value (``{enabled=False}``: ``torch.autocast(..., enabled=False)`` is a no-op);
- ``{name=int}``: a condition that writes nothing: the template fits only a call passing ``name`` as an
  integer literal, or a tuple or list of them (``torch.max(x, 1)`` picks the dim overload; ``torch.max(x, y)``
  another template);
- ``{*name}``: the arguments torch's ``*name`` collects, written out as they were passed
  (``torch.einsum('ij,jk', a, b)``: ``'ij,jk', a, b``);
- ``{**name}``: ``, key=<text>`` for each keyword the call passes that torch's signature collects in
  ``**name`` (``einops.rearrange(x, 'b (h d) -> b h d', h=8)``: ``h=8``), in the call's order.

A passed argument the chosen template has no place for blocks the rewrite (nothing is
dropped silently), unless its parameter map says the torch argument is dropped or it
repeats the torch default.

A template that is a statement (``assert {condition}, {message}``) replaces only a call that
is a whole statement.

A template that is empty, or only conditions, removes the call's construct (``removal``) with
all its arguments: ``@torch.no_grad()`` goes, and ``with torch.no_grad():`` gives way to its body.
"""
from __future__ import annotations

import re
from typing import Any

from kb.analysis.arguments import Blocked, read_arguments
from kb.analysis.transforms import MISSING, literal, parse_signature, same_value

SPREAD_RE = re.compile(r"(?<!\{)\{\*([A-Za-z_][A-Za-z0-9_]*)\}")
KEYWORDS_RE = re.compile(r"\{\*\*([A-Za-z_][A-Za-z0-9_]*)\}")
FIELD_RE = re.compile(r"\{(\?)?([A-Za-z_][A-Za-z0-9_]*)(?::([A-Za-z_][A-Za-z0-9_]*))?(?:=([^{}]+))?\}")
CONTEXT = ("ms", "self")
PRIMARY = ("identifier", "attribute", "call", "subscript", "parenthesized_expression", "string", "integer",
           "float", "list", "tuple", "dictionary")


def fields(template: str) -> tuple[set[str], set[str]]:
    """(required, optional) torch parameter names a template refers to (a condition's is required)."""
    required: set[str] = set()
    optional: set[str] = set()
    for match in FIELD_RE.finditer(template):
        if match[2] in CONTEXT:
            continue
        (optional if match[1] else required).add(match[2])
    required.update(match[1] for match in SPREAD_RE.finditer(template))
    return required, optional


def conditions(template: str) -> dict[str, str]:
    """torch parameter name -> the literal a ``{name=LITERAL}`` condition asks the call to pass."""
    return {m[2]: m[4].strip() for m in FIELD_RE.finditer(template) if m[4] is not None}


def removes(template: str) -> bool:
    """An empty template, or one of conditions only: the call's construct goes (``removal``)."""
    return FIELD_RE.sub(lambda m: "" if m[4] is not None else m[0], template).strip() == ""


INT_CLASS = "int"  # ``{name=int}``: an integer literal (or a tuple or list of them), whatever its value


def _meets(template: str, bound: dict[str, str]) -> bool:
    return all(name in bound and not isinstance(bound[name], Splat)
               and (_integers(literal(bound[name])) if value == INT_CLASS
                    else same_value(literal(bound[name]), literal(value)))
               for name, value in conditions(template).items())


def _integers(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return bool(value) and all(_integers(v) for v in value)
    return isinstance(value, int) and not isinstance(value, bool)


def bind(call: Any, record: dict[str, Any], target: dict[str, Any] | None = None,
         keyword_splats: bool = False) -> dict[str, str]:
    """torch parameter name -> argument text, positional arguments placed by torch's signature
    (without a recorded signature, a private API such as ``torch._assert``: by the order of the
    target's parameter map)."""
    args, _ = read_arguments(call)
    signature = parse_signature(record.get("torch_signature"))
    order = signature.positional if signature is not None else \
        [r["torch"] for r in (target or {}).get("params") or [] if isinstance(r, dict) and r.get("torch")]
    bound: dict[str, str] = {}
    collects = signature is not None and signature.has("var_positional") and not order
    if any(a.star for a in args):
        args = _factory_splats(call, args, bound, keyword_splats, list_splats=collects)
    positional = [a for a in args if a.keyword is None]
    if collects and positional:
        # ``*size``: several arguments become one tuple; one stays as it is (an int or a sequence); an unpacked
        # one (``torch.randn(*shape)``) makes a tuple display, ``(*shape,)``
        assert signature is not None
        name = next(p.name for p in signature.parameters if p.kind == "var_positional")
        values = [a.value for a in positional]
        single = len(values) == 1 and not positional[0].star
        bound[name] = Spread(values[0] if single else f"({', '.join(values)}{',' if len(values) == 1 else ''})",
                             values)
        positional = []
    for index, arg in enumerate(positional):
        if index >= len(order) and signature is not None and signature.has("var_positional"):
            # ``tree_map(func, tree, *rests)``: the arguments after the named ones are what ``*rests`` collects
            name = next(p.name for p in signature.parameters if p.kind == "var_positional")
            values = [a.value for a in positional[index:]]
            bound[name] = Spread(f"({', '.join(values)},)", values)
            break
        if index >= len(order):
            raise Blocked(f"more positional arguments than {record.get('torch')} takes")
        bound[order[index]] = arg.value
    for arg in args:
        if arg.keyword is not None:
            bound[arg.keyword] = arg.value
    return bound


class Spread(str):
    """The arguments a ``*name`` parameter collects: one tuple's text (``{name}``), or written out (``{*name}``)."""

    items: tuple[str, ...]

    def __new__(cls, text: str, items: list[str]) -> Spread:
        made = super().__new__(cls, text)
        made.items = tuple(items)
        return made


class Splat(str):
    """A ``**name`` argument standing for an optional keyword: a factory dict that may hold a
    ``dtype`` (factorykwargs.py). A template's ``{?dtype}`` writes it as it is."""


def _factory_splats(call: Any, args: list, bound: dict[str, str], keyword_splats: bool = False,
                    list_splats: bool = False) -> list:
    """``args`` without the ``**dd`` of factory dicts; one that may carry a dtype is bound to ``dtype``.
    With ``keyword_splats`` (a template with ``{**name}``), another ``**d`` is bound under its own text and
    written out there; with ``list_splats`` (torch's ``*name`` collects the positionals), a ``*x`` stays among
    them.  Any other unpacking blocks the rewrite (its arguments cannot be placed)."""
    from kb.analysis.factorykwargs import splat_factory

    node = call.child_by_field_name("arguments")
    splats = {c.start_byte: c for c in node.named_children if c.type == "dictionary_splat"}
    kept = []
    for arg in args:
        found = splat_factory(splats[arg.start], call_source(call)) if arg.start in splats else None
        if found is None and arg.star == "*" and list_splats:
            kept.append(arg)  # part of the ``*name`` tuple (``bind``)
            continue
        if found is None and arg.star == "**" and keyword_splats:
            bound[arg.value] = arg.value  # (the key starts with "**": no torch parameter has that name)
            continue
        if found is None and arg.star:
            raise Blocked("the call unpacks *args or **kwargs, so its arguments cannot be placed")
        if found is None:
            kept.append(arg)
        elif found.may_carry_dtype:
            if "dtype" in bound or any(a.keyword == "dtype" for a in args):
                raise Blocked("the call passes dtype twice (once through a factory dict)")
            bound["dtype"] = Splat(arg.value)
    return kept


def call_source(node: Any) -> bytes:
    """The whole source a node belongs to (its tree's root text)."""
    while node.parent is not None:
        node = node.parent
    return node.text


def render(templates: list[str], call: Any, record: dict[str, Any], target: dict[str, Any], alias: str,
           receiver: str | None) -> str:
    """The text replacing ``call``; raises ``Blocked`` when no template fits the call's arguments."""
    bound = bind(call, record, target, keyword_splats=any(KEYWORDS_RE.search(t) for t in templates))
    written_in_place(record, bound)
    ignorable = _ignorable(record, target, bound)
    defaults = _defaults(record, target)
    collected = _collected_keywords(record, bound)
    for allowed in (bound, {**defaults, **bound}):  # first what the call passes, then torch defaults too
        for template in templates:
            required, optional = fields(template)
            if not required <= allowed.keys():
                continue
            if not _meets(template, allowed):
                continue
            placed = set(collected) if KEYWORDS_RE.search(template) else set()
            if set(bound) - required - optional - ignorable - placed and not removes(template):  # a removal drops all
                continue
            text = _fill(template, {**{n: allowed[n] for n in required}, **bound}, alias, receiver)
            return KEYWORDS_RE.sub(lambda _: "".join(f", {v}" if k.startswith("**") else f", {k}={v}"
                                                     for k, v in collected.items()), text)
    passed = ", ".join(sorted(bound)) or "no arguments"
    raise Blocked(f"no rewrite template takes this call's arguments ({passed})")


def _collected_keywords(record: dict[str, Any], bound: dict[str, str]) -> dict[str, str]:
    """The passed keywords torch's signature has no parameter for, when it collects them in ``**name``."""
    signature = parse_signature(record.get("torch_signature"))
    if signature is None or not signature.has("var_keyword"):
        return {}
    named = {p.name for p in signature.parameters}
    return {k: v for k, v in bound.items() if k not in named}


STATEMENT_RE = re.compile(r"(assert|raise|del|pass)\b")


def check_statement(text: str, call: Any) -> None:
    """A template that writes a statement (``assert {condition}, {message}``) replaces only a call
    that is a whole statement; raises ``Blocked`` where the call is part of an expression."""
    if not STATEMENT_RE.match(text):
        return
    parent = call.parent
    if parent is None or parent.type != "expression_statement" or len(parent.named_children) != 1:
        raise Blocked("the rewrite is a statement, and this call is part of an expression")


def receiver_text(member: Any) -> str | None:
    """The receiver of ``obj.method(...)`` as text, parenthesised unless it is a primary. The receiver of an
    in-place method (``normal_``) loses a trailing ``.data``: MindSpore's ``Tensor.data`` is a copy, so
    ``m.weight.data.normal_(0, 0.02)`` must fill ``m.weight`` itself (writing the copy changes nothing)."""
    attribute = member.parent if member is not None else None
    obj = attribute.child_by_field_name("object") if attribute is not None else None
    if obj is None:
        return None
    held = obj.child_by_field_name("object") if obj.type == "attribute" else None
    if held is not None and obj.child_by_field_name("attribute").text == b"data" and member.text.endswith(b"_") \
            and not member.text.endswith(b"__"):
        obj = held
    text = obj.text.decode("utf-8", "surrogateescape")
    return text if obj.type in PRIMARY else f"({text})"


DATA_RE = re.compile(r"(?s)(.*\S)\s*\.\s*data")


def written_in_place(record: dict[str, Any], bound: dict[str, str]) -> None:
    """The tensor an in-place function writes (``nn.init.normal_(m.weight.data, 0, 0.02)``: its first parameter)
    loses a trailing ``.data``, as an in-place method's receiver does (``receiver_text``)."""
    leaf = str(record.get("torch") or "").rsplit(".", 1)[-1]
    signature = parse_signature(record.get("torch_signature"))
    if not leaf.endswith("_") or leaf.endswith("__") or signature is None or not signature.positional:
        return
    first = signature.positional[0]
    found = DATA_RE.fullmatch(bound.get(first) or "")
    if found is not None and not isinstance(bound[first], (Splat, Spread)):
        bound[first] = found[1]


def _defaults(record: dict[str, Any], target: dict[str, Any]) -> dict[str, str]:
    """torch defaults that are values (not ``None``, which usually means "computed")."""
    signature = parse_signature(record.get("torch_signature"))
    found = {p.name: p.default for p in signature.parameters if p.default is not None} if signature else {}
    for rule in target.get("params") or []:
        if isinstance(rule, dict) and rule.get("torch") and rule.get("torch_default") is not None:
            found[rule["torch"]] = rule["torch_default"]
    return {name: text for name, text in found.items() if literal(text) not in (MISSING, None)}


def _ignorable(record: dict[str, Any], target: dict[str, Any], bound: dict[str, str]) -> set[str]:
    """Passed torch arguments a template may leave out: dropped ones, and torch defaults repeated."""
    rules = {m.get("torch"): m for m in target.get("params") or [] if isinstance(m, dict) and m.get("torch")}
    signature = parse_signature(record.get("torch_signature"))
    defaults = {p.name: p.default for p in signature.parameters} if signature is not None else {}
    out = set()
    for name, text in bound.items():
        rule = rules.get(name, {})
        default = rule.get("torch_default") or defaults.get(name)
        if rule.get("kind") == "dropped":
            out.add(name)
        elif default is not None and literal(text) is not MISSING and same_value(literal(text), literal(default)):
            out.add(name)
    return out


def _fill(template: str, bound: dict[str, str], alias: str, receiver: str | None) -> str:
    def field(match: re.Match) -> str:
        name = match[2]
        if match[4] is not None:  # a condition: met already (``render``)
            return ""
        if name == "ms" and not match[1]:
            return alias
        if name == "self" and not match[1]:
            if receiver is None:
                raise Blocked("the template needs a receiver, and the call has none")
            return receiver
        if match[1]:
            if isinstance(bound.get(name), Splat):
                return f", {bound[name]}"
            return f", {match[3] or name}={bound[name]}" if name in bound else ""
        if isinstance(bound[name], Splat):
            raise Blocked(f"{name} comes from a factory dict, and the rewrite needs it written out")
        return bound[name]

    def spread(match: re.Match) -> str:
        value = bound[match[1]]
        return ", ".join(value.items) if isinstance(value, Spread) else value

    return SPREAD_RE.sub(spread, FIELD_RE.sub(field, template)).replace("(, ", "(")


def removal(call: Any, source: bytes) -> list[Any]:
    """Edits for an empty template: the construct of ``call`` (a call, or a name used as a decorator)
    goes. A decorator line or a statement that is only the call is deleted (``pass`` where it was
    alone in its block); a ``with`` item is dropped, and a ``with`` statement left without items
    gives way to its body, dedented. Raises ``Blocked`` where the call is anything else."""
    from kb.analysis.text import TextEdit

    parent = call.parent
    if parent is not None and parent.type in ("decorator", "expression_statement") \
            and parent.named_children and parent.named_children[0].id == call.id:
        start = source.rfind(b"\n", 0, parent.start_byte) + 1
        end = source.find(b"\n", parent.end_byte)
        end = len(source) if end < 0 else end + 1
        if source[start:parent.start_byte].strip() or source[parent.end_byte:end].strip():
            raise Blocked("the statement shares its line with other code")
        alone = parent.type == "expression_statement" and parent.parent is not None \
            and parent.parent.type == "block" and len(parent.parent.named_children) == 1
        return [TextEdit(parent.start_byte, parent.end_byte, "pass")] if alone else [TextEdit(start, end, "")]
    item = parent if parent is not None and parent.type == "with_item" else None
    clause = item.parent if item is not None else None
    statement = clause.parent if clause is not None else None
    if item is None or clause is None or statement is None or statement.type != "with_statement" \
            or item.child_by_field_name("value") is None or item.child_by_field_name("value").id != call.id:
        raise Blocked("only a decorator or a `with` item can be removed")
    items = [c for c in clause.named_children if c.type == "with_item"]
    if len(items) > 1:
        index = next(i for i, c in enumerate(items) if c.id == item.id)
        if index + 1 < len(items):
            return [TextEdit(item.start_byte, items[index + 1].start_byte, "")]
        return [TextEdit(items[index - 1].end_byte, item.end_byte, "")]
    return [_unwrap(statement, source)]


def _unwrap(statement: Any, source: bytes) -> Any:
    """The ``with`` statement replaced by its body, dedented to the statement's indentation."""
    return unwrap_block(statement, statement.child_by_field_name("body"), source)


def unwrap_block(statement: Any, body: Any, source: bytes) -> Any:
    """``statement`` replaced by one of its blocks (``body``), dedented to the statement's indentation
    (a ``with`` statement by its body, a ``try`` by its handler's)."""
    from kb.analysis.text import TextEdit

    if body is None or any(n.type == "string" and n.start_point[0] != n.end_point[0] for n in _descendants(body)):
        raise Blocked("the `with` body holds a multi-line string, which dedenting would change")
    start = source.rfind(b"\n", 0, statement.start_byte) + 1
    outer = source[start:statement.start_byte]
    first = source.rfind(b"\n", 0, body.start_byte) + 1
    inner = source[first:body.start_byte]
    if not outer.strip() == b"" or not inner.startswith(outer) \
            or b"\n" not in source[statement.start_byte:body.start_byte]:
        raise Blocked("the `with` statement shares its line with other code")
    cut = len(inner) - len(outer)
    lines = source[first:body.end_byte].split(b"\n")
    kept = [line[cut:] if line[:cut].strip() == b"" else line for line in lines]
    return TextEdit(start, body.end_byte, b"\n".join(kept).decode("utf-8", "surrogateescape"))


def _descendants(node: Any) -> Any:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.named_children)
