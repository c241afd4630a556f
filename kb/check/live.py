"""What the installed library really has — run in a subprocess, one per framework.

    python -m kb.check.live mindspore < names.json > report.jsonl

stdin is a JSON list of dotted API names.  stdout gets one JSON object per line:
first ``{"framework", "version"}`` (or ``{"error": "not_installed", ...}``), then one
``{"name", "exists", "kind", "signature", "params", "sig_source", "error"}`` per name,
in input order, flushed as it goes so the parent can show progress.  Signatures
come from ``kb.introspect.describe`` (the snapshot's own reader), so a live entry
and a snapshot entry of the same API are directly comparable.
"""
from __future__ import annotations

import importlib
import inspect
import json
import sys
from typing import Any

MISSING = object()


def resolve(name: str) -> tuple[Any, Any]:
    """(object, owner) for a dotted name, or (MISSING, None).

    Imports the longest importable module prefix, then walks attributes, so
    ``torch.nn.functional.relu``, ``mindspore.Tensor.view`` and
    ``torch.optim.lr_scheduler.StepLR`` all resolve.
    """
    return _resolve(name)[:2]


def _resolve(name: str) -> tuple[Any, Any, str | None]:
    """``resolve`` plus the top-level package outside the framework whose absence stopped an import
    on the way (``tensorboard`` for ``torch.utils.tensorboard.SummaryWriter``), else None."""
    parts = name.split(".")
    obj: Any = MISSING
    used = 0
    missing: str | None = None
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
            used = i
            break
        except ModuleNotFoundError as exc:  # an optional dependency the module imports is not installed
            top = (exc.name or "").split(".")[0]
            if missing is None and top and top != parts[0]:
                missing = top
        except Exception:  # ImportError, or a module that fails to import
            continue
    if obj is MISSING:
        return MISSING, None, missing
    owner = None
    for number, part in enumerate(parts[used:], start=used):
        owner = obj
        try:
            obj = getattr(obj, part)
        except ModuleNotFoundError as exc:  # a lazy attribute that imports an optional dependency
            top = (exc.name or "").split(".")[0]
            return MISSING, None, missing or (top if top and top != parts[0] else None)
        except Exception:
            obj = _instance_attribute(".".join(parts[:number]), owner, part)
            if obj is MISSING:
                return MISSING, None, missing
    return obj, owner, None


# base classes whose instances set attributes in __init__ (``torch.nn.Module._modules``), built without arguments
INSTANCE_OWNERS = ("torch.nn.Module", "mindspore.nn.Cell")


def _instance_attribute(owner_name: str, owner: Any, part: str) -> Any:
    """``part`` of a fresh instance of ``owner`` (one of ``INSTANCE_OWNERS``), or MISSING."""
    if owner_name not in INSTANCE_OWNERS or not isinstance(owner, type):
        return MISSING
    try:
        return getattr(owner(), part)
    except Exception:
        return MISSING


def kind_of(obj: Any, owner: Any) -> str:
    if inspect.isclass(obj):
        return "class"
    if inspect.ismodule(obj):
        return "module"
    if owner is not None and inspect.isclass(owner) and callable(obj):
        return "method"
    if callable(obj):
        return "function"
    return "attribute"


def entry(name: str) -> dict[str, Any]:
    from kb.introspect.describe import describe

    obj, owner, missing = _resolve(name)
    if obj is MISSING:
        return {"name": name, "exists": False, **({"missing_module": missing} if missing else {})}
    kind = kind_of(obj, owner)
    out: dict[str, Any] = {"name": name, "exists": True, "kind": kind}
    try:
        out.update(describe(obj, kind, method=kind == "method"))
    except Exception as exc:  # a describe failure must not lose the existence fact
        out.update({"signature": None, "params": [], "sig_source": "none", "error": f"{type(exc).__name__}: {exc}"})
    if out.get("sig_source") == "docstring":
        leaf = name.rsplit(".", 1)[-1]
        more = overloads(obj, leaf)
        for rows in aten_overloads(name, leaf):
            if rows not in more:
                more.append(rows)
        if len(more) > 1:
            out["overloads"] = more
    return out


def aten_overloads(name: str, leaf: str) -> list[list]:
    """Parameter rows of torch's registered operator schemas (the ground truth docstrings abbreviate).

    ``aten::scatter.reduce(Tensor self, int dim, ..., *, str reduce)`` -> rows with ``self`` named
    ``input`` as the Python binding does; ``out=`` overloads are skipped.
    """
    if not name.startswith("torch.") or (name.count(".") != 1 and not name.startswith("torch.nn.functional.")):
        return []  # torch.X and torch.nn.functional.X are the aten bindings' names (F.one_hot's doc says tensor)
    try:
        import torch

        schemas = torch._C._jit_get_schemas_for_operator(f"aten::{leaf}")
    except Exception:
        return []
    out = []
    for schema in schemas:
        rows, kw = [], False
        args = list(schema.arguments)
        if any(a.name == "out" for a in args):
            continue
        for a in args:
            kw = kw or bool(getattr(a, "kwarg_only", False))
            default = repr(a.default_value) if a.has_default_value() else None
            rows.append(["input" if a.name == "self" else a.name, "KEYWORD_ONLY" if kw else "POSITIONAL_OR_KEYWORD",
                         default])
        out.append(rows)
    return out


def overloads(obj: Any, leaf: str) -> list[list]:
    """Parameter rows of every signature line in a builtin's docstring (torch.max has three; MindSpore
    marks a Tensor method's further overloads ``.. method:: Tensor.argmax(dim=None, keepdim=False)``)."""
    import re

    from kb.introspect.docsig import parse_doc_signature

    doc = getattr(obj, "__doc__", None) or ""
    head = re.compile(rf"^\s*(?:\.\.\s+(?:function|method)::\s+)?(?:\d+\.\s+)?(?:[A-Za-z_]\w*\.)*{re.escape(leaf)}\(")
    out = []
    for line in doc.splitlines():
        if head.match(line):
            rows = parse_doc_signature(line.split("::")[-1].strip())  # ".. method:: Tensor.argmax(dim=None, ...)"
            if rows is not None and rows not in out:
                out.append([r for r in rows if r[0] != "self"])
    return out


def main(argv: list[str]) -> int:
    framework = argv[1]
    names = json.loads(sys.stdin.read() or "[]")
    try:
        lib = importlib.import_module(framework)
    except Exception as exc:
        print(json.dumps({"error": "not_installed", "framework": framework, "detail": f"{type(exc).__name__}: {exc}"}))
        return 0
    print(json.dumps({"framework": framework, "version": str(getattr(lib, "__version__", "?")).split("+")[0]}),
          flush=True)
    for name in names:
        if not name.startswith(framework + ".") and name != framework:
            continue
        print(json.dumps(entry(name), ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
