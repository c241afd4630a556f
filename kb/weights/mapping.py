"""torch state_dict keys -> MindSpore parameter names, by the knowledge base's weight rules.

With the MindSpore model's parameters known (``ms_params``), every MindSpore name is traced back
to the torch keys the rules could have produced it from, and the first one present with a fitting
shape fills it.  Without them, each torch layer is recognised from its keys (``detect``) and renamed;
a layer two rules recognise with different results is reported as ambiguous and left unrenamed.

No torch or mindspore import here: arrays are numpy, rules are plain dicts.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import product
from typing import Any

import numpy as np

# MindSpore dtype names (str(Parameter.dtype)) numpy can hold; others keep the torch array's dtype.
_NP_DTYPES = {
    "Float16": np.float16, "Float32": np.float32, "Float64": np.float64, "Int8": np.int8,
    "Int16": np.int16, "Int32": np.int32, "Int64": np.int64, "UInt8": np.uint8, "Bool": np.bool_,
}
# the range a MindSpore dtype numpy lacks is checked as this one's (bfloat16 has float32's exponent)
_RANGE_OF = {"BFloat16": np.float32}
NO_COMPLEX = "complex values: a MindSpore checkpoint cannot hold them (load_checkpoint refuses Complex64)"
_CLASSIC_LEAVES = frozenset({"gamma", "beta", "moving_mean", "moving_variance", "embedding_table", "w"})


@dataclass
class WeightMap:
    family: str
    values: dict[str, np.ndarray] = field(default_factory=dict)  # MindSpore name -> array
    matched: list[tuple[str, str]] = field(default_factory=list)  # (torch key, MindSpore name)
    unused_torch: list[str] = field(default_factory=list)
    unfilled_ms: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    ambiguous: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # torch keys a rule says MindSpore has no place for
    tied: list[tuple[str, str]] = field(default_factory=list)  # torch key equal to one already written
    reshaped: list[str] = field(default_factory=list)  # MindSpore names given an extra size-1 axis
    lossy: list[str] = field(default_factory=list)  # "torch key -> name: why": its values cannot be kept

    def as_dict(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "matched": [list(p) for p in self.matched],
            "unused_torch": self.unused_torch,
            "unfilled_ms": self.unfilled_ms,
            "conflicts": self.conflicts,
            "ambiguous": self.ambiguous,
            "dropped": self.dropped,
            "tied": [list(p) for p in self.tied],
            "reshaped": self.reshaped,
            "lossy": self.lossy,
        }


@lru_cache(maxsize=1)
def _kb_rules() -> tuple[dict, ...]:
    from kb.query import KB

    return tuple(KB.open().weight_rules())


def load_rules() -> list[dict]:
    """The weight rules from the knowledge base (built from data/curated/weights.yaml if stale)."""
    rules = list(_kb_rules())
    if not rules:
        from kb.errors import DatabaseError

        raise DatabaseError("the knowledge base has no weight rules (data/curated/weights.yaml); run 'msmap build'")
    return rules


def map_weights(
    torch_state: dict[str, np.ndarray],
    ms_params: dict[str, tuple[tuple[int, ...], str]] | None = None,
    family: str | None = None,
    rules: Iterable[dict] | None = None,
) -> WeightMap:
    """Map a torch state_dict (as numpy) onto MindSpore parameter names (see INTERFACES.md)."""
    rule_list = list(rules) if rules is not None else load_rules()
    state = {k: np.asarray(v) for k, v in torch_state.items()}
    if ms_params is None:
        return _by_rules(state, rule_list, family or "classic")
    fam = family or ("classic" if any(n.rsplit(".", 1)[-1] in _CLASSIC_LEAVES for n in ms_params) else "mint")
    return _by_model(state, ms_params, rule_list, fam)


# --- with the MindSpore model's parameters ----------------------------------------------------

def _split(name: str) -> tuple[str, str]:
    prefix, _, leaf = name.rpartition(".")
    return prefix, leaf


def _join(prefix: str, leaf: str) -> str:
    return f"{prefix}.{leaf}" if prefix else leaf


def _segment_variants(ms_name: str, rules: list[dict]) -> list[str]:
    """``ms_name`` with MindSpore sub-module names turned back into torch's (dense1 -> linear1)."""
    back: dict[str, list[str]] = {}
    for r in rules:
        for t, m in r.get("segments", {}).items():
            back.setdefault(m, []).append(t)
    parts = ms_name.split(".")
    options = [[p] + back.get(p, []) for p in parts[:-1]]
    if all(len(o) == 1 for o in options):
        return [ms_name]
    return [".".join([*combo, parts[-1]]) for combo in product(*options)]


def _candidates(ms_name: str, rules: list[dict]) -> Iterator[tuple[str, dict | None]]:
    """torch keys the rules could have turned into ``ms_name``; the unchanged name first."""
    for name in _segment_variants(ms_name, rules):
        yield name, None
        prefix, leaf = _split(name)
        for r in rules:
            for t_leaf, m_leaf in r.get("names", {}).items():
                if m_leaf != leaf:
                    continue
                yield _join(prefix, t_leaf), r
                inner = ".".join(r.get("inner", []))
                if inner and (prefix == inner or prefix.endswith("." + inner)):
                    yield _join(prefix[: -len(inner)].rstrip("."), t_leaf), r


def _squeezed(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(d for d in shape if d != 1)


def _fit(arr: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    """``arr`` in ``shape`` when only size-1 axes differ (same data order), else None."""
    if tuple(arr.shape) == tuple(shape):
        return arr
    if arr.size == int(np.prod(shape, dtype=np.int64)) and _squeezed(arr.shape) == _squeezed(shape):
        return arr.reshape(shape)
    return None


def _cast(arr: np.ndarray, dtype: str) -> tuple[np.ndarray, str | None]:
    """``arr`` in the MindSpore dtype ``dtype``, and why that loses values (None: it does not)."""
    if arr.dtype.kind == "c":
        return arr, NO_COMPLEX
    target = _NP_DTYPES.get(dtype)
    lost = _loses_values(arr, _RANGE_OF.get(dtype, target), dtype)
    if target is None:
        return arr, lost
    with np.errstate(over="ignore", invalid="ignore"):  # (a lossy cast is reported, never written)
        return arr.astype(target, copy=False), lost


def _loses_values(arr: np.ndarray, target: Any, dtype: str) -> str | None:
    if target is None or arr.size == 0 or np.dtype(target) == arr.dtype:
        return None
    to = np.dtype(target)
    if to.kind == "f" and arr.dtype.kind == "f":
        finite = np.isfinite(arr)
        big = float(np.abs(arr[finite]).max()) if finite.any() else 0.0
        if big > float(np.finfo(to).max):
            return f"values up to {big:.3g} exceed {dtype}'s range (largest {float(np.finfo(to).max):.3g})"
    elif to.kind in "iu" and arr.dtype.kind in "iub":
        info = np.iinfo(to)
        low, high = int(arr.min()), int(arr.max())
        if low < info.min or high > info.max:
            return f"values from {low} to {high} do not fit in {dtype}"
    elif to.kind in "iub" and arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or not np.array_equal(arr, np.trunc(arr)):
            return f"fractional or non-finite values into a {dtype} parameter"
    return None


def _by_model(state: dict[str, np.ndarray], ms_params: dict, rules: list[dict], family: str) -> WeightMap:
    wm = WeightMap(family=family)
    used: dict[str, str] = {}
    for ms_name, (shape, dtype) in ms_params.items():
        shape = tuple(int(d) for d in shape)
        fits: list[str] = []
        misfits: list[str] = []
        for key, _rule in _candidates(ms_name, rules):
            if key not in state or key in fits or key in misfits:
                continue
            (fits if _fit(state[key], shape) is not None else misfits).append(key)
        if not fits:
            wm.unfilled_ms.append(ms_name)
            for key in misfits:
                wm.conflicts.append(
                    f"{key} {tuple(state[key].shape)} -> {ms_name} {shape}: shapes differ"
                )
            continue
        key = fits[0]
        if len(fits) > 1:
            wm.ambiguous.append(f"{ms_name}: torch keys {', '.join(fits)} all fit; took {key}")
        arr = _fit(state[key], shape)
        assert arr is not None
        if tuple(arr.shape) != tuple(state[key].shape):
            wm.reshaped.append(ms_name)
        wm.values[ms_name], lost = _cast(arr, dtype)
        if lost:
            wm.lossy.append(f"{key} -> {ms_name}: {lost}")
        wm.matched.append((key, ms_name))
        used.setdefault(key, ms_name)
    _sort_leftovers(state, used, rules, wm)
    return wm


def _dropped_leaf(key: str, state: dict[str, np.ndarray], rules: list[dict]) -> bool:
    prefix, leaf = _split(key)
    for r in rules:
        dropped = leaf in r.get("names", {}) and r["names"][leaf] is None
        if dropped and all(_join(prefix, h) in state for h in r["detect"]["has"]):
            return True
    return False


def _same_values(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape or a.size < 2 or a.dtype.kind not in "fc":
        return False
    if np.all(a == a.flat[0]):  # a constant array (zeros, ones) says nothing about a tie
        return False
    return bool(np.array_equal(a, b))


def _sort_leftovers(state: dict[str, np.ndarray], used: dict[str, str], rules: list[dict], wm: WeightMap) -> None:
    for key, arr in state.items():
        if key in used:
            continue
        if _dropped_leaf(key, state, rules):
            wm.dropped.append(key)
            continue
        twin = next((k for k in used if _same_values(arr, state[k])), None)
        if twin is not None:
            wm.tied.append((key, used[twin]))
        else:
            wm.unused_torch.append(key)


# --- rules alone ----------------------------------------------------------------------------

def _detects(rule: dict, prefix: str, state: dict[str, np.ndarray]) -> bool:
    det = rule["detect"]
    if not all(_join(prefix, h) in state for h in det["has"]):
        return False
    if any(_join(prefix, h) in state for h in det.get("lacks", [])):
        return False
    ndim = det.get("weight_ndim")
    if ndim is not None:
        w = state.get(_join(prefix, "weight"))
        if w is None or w.ndim != ndim:
            return False
    return True


def _by_rules(state: dict[str, np.ndarray], rules: list[dict], family: str) -> WeightMap:
    wm = WeightMap(family=family)
    # Structural rules (an inner cell) need the model to be told apart: rules alone skip them.
    mine = [r for r in rules if r["family"] == family and not r.get("inner")]
    renamed = {k: k for k in state}
    prefixes = sorted({_split(k)[0] for k in state} | {p for k in state for p in _ancestors(k)})
    for r in (r for r in mine if r.get("segments")):
        for prefix in prefixes:
            if _detects(r, prefix, state):
                for t, m in r["segments"].items():
                    head = _join(prefix, t) + "."
                    for k in state:
                        if k.startswith(head):
                            renamed[k] = renamed[k].replace(head, _join(prefix, m) + ".", 1)
    axis: dict[str, int] = {}
    for prefix in sorted({_split(k)[0] for k in state}):
        leaves = [k for k in state if _split(k)[0] == prefix]
        outcomes: dict[tuple, list[dict]] = {}
        for r in mine:
            if r.get("names") and _detects(r, prefix, state):
                out = tuple(r["names"].get(_split(k)[1], _split(k)[1]) for k in leaves)
                outcomes.setdefault((out, r.get("insert_axis")), []).append(r)
        if len(outcomes) > 1:
            layers = sorted({r["layer"] for rs in outcomes.values() for r in rs})
            wm.ambiguous.append(f"{prefix or '(top level)'}: could be {' or '.join(layers)}; torch names kept")
            continue
        if not outcomes:
            continue
        (out, ins), = outcomes
        for k, leaf in zip(leaves, out, strict=True):
            if leaf is None:
                renamed[k] = ""
                continue
            renamed[k] = _join(_split(renamed[k])[0], leaf)
            if ins is not None and _split(k)[1] == "weight":
                axis[k] = ins
    for k, arr in state.items():
        name = renamed[k]
        if not name:
            wm.dropped.append(k)
            continue
        if k in axis:
            arr = np.expand_dims(arr, axis[k])
            wm.reshaped.append(name)
        if name in wm.values:
            wm.conflicts.append(f"{k} -> {name}: name already written")
            continue
        wm.values[name] = arr
        wm.matched.append((k, name))
        if arr.dtype.kind == "c":
            wm.lossy.append(f"{k} -> {name}: {NO_COMPLEX}")
    return wm


def _ancestors(key: str) -> Iterator[str]:
    parts = key.split(".")
    for i in range(len(parts) - 1):
        yield ".".join(parts[:i])
