"""Parameter values a rewrite is proven for (light: imported by the engine at convert time).

A rewrite probe (``kb.probes.rewrites``) calls each target with every literal parameter at its
default and at other values torch accepts (``alternatives``); the record keeps, per parameter,
the *classes* of the values whose emitted rewrite ran and matched torch, and of those that did
not. Convert reads a call's literal argument, takes its class (``value_class``) and rewrites the
call automatically only when that class is proven for the parameter (``value_verdict``).

A class groups values a rewrite treats alike: a bool or a string is its own class; a number is
0, 1, -1, a fraction, > 1 or < -1 (``stride=1`` and ``stride=2`` differ, ``kernel_size=3`` and
``5`` do not); a tuple is the classes of its items.
"""
from __future__ import annotations

import ast
from typing import Any

# Other values torch accepts, tried next to the default (torch itself filters out what it refuses).
STR_DOMAINS = {
    "reduction": ["sum", "none", "mean", "batchmean"],
    "mode": ["bilinear", "bicubic", "linear", "nearest", "area", "reflect", "replicate", "constant", "circular",
             "fan_out", "fan_in", "sum", "max", "mean"],
    "padding_mode": ["zeros", "reflect", "replicate", "circular"],
    "nonlinearity": ["tanh", "relu"],
    "approximate": ["tanh", "none"],
    "norm": ["ortho", "forward", "backward"],
    "rounding_mode": ["floor", "trunc"],
    "padding": ["same", "valid"],
    "side": ["left", "right"],
    "interpolation": ["linear", "lower", "higher", "midpoint", "nearest"],
    "indexing": ["ij", "xy"],
    "ord": ["fro", "nuc"],
    "UPLO": ["L", "U"],
}
# Values for parameters whose default is None (a user who passes one writes a value like these).
NONE_VALUES: dict[str, list[Any]] = {
    "dim": [1, -1, 0], "min": [-0.5, 0.0, 0], "max": [0.5, 1.0, 6], "scale_factor": [2.0, 2], "k": [2],
    "size": [[4], 4], "num_classes": [3, 4], "align_corners": [True, False], "keepdim": [True],
    "stride": [1, 2], "diagonal": [1], "weight": [], "ignore_index": [1], "eps": [1e-6], "value": [1.0],
    "start_dim": [1], "end_dim": [-1], "p": [1.0], "correction": [0, 1], "unbiased": [False],
    "padding_idx": [0, 1], "max_norm": [1.0], "output_size": [2],
}
# Rewrite-probe rows for targets a generated call cannot exercise (kb.probes.rewrites._unprobed_reason
# and _skip_word): not tensor computations, names that are not calls, stateful APIs. Their rewrites
# stay automatic and ``msmap stats`` counts them apart ("not call-probed").
NOT_CALL_PROBED = ("not a tensor computation", "a dtype, not a call", "a attribute, not a call",
                   "a module, not a call", "a constant, not a call", "a None, not a call", "a name, not a call",
                   "random, stateful or not a computation",
                   "torch fails on the generated call: not deterministic")  # (torch.empty: values not defined)
DIM_NAMES = {"dim", "axis", "dim0", "dim1", "start_dim", "end_dim", "diagonal", "offset", "shifts", "k", "dims",
             "source", "destination", "axis0", "axis1", "dimension"}
# Parameters whose value is a position among a tensor's dimensions (not an amount: shifts, k, diagonal).
AXIS_NAMES = {"dim", "axis", "dim0", "dim1", "start_dim", "end_dim", "dims", "source", "destination", "axis0",
              "axis1", "dimension"}
EPS_NAMES = {"eps", "epsilon", "rtol", "atol", "tol"}


def literal_value(text: str | None) -> tuple[bool, Any]:
    """(is a literal, its value) of a default or argument written as text."""
    if text is None:
        return False, None
    try:
        return True, ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None


def _number(v: float) -> str:
    if v == 0:
        return "0"
    if v == 1:
        return "1"
    if v == -1:
        return "-1"
    if 0 < v < 1:
        return "frac"
    if -1 < v < 0:
        return "-frac"
    return "+" if v > 0 else "-"


def value_class(v: Any) -> str:
    """The class of a literal value (see the module docstring)."""
    if v is None:
        return "none"
    if isinstance(v, bool):
        return f"bool:{v}"
    if isinstance(v, (int, float)):
        return f"num:{_number(float(v))}"
    if isinstance(v, str):
        return f"str:{v}"
    if isinstance(v, (tuple, list)):
        return "seq:(" + ",".join(value_class(x) for x in v) + ")"
    return f"other:{v!r}"


def alternatives(name: str, default: Any, has_default: bool = True) -> list[Any]:
    """Values other than ``default`` to try for parameter ``name`` (torch filters what it refuses)."""
    if not has_default or default is None:
        return list(NONE_VALUES.get(name, []))
    if isinstance(default, bool):
        return [not default]
    if isinstance(default, str):
        return [v for v in STR_DOMAINS.get(name, []) if v != default]
    if isinstance(default, int):
        pool = [0, -1, 1, 2] if name in DIM_NAMES else [0, 1, 2, -1]
        return [v for v in pool if v != default]
    if isinstance(default, float):
        if name in EPS_NAMES:
            return [1e-3, 0.1]
        if default == 0.0:
            return [0.5, 1.0, -0.5]
        # nearby values first (a user's value is most often of the default's sign and size), then the rest
        return [v for v in (default * 2, default / 2, -default, 0.0, 1.0, -1.0) if v != default]
    if isinstance(default, (tuple, list)) and default and all(isinstance(x, int) and not isinstance(x, bool)
                                                              for x in default):
        return [type(default)(x + 1 for x in default)]
    return []


def _item_class(value: Any) -> str | None:
    """The one class every item of a tuple or list literal has (``(2, 2)``: ``num:+``), else None."""
    if isinstance(value, (tuple, list)) and value:
        classes = {value_class(x) for x in value}
        if len(classes) == 1:
            return classes.pop()
    return None


def value_verdict(values: dict[str, Any] | None, param: str, text: str,
                  failures: list[str] | None = None) -> str | None:
    """Why the argument ``param=text`` is not proven for a rewrite, or None when it is.

    ``values`` is the proof's per-parameter record ``{param: {"proven": [classes], "failed":
    [classes]}}``. A parameter the record does not list was not varied (a tensor, a torch-only
    parameter): nothing to check. A value that is not a literal is accepted when no probed value of
    that parameter failed, or when each one that failed crashed (``failures``, the proof's
    ``value_failures`` lines ``"p=1.0: crash: ..."``): then the emitted code either matches torch or
    raises where it runs, never a silent difference."""
    if not values or param not in values:
        return None
    entry = values[param]
    failed, proven = entry.get("failed") or [], entry.get("proven") or []
    is_literal, value = literal_value(text)
    if not is_literal:
        if failed and not only_crashes(failures or [], param):
            return (f"unproven value: {param}={text} (not a literal, and the rewrite differs from torch for "
                    f"some values of {param})")
        return None
    cls = value_class(value)
    same = _item_class(value)  # (2, 2) is proven where 2 is
    if cls in failed or same in failed:
        return f"rewrite differs from torch at {param}={text} (rewrite probe)"
    if cls not in proven and (same is None or same not in proven) and not _same_axis(param, cls, proven, failed):
        return f"unproven value: {param}={text} (no rewrite probe ran this value)"
    return None


def axis_class(cls: str) -> str | None:
    """The kind of axis a value class of an axis parameter names: a position counted from the front
    (``dim=0``, ``1``, ``2`` ...) or from the back (``-1``, ``-2`` ...); a list of axes, the kinds it holds
    (a permutation of four axes is proven where one of three is). None for a value that is not an axis."""
    if cls in ("num:0", "num:1", "num:+"):
        return "axis:front"
    if cls in ("num:-1", "num:-"):
        return "axis:back"
    if cls.startswith("seq:(") and cls.endswith(")"):
        items = [axis_class(c) for c in cls[5:-1].split(",")] if cls != "seq:()" else []
        if items and all(items):
            return "axes:" + "+".join(sorted(set(map(str, items))))
    return None


def _same_axis(param: str, cls: str, proven: list[str], failed: list[str]) -> bool:
    """An axis argument (``dim=2``) whose kind of axis (``axis_class``) a probe proved at another position
    (``dim=1``) and never saw fail: an op treats every axis of a kind alike, whatever the tensor's rank."""
    if param not in AXIS_NAMES:
        return False
    kind = axis_class(cls)
    return kind is not None and kind in {axis_class(c) for c in proven} \
        and kind not in {axis_class(c) for c in failed}


def only_crashes(failures: list[str], param: str) -> bool:
    """Whether every failed value of ``param`` in a proof's ``value_failures`` lines raised (``crash``)
    rather than returned something other than torch (``wrong``)."""
    mine = [line.split(": ", 2) for line in failures if line.startswith(f"{param}=")]
    return bool(mine) and all(len(parts) > 1 and parts[1] == "crash" for parts in mine)


def combo_key(values: dict[str, str]) -> str:
    """One call's literal arguments by class, as a key: ``dim=num:1;keepdim=bool:True`` (sorted by parameter);
    a proof's ``combos`` lists those of the curated call forms that ran and matched torch."""
    return ";".join(f"{param}={cls}" for param, cls in sorted(values.items()))


def not_call_probed(proof: dict[str, Any] | None) -> bool:
    """Whether a rewrite-probe row says no generated call can exercise its target (``NOT_CALL_PROBED``)."""
    return proof is not None and proof.get("result") == "unprobed" and \
        str(proof.get("detail") or "").startswith(NOT_CALL_PROBED)
