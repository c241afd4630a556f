"""Model outputs as named leaves, and the one comparison of a torch side with a MindSpore side
(framework-free: numpy only).

An output is any nesting of tuples, lists and dicts; each leaf is named by its path
(``output[0]['logits']``), and the two sides are compared by those names, so dict keys match
by key whatever their order, and a key only one side has is a mismatch naming it.  A leaf is a
tensor (an array), a plain value (bool, int, float, complex, str), ``None``, or something else
(``Opaque``: named by its type, never compared as equal).

Arrays agree when they have the same shape and kind, NaN in the same places, infinities of the
same sign in the same places, and every finite pair within ``atol + rtol * |torch|``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Value:
    """A plain Python value a model returned (bool, int, float, complex, str)."""

    value: Any

    @property
    def type(self) -> str:
        return type(self.value).__name__


@dataclass(frozen=True)
class Opaque:
    """A leaf of another type (a custom object): named, never compared as equal."""

    type: str


MISSING = Opaque("<absent>")  # a name only the other side has
PLAIN = (bool, int, float, complex, str)


MAX_DEPTH = 64  # nesting levels followed (a list that holds itself would never end)


def leaves(obj: Any, name: str = "output", depth: int = 0) -> list[tuple[str, Any]]:
    """(name, leaf) for every leaf of nested tuples/lists/dicts, in order (None leaves included)."""
    if isinstance(obj, (dict, tuple, list)) and depth >= MAX_DEPTH:
        return [(name, Opaque(f"{type(obj).__name__} nested more than {MAX_DEPTH} levels deep"))]
    if isinstance(obj, dict):
        return [leaf for k, v in obj.items() for leaf in leaves(v, f"{name}[{k!r}]", depth + 1)]
    if isinstance(obj, (tuple, list)):
        return [leaf for i, v in enumerate(obj) for leaf in leaves(v, f"{name}[{i}]", depth + 1)]
    return [(name, obj)]


# --- transport: a child process writes its outputs as JSON entries and one .npz of arrays -------

def encode(obj: Any, to_array: Callable[[Any], Any]) -> tuple[list[dict[str, Any]], dict[str, np.ndarray]]:
    """(one JSON-able entry per leaf, name -> array of the tensor leaves).  ``to_array`` turns a
    framework tensor into a numpy array and leaves anything else as it is."""
    entries: list[dict[str, Any]] = []
    arrays: dict[str, np.ndarray] = {}
    for name, leaf in leaves(obj):
        if leaf is None:
            entries.append({"name": name, "kind": "none"})
            continue
        if isinstance(leaf, Opaque):
            entries.append({"name": name, "kind": "other", "type": leaf.type})
            continue
        if isinstance(leaf, PLAIN):
            value: Any = [leaf.real, leaf.imag] if isinstance(leaf, complex) else leaf
            entries.append({"name": name, "kind": "value", "type": type(leaf).__name__, "value": value})
            continue
        converted = to_array(leaf)
        if isinstance(converted, (np.ndarray, np.generic)):
            arrays[name] = np.asarray(converted)
            entries.append({"name": name, "kind": "tensor"})
        else:
            entries.append({"name": name, "kind": "other", "type": type(leaf).__qualname__})
    return entries, arrays


def decode(entries: list[dict[str, Any]], arrays: dict[str, np.ndarray]) -> list[tuple[str, Any]]:
    """The (name, leaf) list ``encode`` described: arrays, ``Value``, None or ``Opaque``."""
    out: list[tuple[str, Any]] = []
    for e in entries:
        kind, name = e["kind"], e["name"]
        if kind == "tensor":
            out.append((name, arrays[name]))
        elif kind == "none":
            out.append((name, None))
        elif kind == "value":
            v = e["value"]
            out.append((name, Value(complex(*v) if e["type"] == "complex" else v)))
        else:
            out.append((name, Opaque(e.get("type", "object"))))
    return out


# --- comparison ---------------------------------------------------------------------------------

def kind(a: np.ndarray) -> str:
    return {"f": "float", "c": "complex", "b": "bool", "U": "str", "S": "bytes"}.get(
        a.dtype.kind, "int" if a.dtype.kind in "iu" else a.dtype.kind)


def describe(leaf: Any) -> str:
    if leaf is MISSING:
        return "absent"
    if leaf is None:
        return "None"
    if isinstance(leaf, np.ndarray):
        return f"tensor {tuple(leaf.shape)} {leaf.dtype}"
    if isinstance(leaf, Value):
        return f"{leaf.type} {leaf.value!r}"[:80]
    return f"a {leaf.type}"


def _row(name: str, t: Any, m: Any) -> dict[str, Any]:
    arr_t, arr_m = isinstance(t, np.ndarray), isinstance(m, np.ndarray)
    return {
        "name": name, "torch": describe(t), "ms": describe(m),
        "torch_shape": list(t.shape) if arr_t else None, "ms_shape": list(m.shape) if arr_m else None,
        "torch_dtype": str(t.dtype) if arr_t else None, "ms_dtype": str(m.dtype) if arr_m else None,
        "max_abs": None, "max_rel": None,
    }


def _at(index: tuple[int, ...]) -> str:
    return f" at {index}" if index else ""


def compare_arrays(name: str, t: np.ndarray, m: np.ndarray, rtol: float, atol: float) -> dict[str, Any]:
    row = _row(name, t, m)
    if t.shape != m.shape:
        return {**row, "ok": False, "why": f"shape {tuple(m.shape)} != torch {tuple(t.shape)}"}
    if kind(t) != kind(m):
        return {**row, "ok": False, "why": f"dtype {kind(m)} ({m.dtype}) != torch {kind(t)} ({t.dtype})"}
    if t.size == 0:
        return {**row, "ok": True, "max_abs": 0.0, "max_rel": 0.0}
    if kind(t) not in ("float", "complex", "int", "bool"):  # str, bytes, objects: equal or not
        ok = bool(np.array_equal(t, m))
        return {**row, "ok": ok, **({} if ok else {"why": "values differ"})}
    if kind(t) in ("int", "bool") and np.array_equal(t, m):  # exact (float64 would round big ints)
        return {**row, "ok": True, "max_abs": 0.0, "max_rel": 0.0}
    wide = np.complex128 if kind(t) == "complex" else np.float64
    tf, mf = t.astype(wide), m.astype(wide)
    finite = np.isfinite(tf) & np.isfinite(mf)
    with np.errstate(invalid="ignore", over="ignore"):
        # where either side is inf or NaN, only the same inf or NaN on both sides agrees
        same_special = (tf == mf) | (np.isnan(tf) & np.isnan(mf))
        diff = np.where(finite, np.abs(tf - mf), 0.0)
        scale = np.where(finite, np.abs(tf), 0.0)
        excess = np.where(finite, diff - (atol + rtol * scale), np.where(same_special, -1.0, np.inf))
    row["max_abs"] = float(diff.max())
    row["max_rel"] = float((diff / np.maximum(scale, 1e-12)).max())
    bad = excess > 0
    if not bad.any():
        return {**row, "ok": True}
    worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(excess)), t.shape))
    specials = int((~finite & ~same_special).sum())
    why = (f"values differ: max abs {row['max_abs']:.3g}, max rel {row['max_rel']:.3g} "
           f"({_num(mf[worst])} vs torch {_num(tf[worst])}{_at(worst)})")
    if specials:
        why += f"; {specials} place{'s' if specials > 1 else ''} where only one side is inf/NaN or the signs differ"
    return {**row, "ok": False, "why": why}


def _num(x: Any) -> str:
    return f"{x:.6g}" if not isinstance(x, complex | np.complexfloating) else f"{complex(x):.6g}"


def compare_leaf(name: str, t: Any, m: Any, rtol: float, atol: float) -> dict[str, Any]:
    """One row: whether the torch leaf ``t`` and the MindSpore leaf ``m`` agree, and why not."""
    row = _row(name, t, m)
    if t is MISSING or m is MISSING:
        side = "MindSpore" if m is MISSING else "torch"
        return {**row, "ok": False, "why": f"only {'torch' if side == 'MindSpore' else 'MindSpore'} has this output "
                                           f"({describe(m if t is MISSING else t)}); {side} has none"}
    if isinstance(t, np.ndarray) and isinstance(m, np.ndarray):
        return compare_arrays(name, t, m, rtol, atol)
    if t is None and m is None:
        return {**row, "ok": True, "note": "None on both sides"}
    if isinstance(t, Value) and isinstance(m, Value):
        if t.type != m.type:
            return {**row, "ok": False, "why": f"{m.type} != torch {t.type}"}
        if isinstance(t.value, (int, float, complex)) and not isinstance(t.value, bool):
            numeric = compare_arrays(name, np.asarray(t.value), np.asarray(m.value), rtol, atol)
            return {**row, "ok": numeric["ok"], "max_abs": numeric["max_abs"], "max_rel": numeric["max_rel"],
                    **({"why": f"{m.value!r} vs torch {t.value!r}"} if not numeric["ok"] else {})}
        ok = t.value == m.value
        return {**row, "ok": ok, **({} if ok else {"why": f"{m.value!r}"[:60] + f" vs torch {t.value!r}"[:70]})}
    if isinstance(t, Opaque) and isinstance(m, Opaque):
        return {**row, "ok": False, "error": True,
                "why": f"cannot compare outputs of type {t.type} (torch) and {m.type} (MindSpore): "
                       "return tensors, numbers, strings or tuples/lists/dicts of them"}
    return {**row, "ok": False, "why": f"{describe(m)} != torch {describe(t)}"}


def compare_outputs(torch_outs: list[tuple[str, Any]], ms_outs: list[tuple[str, Any]], rtol: float, atol: float
                    ) -> tuple[list[dict[str, Any]], str | None]:
    """One row per output name of either side (torch's order, then MindSpore-only names); and the
    problem: every failing output named, or None when all agree."""
    mine = dict(ms_outs)
    theirs = dict(torch_outs)
    names = [n for n, _ in torch_outs] + [n for n, _ in ms_outs if n not in theirs]
    rows = [compare_leaf(n, theirs.get(n, MISSING), mine.get(n, MISSING), rtol, atol) for n in names]
    bad = [r for r in rows if not r["ok"]]
    if not bad:
        return rows, None
    shown = "; ".join(f"{r['name']}: {r['why']}" for r in bad[:3])
    return rows, shown + (f"; and {len(bad) - 3} more outputs differ" if len(bad) > 3 else "")


def compared_nothing(rows: list[dict[str, Any]]) -> bool:
    """Whether no row compared a tensor or a value (every output was None on both sides)."""
    return all(r.get("note") == "None on both sides" for r in rows)

