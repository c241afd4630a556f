"""Run one side of code-file probes in a throw-away process:  python -m kb.probes.sides < jobs.json

Each job names a Python file that defines ``run(*inputs)`` (a function call) or ``make()``
(a layer, then applied to the inputs), the side (``torch`` or ``mindspore``), input recipes
and where to write the output (a pickle of plain numpy values, see ``kb.probes.outputs``).

- The torch side puts layers in eval mode, fills every floating parameter and buffer with
  seeded random values (running variances positive), and writes the state (numpy) next to
  the output, so a wrong weight or statistic mapping cannot pass.
- The mindspore side blocks ``import torch`` (the converted code must stand alone), runs on
  CPU, copies the torch state into the cell (see ``copy_state``) and stops after a MindSpore
  error (exit 3: the runner starts a fresh process for the rest), as ``kb.probes.worker`` does,
  unless the error came from an argument check (``PYTHON_LEVEL``: TypeError, ValueError ...).

stdout: one JSON line per job: ``{"probe", "result": ok|error|no_cpu_kernel|weights, "detail", "side"}``.
"""
from __future__ import annotations

import json
import pickle
import sys
import time
import traceback
from typing import Any

from kb.probes.worker import NO_KERNEL_RE, STOP_AFTER_MS_ERROR, _first_line

# Errors raised by argument checks before anything runs leave no state behind: the worker goes on.
PYTHON_LEVEL = ("TypeError:", "ValueError:", "NameError:", "AttributeError:", "ImportError:",
                "ModuleNotFoundError:", "KeyError:", "IndexError:")
PARAM_ALIASES = {"gamma": "weight", "beta": "bias", "moving_mean": "running_mean", "mean": "running_mean",
                 "moving_variance": "running_var", "variance": "running_var", "embedding_table": "weight"}


def make_inputs(specs: dict[str, Any], seed: int) -> list[Any]:
    """numpy arrays from recipes: ``[shape]`` (float32 in [-2, 2]) or ``{shape, dtype, range}``."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out = []
    for spec in specs.values():
        if isinstance(spec, list):
            spec = {"shape": spec}
        if not isinstance(spec, dict):
            out.append(spec)
            continue
        lo, hi = spec.get("range", [-2.0, 2.0])
        dtype = spec.get("dtype", "float32")
        shape = tuple(spec.get("shape") or ())
        if dtype == "bool":
            out.append(rng.integers(0, 2, size=shape).astype(bool))
        elif dtype.startswith(("int", "uint")):
            out.append(rng.integers(int(lo), int(hi) + 1, size=shape).astype(dtype))
        else:
            out.append(rng.uniform(lo, hi, size=shape).astype(dtype))
    return out


def _load(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        return load_source(handle.read(), path)


def load_source(source: str, name: str = "<snippet>") -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "probe_snippet", "__file__": name}
    exec(compile(source, name, "exec"), namespace)  # the probe's own generated/converted file
    return namespace


def torch_output(namespace: dict[str, Any], layer: bool, arrays: list[Any], seed: int) -> tuple[Any, Any]:
    """(output, state of the layer or None) of a torch snippet's ``run``/``make`` on ``arrays``."""
    import numpy as np
    import torch

    torch.manual_seed(seed)
    tensors = [torch.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in arrays]
    if not layer:
        return namespace["run"](*tensors), None
    module = namespace["make"]()
    module.eval()
    gen = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, value in list(module.named_parameters()) + list(module.named_buffers()):
            if value.is_floating_point():
                low = 0.5 if name.endswith("running_var") else -1.0
                value.copy_(torch.rand(value.shape, generator=gen) * (1.5 - low) + low)
    state = {k: v.detach().numpy().copy() for k, v in module.state_dict().items()}
    return module(*tensors), state


def _torch_side(job: dict, arrays: list[Any]) -> tuple[Any, Any]:
    return torch_output(_load(job["file"]), job.get("entry") == "make", arrays, int(job.get("seed", 0)))


def copy_state(cell: Any, state: dict[str, Any]) -> str:
    """Put torch's state into the cell's parameters; '' when done, else why not.

    kb.weights.map_weights when it fills every parameter; otherwise names (with MindSpore's
    aliases such as gamma -> weight), then the order of the parameters, only when no two share
    a shape (same-shaped ones could be swapped silently).
    """
    import mindspore
    import numpy as np

    params = list(cell.get_parameters())
    if not params:
        return ""
    values: dict[str, Any] = {}
    try:
        from kb.weights import map_weights

        wm = map_weights(state, {p.name: (tuple(p.shape), str(p.dtype)) for p in params})
        values = {k: v for k, v in wm.values.items() if not wm.conflicts}
    except Exception:  # no weight rules at hand: the fallbacks below
        values = {}
    if len(values) != len(params):
        values = {}
        for p in params:
            leaf = p.name.rsplit(".", 1)[-1]
            for key in (p.name, PARAM_ALIASES.get(leaf, leaf)):
                if key in state and tuple(state[key].shape) == tuple(p.shape):
                    values[p.name] = state[key]
                    break
    shapes = [tuple(p.shape) for p in params]
    if len(values) != len(params) and len(set(shapes)) == len(shapes):  # by order only when no shape repeats
        floats = [v for v in state.values() if v.dtype.kind == "f"]
        if len(floats) == len(params) and all(tuple(v.shape) == s for v, s in zip(floats, shapes, strict=True)):
            values = {p.name: v for p, v in zip(params, floats, strict=True)}
    if len(values) != len(params):
        return (f"cannot map torch state {[(k, tuple(v.shape)) for k, v in state.items()]} onto mindspore "
                f"parameters {[(p.name, tuple(p.shape)) for p in params]}")
    for p in params:
        p.set_data(mindspore.Tensor(np.asarray(values[p.name]).astype(p.asnumpy().dtype)))
    return ""


def _ms_side(job: dict, arrays: list[Any]) -> tuple[Any, str]:
    import mindspore
    import numpy as np

    # PyNative, as in a fresh process: a kept worker (keep_workers) may have run code that switched to graph mode
    mindspore.set_context(device_target="CPU", mode=mindspore.PYNATIVE_MODE)
    mindspore.set_seed(int(job.get("seed", 0)))
    namespace = _load(job["file"])
    tensors = [mindspore.Tensor(a) if isinstance(a, np.ndarray) else a for a in arrays]
    if job.get("entry") != "make":
        return namespace["run"](*tensors), ""
    cell = namespace["make"]()
    cell.set_train(False)
    with open(job["state"], "rb") as handle:
        state = pickle.load(handle)
    problem = copy_state(cell, state) if state else ""
    if problem:
        return None, problem
    return cell(*tensors), ""


def run_job(job: dict) -> dict:
    from kb.probes.outputs import to_plain

    started = time.perf_counter()
    side = job["side"]
    res: dict[str, Any] = {"probe": job["id"], "side": side, "result": "ok", "detail": ""}
    try:
        arrays = make_inputs(job.get("inputs") or {}, int(job.get("seed", 0)))
        if side == "torch":
            out, state = _torch_side(job, arrays)
            if job.get("state"):
                with open(job["state"], "wb") as handle:
                    pickle.dump(state, handle)
        else:
            out, problem = _ms_side(job, arrays)
            if problem:
                res.update(result="weights", detail=problem)
        with open(job["out"], "wb") as handle:
            pickle.dump(to_plain(out), handle)
    except Exception as exc:
        text = f"{exc}\n{traceback.format_exception_only(type(exc), exc)[-1]}"
        kernel = side == "mindspore" and NO_KERNEL_RE.search(text)
        res.update(result="no_cpu_kernel" if kernel else "error",
                   detail=f"{type(exc).__name__}: {_first_line(exc)}")
    res["seconds"] = round(time.perf_counter() - started, 3)
    return res


def _run_batch(jobs: list[dict]) -> bool:
    """Run ``jobs``, one result line each; False when a MindSpore error left the process unfit to go on."""
    for job in jobs:
        res = run_job(job)
        sys.stdout.write(json.dumps(res, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        if job["side"] == "mindspore" and res["result"] in ("error", "no_cpu_kernel") \
                and not res["detail"].startswith(PYTHON_LEVEL):
            return False
    return True


def main(argv: list[str] | None = None) -> int:
    """``python -m kb.probes.sides``: one batch (a JSON list) on stdin. ``--serve SIDE``: a kept worker
    (``kb.probes.runner.keep_workers``) for one side's jobs only, one batch per stdin line, each answered by its
    result lines and ``{"batch": "done"}``, until stdin closes or a MindSpore error stops it (exit 3)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--serve"]:
        if argv[1:2] == ["mindspore"]:
            sys.modules["torch"] = None  # type: ignore[assignment]  # converted code must not need torch
        for line in sys.stdin:
            if not _run_batch(json.loads(line)):
                return STOP_AFTER_MS_ERROR
            sys.stdout.write(json.dumps({"batch": "done"}) + "\n")
            sys.stdout.flush()
        return 0
    jobs = json.loads(sys.stdin.read() or "[]")
    if any(j.get("side") == "mindspore" for j in jobs):
        sys.modules["torch"] = None  # type: ignore[assignment]  # converted code must not need torch
    return 0 if _run_batch(jobs) else STOP_AFTER_MS_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
