"""Flatten model outputs to named arrays and compare them (framework-free: numpy only)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def leaves(obj: Any, name: str = "output") -> list[tuple[str, Any]]:
    """(name, leaf) for every leaf of nested tuples/lists/dicts, in order (None leaves included)."""
    if isinstance(obj, dict):
        return [leaf for k, v in obj.items() for leaf in leaves(v, f"{name}[{k!r}]")]
    if isinstance(obj, (tuple, list)):
        return [leaf for i, v in enumerate(obj) for leaf in leaves(v, f"{name}[{i}]")]
    return [(name, obj)]


def flatten(obj: Any, to_array: Callable[[Any], Any]) -> list[tuple[str, Any]]:
    """(name, array | None) for every leaf of a model's output."""
    return [(n, None if v is None else np.asarray(to_array(v))) for n, v in leaves(obj)]


def kind(a: np.ndarray) -> str:
    return {"f": "float", "c": "complex", "b": "bool"}.get(a.dtype.kind,
                                                           "int" if a.dtype.kind in "iu" else a.dtype.kind)


def compare_arrays(name: str, t: np.ndarray, m: np.ndarray, rtol: float, atol: float) -> dict[str, Any]:
    row: dict[str, Any] = {
        "name": name, "torch_shape": list(t.shape), "ms_shape": list(m.shape),
        "torch_dtype": str(t.dtype), "ms_dtype": str(m.dtype), "max_abs": None, "max_rel": None,
    }
    if t.shape != m.shape:
        return {**row, "ok": False, "why": f"shape {tuple(m.shape)} != torch {tuple(t.shape)}"}
    if kind(t) != kind(m):
        return {**row, "ok": False, "why": f"dtype {kind(m)} ({m.dtype}) != torch {kind(t)} ({t.dtype})"}
    if t.size == 0:
        return {**row, "ok": True, "max_abs": 0.0, "max_rel": 0.0}
    tf, mf = t.astype(np.float64), m.astype(np.float64)
    diff = np.abs(tf - mf)
    nan_same = np.isnan(tf) == np.isnan(mf)
    diff = np.where(np.isnan(tf) & np.isnan(mf), 0.0, diff)
    row["max_abs"] = float(np.nanmax(diff)) if diff.size else 0.0
    row["max_rel"] = float(np.nanmax(diff / np.maximum(np.abs(tf), 1e-12)))
    ok = bool(nan_same.all() and np.all(diff <= atol + rtol * np.abs(tf)))
    if not ok:
        worst = np.unravel_index(int(np.nanargmax(np.where(nan_same, diff, np.inf))), t.shape)
        row["why"] = (f"values differ: max abs {row['max_abs']:.3g}, max rel {row['max_rel']:.3g} "
                      f"(at {tuple(int(i) for i in worst)}: {mf[worst]:.6g} vs torch {tf[worst]:.6g})")
    return {**row, "ok": ok}


def compare_outputs(torch_outs: list[tuple[str, Any]], ms_outs: list[tuple[str, Any]], rtol: float, atol: float
                    ) -> tuple[list[dict[str, Any]], str | None]:
    """Rows for every non-None output, by position; and the first problem, if any."""
    t = [(n, a) for n, a in torch_outs if a is not None]
    m = [(n, a) for n, a in ms_outs if a is not None]
    rows = [compare_arrays(tn, ta, ma, rtol, atol) for (tn, ta), (_, ma) in zip(t, m, strict=False)]
    if len(t) != len(m):
        return rows, f"torch gave {len(t)} tensor outputs, MindSpore {len(m)}"
    bad = next((r for r in rows if not r["ok"]), None)
    return rows, (f"{bad['name']}: {bad['why']}" if bad else None)
