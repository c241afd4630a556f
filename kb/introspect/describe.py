"""Describe one API object as a snapshot entry.

An entry is ``{"kind", "signature", "params", "sig_source"}``:

- ``params`` rows are ``[name, inspect-kind-name, default-text-or-None]``;
  ``None`` marks a required parameter.  Methods lose ``self``; classes are
  described by their ``__init__`` (without ``self``).
- ``signature`` is rebuilt from the rows (no annotations), so it always agrees
  with ``params`` and never carries memory addresses.
- ``sig_source`` says where the rows came from: ``inspect``, ``docstring``
  (see ``docsig``) or ``none``.  The uninformative ``(*args, **kwargs)`` of a
  generic wrapper counts as no signature unless a docstring gives a better one.

Default values become literal text through ``default_text``: Python literals
keep their ``repr``; dtypes print as ``torch.float32`` / ``mindspore.float32``;
functions and classes as ``<function relu>`` / ``<class ReLU>``; other objects
whose repr is not stable (addresses, multi-line tensors) as ``<Name object>``.
"""
from __future__ import annotations

import enum
import inspect
import re

from kb.introspect.docsig import parse_doc_signature

MAX_DEFAULT_LEN = 80
ENUM_REPR = re.compile(r"^<(\w+\.\w+): [^<>]*>$")


def describe(obj, kind: str, *, method: bool = False) -> dict:
    """The snapshot entry for ``obj`` of the given ``kind``.

    ``method`` says ``obj`` was read off a class (drop a leading ``self``).
    """
    if kind == "class":
        params, source = _class_params(obj)
    elif kind in ("function", "method"):
        params, source = _routine_params(obj, drop_self=method or kind == "method")
    else:
        params, source = None, "none"
    return {
        "kind": kind,
        "signature": None if params is None else format_signature(params),
        "params": params or [],
        "sig_source": source,
    }


def _routine_params(obj, drop_self: bool) -> tuple[list | None, str]:
    rows = _inspect_rows(obj)
    if rows is not None and _generic(rows[1:] if rows[:1] and rows[0][0] == "self" else rows):
        rows = _inspect_rows(_unwrapped(obj))
    if rows is not None and drop_self and rows and rows[0][0] == "self":
        rows = rows[1:]
    if rows is not None and not _generic(rows):
        return rows, "inspect"
    doc_rows = parse_doc_signature(_doc(obj))
    if doc_rows and doc_rows[0][0] == "self":
        doc_rows = doc_rows[1:]
    if doc_rows is not None and not _generic(doc_rows):
        return doc_rows, "docstring"
    return None, "none"


def _class_params(cls) -> tuple[list | None, str]:
    init = getattr(cls, "__init__", None)
    if inspect.isfunction(init):  # a Python __init__ (possibly inherited)
        rows = _inspect_rows(init)
        if rows is not None and _generic(rows[1:]):
            rows = _inspect_rows(_unwrapped(init))
        if rows is not None:
            rows = rows[1:] if rows and rows[0][1] != "VAR_POSITIONAL" else rows
            if not _generic(rows):
                return rows, "inspect"
    else:
        rows = _inspect_rows(cls)  # C types: __text_signature__ or __new__
        if rows is not None and not _generic(rows):
            return rows, "inspect"
    for doc, name in ((_doc(cls), cls.__name__), (_doc(init), "__init__")):
        rows = parse_doc_signature(doc, name=name)
        if rows is not None:
            if rows and rows[0][0] == "self":
                rows = rows[1:]
            if not _generic(rows):
                return rows, "docstring"
    return None, "none"


def _unwrapped(fn, depth: int = 3):
    """The function a generic ``(*args, **kwargs)`` wrapper closed over.

    For decorators that set no ``__wrapped__`` (MindSpore's optimizer
    ``__init__`` registration, mint's view wrappers): take the closed-over
    function of the same ``__name__``, else the only closed-over function.
    """
    for _ in range(depth):
        inner = [_cell(c) for c in (getattr(fn, "__closure__", None) or ())]
        inner = [f for f in inner if inspect.isfunction(f)]
        same = [f for f in inner if f.__name__ == fn.__name__]
        if not (same or len(inner) == 1):
            break
        fn = (same or inner)[0]
    return fn


def _cell(cell):
    try:
        return cell.cell_contents
    except ValueError:  # empty cell
        return None


def _doc(obj) -> str | None:
    try:
        doc = obj.__doc__
    except Exception:  # some descriptors raise on attribute access
        return None
    return doc if isinstance(doc, str) else None


def _inspect_rows(obj) -> list | None:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError, RuntimeError, AttributeError):
        return None
    rows = []
    for p in sig.parameters.values():
        default = None if p.default is inspect.Parameter.empty else default_text(p.default)
        rows.append([p.name, p.kind.name, default])
    return rows


def _generic(rows: list) -> bool:
    return [r[1] for r in rows] == ["VAR_POSITIONAL", "VAR_KEYWORD"]


def format_signature(params: list) -> str:
    """``(a, b=1, /, *args, c=None, **kw)`` from parameter rows."""
    parts: list[str] = []
    star = False
    for i, (name, kind, default) in enumerate(params):
        if kind == "KEYWORD_ONLY" and not star:
            parts.append("*")
            star = True
        if kind == "VAR_POSITIONAL":
            parts.append("*" + name)
            star = True
        elif kind == "VAR_KEYWORD":
            parts.append("**" + name)
        else:
            parts.append(name if default is None else f"{name}={default}")
        last_positional_only = kind == "POSITIONAL_ONLY" and (
            i + 1 == len(params) or params[i + 1][1] != "POSITIONAL_ONLY"
        )
        if last_positional_only:
            parts.append("/")
    return "(" + ", ".join(parts) + ")"


def default_text(value) -> str:
    """Deterministic literal text for a default value."""
    if isinstance(value, enum.Enum):  # before str/int: str- and int-enums exist
        return f"{type(value).__name__}.{value.name}"
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return repr(value)
    if isinstance(value, tuple):
        inner = ", ".join(default_text(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(default_text(v) for v in value) + "]"
    if isinstance(value, (set, frozenset)):
        items = sorted(default_text(v) for v in value)
        return ("{" + ", ".join(items) + "}") if items else "set()"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{default_text(k)}: {default_text(v)}" for k, v in value.items()) + "}"
    if inspect.isclass(value):
        return f"<class {value.__name__}>"
    if inspect.isroutine(value):
        return f"<function {getattr(value, '__name__', type(value).__name__)}>"
    dtype = _dtype_text(value)
    if dtype:
        return dtype
    try:
        text = repr(value)
    except Exception:
        text = ""
    enum_like = ENUM_REPR.match(text)
    if enum_like:  # pybind11 enums: "<RedOpType.SUM: 0>"
        return enum_like.group(1)
    if not text or " at 0x" in text or "\n" in text or len(text) > MAX_DEFAULT_LEN or text.startswith("<"):
        return f"<{type(value).__name__} object>"
    return text


def _dtype_text(value) -> str | None:
    """``torch.float32`` / ``mindspore.float32`` for dtype objects, else None."""
    module = type(value).__module__ or ""
    text = repr(value) if module.startswith(("torch", "mindspore")) else ""
    if module.startswith("torch") and type(value).__name__ == "dtype":
        return text
    if module.startswith("mindspore") and ".typing" in module:
        return text if text.startswith("mindspore.") else f"mindspore.{text.lower()}"
    return None
