"""Minimal before/after code for a target without a curated example.

Built from the torch signature and the target's parameter table only: required
parameters appear as placeholders named after themselves, parameters that change
appear with their torch default so the change is visible.  The pages mark these
examples as generated.  Returns None where a call cannot be shown honestly
(composites, context changes, no equivalent, nothing known about the signature).
"""
from __future__ import annotations

import ast
import keyword
import re
from typing import Any

from kb.analysis.transforms import NotComputable, apply_transform
from kb.docs import words
from kb.views import param_differs

SHOWN = ("renamed", "transformed", "dropped", "unsupported")
VARS = {"torch.nn": "layer", "torch.optim": "optimizer", "torch.optim.lr_scheduler": "scheduler",
        "torch.utils.data": "data"}
MAX_ARGS = 6


def _signature_params(sig: str | None) -> list[tuple[str, bool]] | None:
    """[(name, required positional)] for the named parameters of a signature text, or None.
    Keyword-only parameters are never required positionals (snapshots print torch's optional
    ``out`` without a default)."""
    if not sig:
        return None
    text = re.sub(r"\s*->.*$", "", sig.strip())
    try:
        fn = ast.parse(f"def _f{text}: pass").body[0]
    except SyntaxError:
        return None
    if not isinstance(fn, ast.FunctionDef):  # always one: the text starts with "def"
        return None
    args = fn.args
    pos = args.posonlyargs + args.args
    n_required = len(pos) - len(args.defaults)
    out = [(a.arg, i < n_required) for i, a in enumerate(pos)]
    out += [(a.arg, False) for a in args.kwonlyargs]
    return out


def _usable(name: str | None) -> bool:
    """A parameter name that can be written as a keyword argument."""
    return name is not None and name.isidentifier() and not keyword.iskeyword(name)


def _expr(text: str | None) -> bool:
    """Default text that is a Python expression (snapshots also print things like '<function relu>')."""
    if not text:
        return False
    try:
        compile(text, "<default>", "eval")
    except SyntaxError:
        return False
    return True


def _closed(v: str) -> bool:
    """'(1, 2)' is one bracketed group; '(1) + (2)' is not."""
    depth = 0
    for i, ch in enumerate(v):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0 and i < len(v) - 1:
            return False
    return True


def _value(v: str, transform: str) -> str:
    """The transformed value as the engine writes it (a literal is folded: padding 0 -> 0)."""
    try:
        return apply_transform(transform, v)
    except NotComputable:
        pass
    if not (re.fullmatch(r"[\w.'\"]+|-?\d+(\.\d+)?", v) or (v[:1] in "([{" and _expr(v) and _closed(v))):
        v = f"({v})"
    return re.sub(r"\bv\b", v, transform)


def generate(rec: dict[str, Any], t: dict[str, Any]) -> dict[str, str] | None:
    if not t.get("api") or t["relation"] not in words.CLEAN + ("torch_more_params", "param_semantics_differ"):
        return None
    torch_name, api = rec["torch"], t["api"]
    method = torch_name.startswith("torch.Tensor.")
    kind = rec.get("kind") or ""
    if kind in ("attribute", "dtype", "module", "property", "constant"):
        if method:
            return {"torch": f"x.{torch_name.rsplit('.', 1)[1]}", "mindspore": _ms_callee(api, True)}
        return {"torch": f"import torch\n\n{torch_name}", "mindspore": f"import mindspore\n\n{api}"}
    sig = _signature_params(rec.get("torch_signature"))
    params = t.get("params") or []
    if sig is None and not params:
        return None
    by_torch = {p["torch"]: p for p in params if p.get("torch")}
    required = [n for n, req in (sig or []) if req and n not in ("self", "cls")]
    if sig is None:
        required = [p["torch"] for p in params if p.get("torch") and p.get("torch_default") is None
                    and p["kind"] != "added"]
    if not all(_usable(n) for n in required):
        return None
    optional = [p for p in params if _usable(p.get("torch")) and p["torch"] not in required and p["kind"] in SHOWN]
    m_args: list[str] = []
    notes: list[str] = []
    t_args, shown = list(required), set(required)
    keywords = any(by_torch.get(n, {}).get("kind", "same") != "same" for n in required)
    for n in required:
        _ms_arg(by_torch.get(n) or {"torch": n, "ms": n, "kind": "same"}, n, keywords, m_args, notes)
    for p in optional[: max(0, MAX_ARGS - len(required))]:
        value = p["torch_default"] if _expr(p.get("torch_default")) else p["torch"]
        if p["torch"] not in shown:  # one torch argument may feed several MindSpore ones
            t_args.append(f"{p['torch']}={value}")
            shown.add(p["torch"])
        _ms_arg(p, value, True, m_args, notes)
    for p in params:  # defaults that differ: pass torch's default explicitly to keep its behaviour
        if p["kind"] == "same" and _usable(p.get("torch")) and p["torch"] not in required \
                and _expr(p.get("torch_default")) and p["torch_default"] != "None" \
                and p.get("ms_default") and param_differs(p) and len(m_args) < MAX_ARGS:
            m_args.append(f"{p['ms'] or p['torch']}={p['torch_default']}")
            notes.append(f"# {p['ms'] or p['torch']}: MindSpore's default is {p['ms_default']}, torch's is "
                         f"{p['torch_default']}")
    lhs = "result" if kind != "class" else VARS.get(rec.get("namespace") or "", "obj")
    ms_method = method and api.startswith("mindspore.Tensor.")
    if method and not ms_method:
        m_args.insert(0, "x")
    torch_call = f"{lhs} = {_callee(torch_name, method)}({', '.join(t_args)})"
    ms_call = f"{lhs} = {_ms_callee(api, ms_method)}({', '.join(m_args)})"
    before = torch_call if method else f"import torch\n\n{torch_call}"
    after = ms_call if ms_method else f"import mindspore\n\n{ms_call}"
    return {"torch": before, "mindspore": "\n".join([after] + notes)}


def _callee(name: str, method: bool) -> str:
    return f"x.{name.rsplit('.', 1)[1]}" if method else name


def _ms_callee(api: str, method: bool) -> str:
    return f"x.{api.rsplit('.', 1)[1]}" if method else api


def _ms_arg(p: dict[str, Any], value: str, keyword: bool, out: list[str], notes: list[str]) -> None:
    kind, ms = p["kind"], p.get("ms") or p.get("torch")
    if kind == "dropped":
        notes.append(f"# {p['torch']}: dropped (no effect in MindSpore)")
    elif kind == "unsupported":
        notes.append(f"# {p['torch']}: not supported; needs manual work" + (f" ({p['note']})" if p.get("note") else ""))
    elif kind == "transformed":
        out.append(f"{ms}={_value(value, p['transform'])}")
    elif keyword:
        out.append(f"{ms}={value}")
    else:
        out.append(value)
