"""Signatures, literals and parameter value transforms (no code is ever executed).

A ``transform`` in the KB is a Python expression of the torch value ``v``
(``1 - v``).  When the call passes a literal, the transform is computed by a tiny
evaluator that only knows arithmetic, comparisons, conditionals, tuples and a
few pure built-ins (``p=0.3`` -> ``keep_prob=0.7``).  Any other value is
substituted as text, in parentheses (``keep_prob=1 - (rate)``).  ``refuse('why')`` in a
transform says a literal value has no MindSpore form: the call is left for a human with that reason.
"""
from __future__ import annotations

import ast
import copy
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

_BINARY = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_}
_COMPARE = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "int": int, "float": float, "bool": bool, "str": str, "tuple": tuple, "list": list,
    "abs": abs, "min": min, "max": max, "round": round, "len": len,
}
_TYPES = {"int": int, "float": float, "bool": bool, "str": str, "tuple": tuple, "list": list}
MISSING = object()


class NotComputable(Exception):
    """The transform cannot be computed for this value (it is substituted instead)."""


class Refused(NotComputable):
    """The transform says this value has no MindSpore form (``refuse('why')``): no rewrite."""


@dataclass(frozen=True)
class Parameter:
    name: str
    kind: str  # positional | keyword_only | var_positional | var_keyword
    default: str | None = None


@dataclass(frozen=True)
class Signature:
    parameters: tuple[Parameter, ...]

    @property
    def positional(self) -> list[str]:
        """Names that may be passed by position, in order."""
        return [p.name for p in self.parameters if p.kind == "positional"]

    @property
    def names(self) -> set[str]:
        return {p.name for p in self.parameters if p.kind in ("positional", "keyword_only")}

    def has(self, kind: str) -> bool:
        return any(p.kind == kind for p in self.parameters)


@lru_cache(maxsize=4096)
def parse_signature(text: str | None) -> Signature | None:
    """Parse ``(a, b=1, *, c=2) -> T``; None when absent or unreadable."""
    if not text or not isinstance(text, str):
        return None
    text = text.strip()
    for candidate in (text, re.sub(r"<[^<>]*>", "None", text)):
        try:
            tree = ast.parse(f"def _f{candidate}: pass")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        fn = tree.body[0]
        if not isinstance(fn, ast.FunctionDef):
            return None
        return Signature(tuple(_parameters(fn.args)))
    return None


def _parameters(args: ast.arguments) -> list[Parameter]:
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + [ast.unparse(d) for d in args.defaults]
    found = [Parameter(a.arg, "positional", d) for a, d in zip(positional, defaults, strict=True)]
    if found and found[0].name in ("self", "cls"):
        found = found[1:]
    if args.vararg is not None:
        found.append(Parameter(args.vararg.arg, "var_positional"))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        found.append(Parameter(arg.arg, "keyword_only", None if default is None else ast.unparse(default)))
    if args.kwarg is not None:
        found.append(Parameter(args.kwarg.arg, "var_keyword"))
    return found


def literal(text: str | None) -> Any:
    """The value of a Python literal written as text, or ``MISSING``."""
    if text is None or len(text) > 200:
        return MISSING
    return _literal(text.strip())


@lru_cache(maxsize=8192)
def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return MISSING


def same_value(a: Any, b: Any) -> bool:
    """Literal equality that keeps ``True`` apart from ``1`` and ``0.5`` apart from ``'0.5'``."""
    if a is MISSING or b is MISSING:
        return False
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def format_value(value: Any) -> str:
    """Python source for a computed value (floats lose binary noise: 1 - 0.7 -> 0.3)."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, float):
        return repr(float(f"{value:.12g}"))
    if isinstance(value, tuple):
        inner = ", ".join(format_value(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, (int, str)):
        return repr(value)
    raise NotComputable(f"cannot write a {type(value).__name__} literal")


def _evaluate(node: ast.AST, v: Any) -> Any:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body, v)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id == "v":
            if v is MISSING:
                raise NotComputable("no value")
            return v
        raise NotComputable(f"unknown name {node.id}")
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left, v), _evaluate(node.right, v)
        if isinstance(node.op, ast.Pow) and isinstance(right, (int, float)) and abs(right) > 64:
            raise NotComputable("exponent too large")
        if isinstance(node.op, ast.Mult) and any(isinstance(x, (str, tuple, list)) for x in (left, right)) \
                and any(isinstance(x, int) and x > 4096 for x in (left, right)):
            raise NotComputable("repetition too large")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand, v))
    if isinstance(node, ast.BoolOp):
        values = [_evaluate(n, v) for n in node.values]
        return all(values) if isinstance(node.op, ast.And) else next((x for x in values if x), values[-1])
    if isinstance(node, ast.Compare):
        left = _evaluate(node.left, v)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = _evaluate(comparator, v)
            if type(op) not in _COMPARE or not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        return _evaluate(node.body if _evaluate(node.test, v) else node.orelse, v)
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [_evaluate(n, v) for n in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.Subscript):
        return _evaluate(node.value, v)[_evaluate(node.slice, v)]
    if isinstance(node, ast.GeneratorExp):  # ``tuple(float(s) for s in v)``: v's items, each by its own expression
        return [_evaluate(elt, item) for elt, items in [_generated(node, v)] for item in items]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        if node.func.id == "refuse" and len(node.args) == 1 and isinstance(node.args[0], ast.Constant):
            raise Refused(str(node.args[0].value))
        if node.func.id == "isinstance" and len(node.args) == 2:
            return isinstance(_evaluate(node.args[0], v), _types(node.args[1]))
        if node.func.id in _FUNCTIONS:
            return _FUNCTIONS[node.func.id](*[_evaluate(a, v) for a in node.args])
    raise NotComputable(f"unsupported expression: {type(node).__name__}")


def _types(node: ast.AST) -> tuple[type, ...]:
    """The types an ``isinstance`` test names: one (``int``) or a tuple of them (``(tuple, list)``)."""
    names = node.elts if isinstance(node, ast.Tuple) else [node]
    if not all(isinstance(n, ast.Name) and n.id in _TYPES for n in names):
        raise NotComputable("isinstance of a type the transforms do not know")
    return tuple(_TYPES[n.id] for n in names)  # type: ignore[attr-defined]


def _generated(node: ast.GeneratorExp, v: Any) -> tuple[ast.AST, Any]:
    """(the item expression with its loop name read as ``v``, the items) of a one-loop generator without
    conditions whose item expression names no ``v`` of its own."""
    loop = node.generators[0] if len(node.generators) == 1 else None
    if loop is None or loop.ifs or loop.is_async or not isinstance(loop.target, ast.Name) \
            or any(isinstance(n, ast.Name) and n.id == "v" for n in ast.walk(node.elt)):
        raise NotComputable("unsupported generator")
    name = loop.target.id

    class AsV(ast.NodeTransformer):
        def visit_Name(self, named: ast.Name) -> ast.Name:
            return ast.Name(id="v", ctx=named.ctx) if named.id == name else named

    return AsV().visit(copy.deepcopy(node.elt)), _evaluate(loop.iter, v)


@lru_cache(maxsize=1024)
def _compiled(transform: str) -> ast.Expression:
    return ast.parse(transform.strip(), mode="eval")


def apply_transform(transform: str, value_text: str | None) -> str:
    """New source text for a value; raises NotComputable when neither way works."""
    try:
        tree = _compiled(transform)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise NotComputable(f"transform is not an expression: {transform!r}") from None
    value = literal(value_text)
    uses_v = any(isinstance(n, ast.Name) and n.id == "v" for n in ast.walk(tree))
    if value is not MISSING or not uses_v:
        try:
            return format_value(_evaluate(tree, value))
        except Refused:
            raise
        except NotComputable:
            if not uses_v:
                raise
        except Exception:  # arithmetic on the wrong types, zero division, ...
            if not uses_v:
                raise NotComputable("transform failed") from None
    if value_text is None:
        raise NotComputable("no value to transform")
    return substitute(transform.strip(), value_text)


_ATOM = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def substitute(transform: str, value_text: str) -> str:
    """Replace each ``v`` in the transform by ``(value_text)`` (no parentheses around a name or a
    dotted name: nothing binds tighter; a number keeps them, ``(1).real``)."""
    if transform == "v":
        return value_text
    wrapped = value_text if _ATOM.fullmatch(value_text.strip()) else f"({value_text})"
    spots = []
    line_starts = [0] + [m.end() for m in re.finditer("\n", transform)]
    for node in ast.walk(_compiled(transform)):
        if isinstance(node, ast.Name) and node.id == "v":
            line = transform[line_starts[node.lineno - 1]:].encode()
            start = line_starts[node.lineno - 1] + len(line[: node.col_offset].decode())
            spots.append((start, start + 1))
    for start, end in sorted(spots, reverse=True):
        transform = transform[:start] + wrapped + transform[end:]
    return transform
