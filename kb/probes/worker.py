"""Run probes in this (throw-away) process:  python -m kb.probes.worker < probes.json

stdin: a JSON list of probe definitions.  stdout: one JSON result per probe, flushed
as each finishes, so the runner knows how far a batch got if the process dies.

A MindSpore failure can leave error state behind in the process, so after any
probe whose MindSpore side raised, the worker stops (exit code 3) and the runner
starts a fresh process for the rest of the batch.
"""
from __future__ import annotations

import json
import re
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

STOP_AFTER_MS_ERROR = 3
NO_KERNEL_RE = re.compile(r"kernel \S+ unregistered|Select CPU operator\[\w+\] fail|Create kernelmod for op \w+ failed|"
                          r"Not found op \w+ on device CPU|only supports? Ascend|"
                          r"not (?:be )?supported on (?:the )?(?:CPU|this device)|"
                          r"no (?:CPU )?kernel|"
                          r"Unsupported op .* on CPU|can not find (?:any )?(?:kernel|op)|does not support CPU|"
                          r"not support(?:ed)? (?:in|on) CPU|KernelNotFound|Not found kernel|"
                          r"Not implement exception", re.I)


class SideError(Exception):
    def __init__(self, side: str, exc: BaseException) -> None:
        self.side, self.exc = side, exc
        super().__init__(f"{side}: {type(exc).__name__}: {_first_line(exc)}")


def _first_line(exc: BaseException) -> str:
    """The first informative line (MindSpore messages open with rulers and section titles)."""
    for line in str(exc).splitlines():
        line = line.strip()
        if line and line.strip("-= ") and not (line.startswith("- ") and line.endswith(":")):
            return line[:300]
    return ""


def _inputs(specs: list[Any], seed: int) -> list[Any]:
    import numpy as np

    rng = np.random.default_rng(seed)
    out = []
    for s in specs:
        if isinstance(s, dict) and "tensors" in s:  # a sequence of tensors (cat, stack ...)
            out.append([_one(t, rng) for t in s["tensors"]])
        elif isinstance(s, dict) and "tensor" in s:
            out.append(_one(s, rng))
        else:
            out.append(s)
    return out


def _one(s: dict, rng: Any) -> Any:
    lo, hi = s.get("range", [-2.0, 2.0])
    dtype = s.get("dtype", "float32")
    if dtype.startswith(("int", "uint")):
        return rng.integers(int(lo), int(hi) + 1, size=s["tensor"]).astype(dtype)
    if dtype == "bool":
        return rng.integers(0, 2, size=s["tensor"]).astype(bool)
    return rng.uniform(lo, hi, size=s["tensor"]).astype(dtype)


def _resolve(name: str) -> Any:
    from kb.check.live import MISSING, resolve

    obj, _ = resolve(name)
    if obj is MISSING:
        raise AttributeError(f"{name} not found")
    return obj


def _call(side: str, probe: dict, arrays: list[Any]) -> Any:
    """Run the generated call on one side: a function, or a class built then applied."""
    import numpy as np

    if side == "torch":
        import torch

        tensor: Callable[[Any], Any] = torch.from_numpy
        api, kwargs = probe["torch"], probe.get("torch_kwargs") or {}
    else:
        import mindspore

        tensor = mindspore.Tensor
        api, kwargs = probe["ms_api"], probe.get("ms_kwargs") or {}

    def one(a: Any) -> Any:
        return tensor(np.array(a)) if isinstance(a, np.ndarray) else a

    obj = _resolve(api)
    args = [[one(x) for x in a] if isinstance(a, list) and a and isinstance(a[0], np.ndarray) else one(a)
            for a in arrays]
    if probe.get("init") is None:
        return obj(*args, **kwargs)
    init = probe["init"]
    module = obj(*init.get("args", []), **(init.get(f"{'torch' if side == 'torch' else 'ms'}_kwargs") or {}))
    if side == "torch":
        module.eval()
        params = [p.detach().numpy().copy() for p in module.parameters()]
        state = {k: v.detach().numpy().copy() for k, v in module.state_dict().items()}
        _SHARED["torch_state"] = state
        _SHARED["torch_params"] = [params, list(state.values()), [a for a in state.values() if a.ndim]]
    else:
        module.set_train(False)
        _sync_ms_params(module)
    return module(*args, **kwargs)


_SHARED: dict[str, Any] = {}
PARAM_ALIASES = {"gamma": "weight", "beta": "bias", "moving_mean": "running_mean", "moving_variance": "running_var",
                 "mean": "running_mean", "variance": "running_var",
                 "embedding_table": "weight"}  # MindSpore parameter name -> torch state_dict key


def _sync_ms_params(cell: Any) -> None:
    """Copy the torch module's parameters (or its whole state: BatchNorm's running statistics are
    Parameters in MindSpore) into the cell, so outputs compare.  A torch module without parameters
    leaves the cell's own defaults in place."""
    import mindspore

    options = _SHARED.pop("torch_params", [[]])
    state = _SHARED.pop("torch_state", {})
    if not options[0]:
        return
    mps = list(cell.get_parameters())
    by_name = [state.get(PARAM_ALIASES.get(m.name.rsplit(".", 1)[-1], m.name.rsplit(".", 1)[-1])) for m in mps]
    if all(t is not None for t in by_name):
        options = [by_name] + options  # same names (after aliases) first, then order and shape
    for tps in options:
        if len(tps) == len(mps) and all(tuple(t.shape) == tuple(m.shape) for t, m in zip(tps, mps, strict=True)):
            for t, m in zip(tps, mps, strict=True):
                m.set_data(mindspore.Tensor(t.astype(mindspore.dtype_to_nptype(m.dtype))))
            return
    raise ValueError(f"cannot align parameters: torch {[t.shape for t in options[0]]} vs mindspore "
                     f"{[tuple(m.shape) for m in mps]}")


def _run_code(side: str, code: str, seed: int) -> Any:
    import numpy as np

    env: dict[str, Any] = {"np": np, "rng": np.random.default_rng(seed), "seed": seed}
    if side == "torch":
        import torch

        torch.manual_seed(seed)
        env.update(torch=torch, nn=torch.nn, F=torch.nn.functional)
    else:
        import mindspore

        mindspore.set_seed(seed)
        env.update(ms=mindspore, mindspore=mindspore, mint=mindspore.mint, ops=mindspore.ops,
                   nn=mindspore.nn, Tensor=mindspore.Tensor)
    exec(compile(code, f"<probe {side}>", "exec"), env)  # probes are our own fixed code
    return env.get("out")


def _side(side: str, probe: dict) -> Any:
    from kb.probes.outputs import to_plain

    seed = int(probe.get("seed", 0))
    try:
        code = probe.get("torch_code" if side == "torch" else "ms_code")
        if code is not None:
            return to_plain(_run_code(side, code, seed))
        return to_plain(_call(side, probe, _inputs(probe.get("inputs") or [], seed)))
    except Exception as exc:
        raise SideError(side, exc) from exc


def run_probe(probe: dict) -> dict:
    from kb.probes.outputs import compare

    started = time.perf_counter()
    res: dict[str, Any] = {"probe": probe["id"], "max_abs_diff": None}
    try:
        t = _side("torch", probe)
        m = _side("mindspore", probe)
    except SideError as e:
        text = f"{e.exc}\n{traceback.format_exception_only(type(e.exc), e.exc)[-1]}"
        kernel = e.side == "mindspore" and NO_KERNEL_RE.search(text)
        res.update(result="no_cpu_kernel" if kernel else "error", detail=str(e), side=e.side)
        return _done(res, started)
    rtol, atol = float(probe.get("rtol", 1e-4)), float(probe.get("atol", 1e-5))
    same, detail, worst = compare(t, m, rtol, atol)
    res["max_abs_diff"] = None if worst != worst or worst == float("inf") else round(worst, 8)
    if probe.get("check"):
        import numpy as np

        try:
            holds = bool(eval(probe["check"], {"np": np, "t": t, "m": m, "abs": abs}))  # our own fixed expression
        except Exception as exc:
            res.update(result="error", detail=f"check expression failed: {type(exc).__name__}: {exc}")
            return _done(res, started)
        detail = f"torch {_short(t)}; mindspore {_short(m)}"
    else:
        holds = same if probe.get("expect", "same") == "same" else not same
        detail = detail or "outputs match"
    res.update(result="holds" if holds else "differs", detail=detail)
    return _done(res, started)


def _short(x: Any) -> str:
    import numpy as np

    if isinstance(x, np.ndarray) and x.size > 6:
        return f"array{x.shape} mean {float(np.mean(x)):.4g}"
    text = repr(x.tolist() if isinstance(x, np.ndarray) else x)
    return text if len(text) < 160 else text[:157] + "..."


def _done(res: dict, started: float) -> dict:
    res["seconds"] = round(time.perf_counter() - started, 3)
    return res


def main() -> int:
    probes = json.loads(sys.stdin.read() or "[]")
    for probe in probes:
        res = run_probe(probe)
        sys.stdout.write(json.dumps(res, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        if res.get("side") == "mindspore":
            return STOP_AFTER_MS_ERROR
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
