"""Read a call signature from the first line of a docstring.

Many torch builtins (``torch.add``, ``torch.Tensor.view``) and MindSpore's
C++ tensor methods have no ``inspect.signature``; their docstrings open with
one instead::

    add(input, other, *, alpha=1, out=None) -> Tensor

``parse_doc_signature`` turns such a line into the snapshot's parameter rows
``[name, kind, default-text-or-None]``.  Overloaded docstrings are read at
their first overload; pybind11's ``Overloaded function.`` header is skipped.
Annotations (``count: int = -1``) are dropped.  Anything that does not look
like a signature gives ``None`` rather than a guess.
"""
from __future__ import annotations

import re
from itertools import pairwise

NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
HEAD_RE = re.compile(r"^\s*(?:\d+\.\s+)?(?:[A-Za-z_][\w]*\.)*(?P<name>[A-Za-z_]\w*)\s*\(")
MAX_LINES = 12  # how far into a docstring to look for the signature line
OPEN, CLOSE = "([{", ")]}"
_UNBALANCED = object()  # the bracket is not closed yet: read one more line


def parse_doc_signature(doc: str | None, name: str | None = None) -> list[list] | None:
    """Parameter rows from the first signature line of ``doc``, or None.

    ``name``, when given, must equal the name the line calls (used for
    classes, whose docstrings often start with prose).
    """
    if not doc:
        return None
    lines = doc.strip().splitlines()[:MAX_LINES]
    for start, line in enumerate(lines):
        head = HEAD_RE.match(line)
        if not head:
            if start == 0 and line.strip():
                return None  # prose first: no signature line
            continue
        if name is not None and head.group("name") not in (name, "__init__"):
            return None
        inner = None
        for end in range(start, len(lines)):  # a signature may wrap over lines
            text = " ".join(part.strip() for part in lines[start:end + 1])
            inner = _parenthesised(text, text.index("(", head.start("name") - _indent(line)))
            if inner is not _UNBALANCED:
                break
        if inner is None or inner is _UNBALANCED:
            return None
        params = _params(inner)
        if params is None:
            return None
        if _generic(params) and start + 1 < len(lines):
            continue  # pybind11 overload header "f(*args, **kwargs)"; read overload 1
        return params
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _outside_quotes(text: str, start: int = 0):
    """(index, char, depth) for each character outside quotes; depth counts open brackets after it."""
    depth, quote = 0, None
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            quote = None if ch == quote else quote
            continue
        if ch in "'\"":
            quote = ch
            continue
        if ch in OPEN:
            depth += 1
        elif ch in CLOSE:
            depth -= 1
        yield i, ch, depth


def _parenthesised(text: str, open_at: int):
    """Text between the bracket at ``open_at`` and its partner, if the rest is a return note.

    Returns None when text follows the bracket, ``_UNBALANCED`` when it never closes.
    """
    for i, ch, depth in _outside_quotes(text, open_at):
        if ch in CLOSE and depth == 0:
            rest = text[i + 1:].strip()
            if rest and not rest.startswith(("->", ":")):
                return None
            return text[open_at + 1:i]
    return _UNBALANCED


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside brackets and quotes."""
    cuts = [i for i, ch, depth in _outside_quotes(text) if ch == sep and depth == 0]
    bounds = [-1] + cuts + [len(text)]
    return [text[a + 1:b] for a, b in pairwise(bounds)]


def _params(inner: str) -> list[list] | None:
    rows: list[list] = []
    keyword_only = False
    for raw in split_top_level(inner):
        piece = raw.strip().replace("\\*", "*")  # reST escapes "*" as backslash-star
        if not piece:
            continue
        if piece == "/":
            for row in rows:
                row[1] = "POSITIONAL_ONLY"
            continue
        if piece == "*":
            keyword_only = True
            continue
        name_part, default = _split_default(piece)
        name_part = split_top_level(name_part, ":")[0].strip()
        if name_part.startswith("**"):
            kind, name_part = "VAR_KEYWORD", name_part[2:]
        elif name_part.startswith("*"):
            kind, name_part, keyword_only = "VAR_POSITIONAL", name_part[1:], True
        else:
            kind = "KEYWORD_ONLY" if keyword_only else "POSITIONAL_OR_KEYWORD"
        if not NAME_RE.fullmatch(name_part):
            return None
        if kind.startswith("VAR_"):
            default = None
        rows.append([name_part, kind, default])
    return rows


def _split_default(piece: str) -> tuple[str, str | None]:
    """``'a: int = 3'`` -> ``('a: int', '3')``; ignores ``==`` and ``=`` inside brackets."""
    depth, quote = 0, None
    for i, ch in enumerate(piece):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in OPEN:
            depth += 1
        elif ch in CLOSE:
            depth -= 1
        elif ch == "=" and depth == 0:
            before = piece[i - 1] if i else ""
            after = piece[i + 1] if i + 1 < len(piece) else ""
            if before in "=!<>" or after == "=":
                continue
            return piece[:i], " ".join(piece[i + 1:].split())
    return piece, None


def _generic(params: list[list]) -> bool:
    """True for the uninformative ``(*args, **kwargs)``."""
    return [p[1] for p in params] == ["VAR_POSITIONAL", "VAR_KEYWORD"]
