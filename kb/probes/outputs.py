"""Turn framework outputs into plain numpy values and compare them (used inside the worker)."""
from __future__ import annotations

from typing import Any

import numpy as np


def to_plain(x: Any) -> Any:
    """torch / MindSpore tensors, tuples, dicts and scalars -> numpy arrays, lists, dicts."""
    if isinstance(x, dict):
        return {k: to_plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [to_plain(v) for v in x]
    if isinstance(x, np.ndarray) or np.isscalar(x) or x is None:
        return x
    mod = type(x).__module__ or ""
    if mod.startswith("torch"):
        if hasattr(x, "detach"):
            x = x.detach().cpu()
            if str(x.dtype) == "torch.bfloat16":
                x = x.float()
            return x.numpy()
        return str(x)
    if hasattr(x, "asnumpy"):
        return x.asnumpy()
    if mod.startswith("mindspore"):
        return str(x)
    return x


def _dtype(a: np.ndarray) -> str:
    return str(a.dtype)


def compare(t: Any, m: Any, rtol: float = 1e-4, atol: float = 1e-5, path: str = "out") -> tuple[bool, str, float]:
    """(same?, first difference or '', max absolute difference over numeric leaves)."""
    if isinstance(t, dict) and isinstance(m, dict):
        if set(t) != set(m):
            return False, f"{path}: keys {sorted(t)} vs {sorted(m)}", 0.0
        worst, detail, same = 0.0, "", True
        for k in sorted(t):
            s, d, w = compare(t[k], m[k], rtol, atol, f"{path}[{k!r}]")
            worst = max(worst, w)
            if not s and same:
                same, detail = False, d
        return same, detail, worst
    if isinstance(t, list) and isinstance(m, list):
        if len(t) != len(m):
            return False, f"{path}: {len(t)} outputs (torch) vs {len(m)} (mindspore)", 0.0
        worst, detail, same = 0.0, "", True
        for i, (a, b) in enumerate(zip(t, m, strict=True)):
            s, d, w = compare(a, b, rtol, atol, f"{path}[{i}]")
            worst = max(worst, w)
            if not s and same:
                same, detail = False, d
        return same, detail, worst
    if isinstance(t, list) != isinstance(m, list):
        return False, f"{path}: {type(t).__name__} (torch) vs {type(m).__name__} (mindspore)", 0.0
    a, b = np.asarray(t), np.asarray(m)
    if a.dtype.kind in "OUS" or b.dtype.kind in "OUS":
        same = bool(np.all(a == b)) if a.shape == b.shape else False
        return same, "" if same else f"{path}: {t!r} vs {m!r}", 0.0
    if a.shape != b.shape:
        return False, f"{path}: shape {a.shape} (torch) vs {b.shape} (mindspore)", 0.0
    # complex outputs compare as complex (a cast to float64 would drop the imaginary part)
    wide = np.complex128 if a.dtype.kind == "c" or b.dtype.kind == "c" else np.float64
    wa, wb = a.astype(wide), b.astype(wide)
    worst = 0.0
    if a.size:
        diff = np.abs(wa - wb)
        diff = diff[~(np.isnan(wa) & np.isnan(wb))]
        worst = float(np.nanmax(diff)) if diff.size else 0.0
        if np.isnan(worst):
            worst = float("inf")
    if a.size and a.dtype.kind in "fc" or b.size and b.dtype.kind in "fc":
        na, nb = np.isnan(wa), np.isnan(wb)
        if (na != nb).any():
            return False, (f"{path}: NaN at {int((na & ~nb).sum())} place(s) only in torch, "
                           f"{int((nb & ~na).sum())} only in mindspore"), worst
    close = a.size == 0 or bool(np.allclose(wa, wb, rtol=rtol, atol=atol, equal_nan=True))
    if not close:
        return False, f"{path}: values differ (max abs diff {worst:.3g})", worst
    if _dtype(a) != _dtype(b) and not (a.dtype.kind == b.dtype.kind == "b"):
        return False, f"{path}: values equal but dtype {_dtype(a)} (torch) vs {_dtype(b)} (mindspore)", worst
    return True, "", worst
