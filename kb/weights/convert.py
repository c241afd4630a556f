"""``msmap weights``: a torch checkpoint -> a MindSpore ``.ckpt`` (optionally checked against the model)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kb.errors import MsmapError
from kb.weights.checkpoint import load_state
from kb.weights.mapping import WeightMap, map_weights
from kb.weights.output import save
from kb.weights.usercode import build


def ms_params_of(net: Any) -> dict[str, tuple[tuple[int, ...], str]]:
    """MindSpore parameter name -> (shape, dtype name) of a built Cell (the map_weights input)."""
    return {p.name: (tuple(int(d) for d in p.shape), str(p.dtype)) for p in net.get_parameters()}


def ms_buffers_of(net: Any) -> dict[str, tuple[tuple[int, ...], str]]:
    """A built Cell's persistent buffers, name -> (shape, dtype name): what ``Cell.state_dict`` holds beside the
    parameters (a torch buffer kept by ``register_buffer``). A checkpoint of parameters does not carry them, so
    torch's values for them (in its state_dict too) are written with ``fill_buffers``."""
    import mindspore

    try:
        state = net.state_dict() if hasattr(net, "state_dict") else {}
    except Exception:  # noqa: BLE001 - a cell whose state MindSpore cannot list: its parameters are still filled
        return {}
    return {name: (tuple(int(d) for d in t.shape), str(t.dtype)) for name, t in state.items()
            if isinstance(t, mindspore.Tensor) and not isinstance(t, mindspore.Parameter)}


def fill_buffers(net: Any, values: dict[str, np.ndarray]) -> list[str]:
    """Give each persistent buffer of ``net`` (``ms_buffers_of``) its value in ``values``, in the buffer's dtype
    (``assign_value``: the tensor the cell holds changes); the names filled."""
    import mindspore

    filled = []
    for name in ms_buffers_of(net):
        if name in values:
            buffer = net.get_buffer(name)
            buffer.assign_value(mindspore.Tensor(np.asarray(values[name])).astype(buffer.dtype))
            filled.append(name)
    return filled


def build_cell(path: Path, expr: str) -> Any:
    """The user's MindSpore model (stages import/build), checked to be a mindspore.nn.Cell."""
    import mindspore

    net = build(path, expr)
    if not isinstance(net, mindspore.nn.Cell):
        raise MsmapError(f"{path}: build: '{expr}' gave a {type(net).__name__}, not a mindspore.nn.Cell")
    return net


def to_parameters(values: dict[str, np.ndarray], ms_params: dict | None = None) -> dict[str, Any]:
    """name -> mindspore.Parameter in the model's dtype (what save_checkpoint/load_param_into_net take)."""
    import mindspore

    dtypes = {n: getattr(mindspore, d.lower(), None) for n, (_, d) in (ms_params or {}).items()}
    out = {}
    for name, arr in values.items():
        tensor = mindspore.Tensor(arr)
        if dtypes.get(name) is not None and tensor.dtype != dtypes[name]:
            tensor = tensor.astype(dtypes[name])
        out[name] = mindspore.Parameter(tensor, name=name, requires_grad=False)
    return out


def refuse_lossy(wm: WeightMap, source: Path | str) -> None:
    """MsmapError naming every torch key whose values the MindSpore parameter cannot keep (a float64
    1e39 into float32 would become inf, a complex tensor would lose its imaginary part)."""
    if wm.lossy:
        shown = "; ".join(wm.lossy[:5]) + (f"; and {len(wm.lossy) - 5} more" if len(wm.lossy) > 5 else "")
        count = f"{len(wm.lossy)} torch tensor{'s' if len(wm.lossy) > 1 else ''}"
        raise MsmapError(f"{source}: {count} cannot be stored without changing their "
                         f"values, so nothing was written: {shown}")


@dataclass
class WeightsResult:
    checkpoint: str
    out: str
    model: str | None
    notes: list[str]
    wm: WeightMap
    torch_keys: int
    ms_params: int | None
    not_loaded: list[str] | None = field(default=None)  # load_param_into_net's missing list
    family_given: bool = False  # --family named the family (else it was guessed from the names)

    @property
    def exit_code(self) -> int:
        if self.model is not None:
            return 0 if not self.wm.unfilled_ms and not self.not_loaded else 1
        return 0 if not self.wm.ambiguous else 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "checkpoint": self.checkpoint, "out": self.out, "model": self.model, "notes": self.notes,
            "torch_keys": self.torch_keys, "ms_parameters": self.ms_params, "written": len(self.wm.values),
            "not_loaded": self.not_loaded, **self.wm.as_dict(),
        }


def convert(checkpoint: Path, out: Path, model: tuple[Path, str] | None, family: str | None,
            max_expanded: int | None = None) -> WeightsResult:
    state, notes = load_state(checkpoint, max_expanded)
    net = ms_params = None
    if model is not None:
        net = build_cell(*model)
        ms_params = ms_params_of(net)
    wm = map_weights(state, ms_params, family)
    refuse_lossy(wm, checkpoint)
    params = to_parameters(wm.values, ms_params)
    import mindspore

    save(out, lambda path: mindspore.save_checkpoint(list(params.values()), path))
    result = WeightsResult(str(checkpoint), str(out), f"{model[0]}:{model[1]}" if model else None, notes, wm,
                           len(state), len(ms_params) if ms_params is not None else None, family_given=bool(family))
    if net is not None and not params:
        result.not_loaded = sorted(ms_params or {})
    elif net is not None:  # prove the file loads into the model
        loaded = mindspore.load_checkpoint(str(out))
        not_loaded, _ = mindspore.load_param_into_net(net, loaded)
        result.not_loaded = sorted(not_loaded)
    return result


def _some(items: list[str], limit: int = 5) -> str:
    """``a, b, c`` or ``a, b, c, d, e and 7 more (--json lists all)``."""
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more (--json lists all)" if len(items) > limit else "")


def _by_leaf(keys: list[str]) -> str:
    """``49 x num_batches_tracked``: keys dropped by a rule, counted by their last segment."""
    from collections import Counter

    counts = Counter(k.rsplit(".", 1)[-1] for k in keys)
    return ", ".join(f"{n} x {leaf}" if n > 1 else leaf for leaf, n in sorted(counts.items()))


def _kind(label: str, items: list[str], why: str) -> str:
    return f"  {label + ':':<12}{len(items)}" + (f" ({why}): {_some(items)}" if items else "")


def report_text(r: WeightsResult) -> str:
    """One line per kind: loaded, reshaped, missing, unexpected (and dropped, tied, conflicts when there are any)."""
    wm = r.wm
    how = "--family" if r.family_given else "guessed from the parameter names; --family names it"
    head = f"{r.checkpoint}: {r.torch_keys} torch keys"
    head += f" -> {r.ms_params} MindSpore parameters of {r.model}" if r.model else " (rules only: no --model)"
    lines = [head, f"  {'family:':<12}{wm.family} ({how})"]
    lines += [f"  {'note:':<12}{n}" for n in r.notes]
    if r.not_loaded is not None:
        loaded = (r.ms_params or 0) - len(r.not_loaded)
        lines.append(f"  {'loaded:':<12}{loaded} of {r.ms_params} MindSpore parameters "
                     "(load_checkpoint + load_param_into_net)")
    else:
        lines.append(f"  {'loaded:':<12}{len(wm.values)} parameters written (no --model to load them into)")
    lines.append(_kind("reshaped", wm.reshaped, "a size-1 axis added"))
    lines.append(_kind("missing", wm.unfilled_ms, "MindSpore parameters no torch key fills"))
    lines.append(_kind("unexpected", wm.unused_torch, "torch keys with no place in the model"))
    if wm.dropped:
        lines.append(f"  {'dropped:':<12}{len(wm.dropped)} torch keys MindSpore keeps no counterpart of, as expected "
                     f"({_by_leaf(wm.dropped)})")
    if wm.tied:
        lines.append(_kind("tied", [f"{t} = {m}" for t, m in wm.tied], "written once"))
    if wm.conflicts:
        lines.append(_kind("conflicts", wm.conflicts, "shapes that do not fit"))
    if wm.ambiguous:
        lines.append(_kind("ambiguous", wm.ambiguous, "more than one rule fits; pass --model"))
    lines.append(f"wrote {r.out} ({len(wm.values)} parameters)")
    return "\n".join(lines)
