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
                           len(state), len(ms_params) if ms_params is not None else None)
    if net is not None and not params:
        result.not_loaded = sorted(ms_params or {})
    elif net is not None:  # prove the file loads into the model
        loaded = mindspore.load_checkpoint(str(out))
        not_loaded, _ = mindspore.load_param_into_net(net, loaded)
        result.not_loaded = sorted(not_loaded)
    return result


def _lines(title: str, items: list[str], limit: int = 20) -> list[str]:
    if not items:
        return []
    shown = [f"  {title} ({len(items)}):"] + [f"    {i}" for i in items[:limit]]
    if len(items) > limit:
        shown.append(f"    ... and {len(items) - limit} more (--json lists all)")
    return shown


def report_text(r: WeightsResult) -> str:
    wm = r.wm
    head = f"{r.checkpoint}: {r.torch_keys} torch keys"
    head += f" -> {r.ms_params} MindSpore parameters of {r.model}" if r.model else " (rules only: no --model)"
    counts = (f"  family {wm.family}; matched {len(wm.matched)}, reshaped {len(wm.reshaped)}, "
              f"tied {len(wm.tied)}, dropped {len(wm.dropped)}")
    lines = [head, counts]
    lines += [f"  note: {n}" for n in r.notes]
    lines += _lines("unfilled MindSpore parameters", wm.unfilled_ms)
    lines += _lines("unused torch keys", wm.unused_torch)
    lines += _lines("shape conflicts", wm.conflicts)
    lines += _lines("ambiguous", wm.ambiguous)
    lines += _lines("tied (written once)", [f"{t} = {m}" for t, m in wm.tied])
    lines += _lines("dropped (no MindSpore counterpart)", wm.dropped)
    lines.append(f"wrote {r.out} ({len(wm.values)} parameters)")
    if r.not_loaded is not None:
        lines.append("load_checkpoint + load_param_into_net: "
                     + ("every parameter loaded" if not r.not_loaded else f"{len(r.not_loaded)} not loaded"))
    return "\n".join(lines)
