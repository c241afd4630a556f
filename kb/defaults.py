"""Parameter defaults as recorded text, compared by what they mean.

Python literals compare by value (``0.5`` == ``5e-1``, ``'same'`` == ``"same"``,
``0`` == ``0.0``, ``(1, 1)`` == ``[1, 1]``, but ``True`` != ``1``), dtype names by their last
component (``mstype.float32`` == ``mindspore.float32``), enum members by the member name,
anything else as text with whitespace removed.  ``msmap check`` judges recorded defaults
against the installed libraries with it; the parameter tables (``kb.views``) use it to hide
parameters whose defaults agree.
"""
from __future__ import annotations

import ast
import re
from typing import Any

DTYPE_PREFIXES = ("mindspore.common.dtype.", "mindspore.", "mstype.", "ms.", "torch.")


def norm_default(text: str | None) -> Any:
    if text is None:
        return None
    t = str(text).strip()
    try:
        v = ast.literal_eval(t)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        member = re.fullmatch(r"[A-Za-z_][\w.]*\.([A-Z][A-Z0-9_]*)", t)
        if member:  # enum members: ReduceOp.SUM == RedOpType.SUM (a pybind enum's repr names its C++ type)
            return ("member", member.group(1))
        for prefix in DTYPE_PREFIXES:
            if t.startswith(prefix) and re.fullmatch(r"[A-Za-z_]\w*", t[len(prefix):]):
                return ("dtype", t[len(prefix):].lower())
        return ("text", re.sub(r"\s+", "", t).replace('"', "'"))
    return _norm_value(v)


def _norm_value(v: Any) -> Any:
    if isinstance(v, bool) or v is None:
        return ("lit", repr(v))
    if isinstance(v, (int, float)):
        return ("num", float(v))
    if isinstance(v, (list, tuple)):
        return ("seq", tuple(_norm_value(x) for x in v))
    return ("lit", repr(v))


def same_default(a: str | None, b: str | None) -> bool:
    return norm_default(a) == norm_default(b)
