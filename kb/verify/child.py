"""One framework's side of ``msmap verify``: ``python -m kb.verify.child torch|mindspore``.

``python -m kb.verify.child SIDE PARENT_PID``: ends when PARENT_PID does (``kb.verify.lifetime``).
Reads ``{"jobs": [...], "result": PATH}`` as JSON on stdin, runs every job (build the user's model,
eval mode, forward on the given inputs, optionally gradients of the summed outputs) and writes one
result per job to PATH; arrays travel in .npz files beside it.  In the MindSpore process torch
cannot be imported (a meta-path finder refuses it), which proves the converted code is torch-free.
"""
from __future__ import annotations

import importlib.abc
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np


class _NoTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(
                f"No module named {name!r} (msmap verify blocks torch in the MindSpore process: "
                "the converted code must not use it)", name=name)


def _save(path: str, arrays: dict[str, np.ndarray]) -> str:
    np.savez(path, **{f"a{i}": a for i, a in enumerate(arrays.values())})
    return path


def load_arrays(path: str, names: list[str]) -> dict[str, np.ndarray]:
    with np.load(path) as z:
        return {n: z[f"a{i}"] for i, n in enumerate(names)}


def _outputs(out: Any, to_array: Any, prefix: str) -> dict[str, Any]:
    from kb.verify.compare import encode

    entries, arrays = encode(out, to_array)
    return {"outputs": entries, "output_arrays": list(arrays), "outputs_file": _save(prefix + "-out.npz", arrays)}


# --- torch -------------------------------------------------------------------------------------

NORMS = ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "InstanceNorm1d", "InstanceNorm2d",
         "InstanceNorm3d", "LayerNorm", "GroupNorm", "RMSNorm", "LazyBatchNorm1d", "LazyBatchNorm2d")


def randomise_norms(model: Any, seed: int) -> int:
    """Give normalisation layers non-trivial affine parameters and running statistics (a wrong eps,
    a swapped mean/variance or a missing affine step then changes the outputs).  Returns the count."""
    import torch

    kinds = tuple(getattr(torch.nn, k) for k in NORMS if hasattr(torch.nn, k))
    gen = torch.Generator().manual_seed(seed + 1)
    count = 0
    with torch.no_grad():
        for m in model.modules():
            if not isinstance(m, kinds):
                continue
            count += 1
            for name, low, high in (("weight", 0.5, 1.5), ("bias", -0.5, 0.5), ("running_mean", -0.5, 0.5),
                                    ("running_var", 0.05, 1.0)):
                t = getattr(m, name, None)
                if isinstance(t, torch.Tensor) and t.is_floating_point():
                    t.copy_(torch.rand(t.shape, generator=gen) * (high - low) + low)
    return count


def _torch_array(t: Any) -> Any:
    """A torch tensor as numpy (bfloat16 and float8 as float32, which holds them exactly; sparse as
    dense, quantized as its float values); anything else, and a meta tensor (no values), as it is."""
    import torch

    if not isinstance(t, torch.Tensor) or t.is_meta:
        return t
    t = t.detach().cpu()
    if t.is_quantized:
        t = t.dequantize()
    if t.layout != torch.strided:
        t = t.to_dense()
    if t.dtype == torch.bfloat16 or (t.dtype.is_floating_point and t.dtype.itemsize < 2):
        t = t.float()
    elif t.dtype == torch.complex32:
        t = t.to(torch.complex64)
    return t.resolve_conj().resolve_neg().numpy()


def run_torch(job: dict) -> dict:
    import torch

    from kb.weights.usercode import build, run_stage

    path = Path(job["model"][0])
    torch.manual_seed(job["seed"])
    model = build(path, job["model"][1])
    if not isinstance(model, torch.nn.Module):
        return {"ok": False, "stage": "build", "where": "", "message": f"'{job['model'][1]}' gave a "
                f"{type(model).__name__}, not a torch.nn.Module"}
    model.eval()
    randomised = randomise_norms(model, job["seed"])
    state = {k: v.detach().cpu().float().numpy() if v.dtype == torch.bfloat16 else v.detach().cpu().numpy()
             for k, v in model.state_dict().items()}
    inputs = [torch.from_numpy(a) for a in load_arrays(job["inputs"], job["input_names"]).values()]
    grad = job["grad"]
    with torch.set_grad_enabled(grad):
        out = run_stage("forward", path, model, *inputs)
    result = {"ok": True, "state": list(state), "state_file": _save(job["prefix"] + "-state.npz", state),
              "randomised_norms": randomised,
              **run_stage("forward", path, _outputs, out, _torch_array, job["prefix"])}
    if grad:
        from kb.verify.compare import leaves

        def backward() -> None:
            total = sum(v.float().sum() for _, v in leaves(out)
                        if isinstance(v, torch.Tensor) and v.requires_grad and v.is_floating_point())
            if isinstance(total, torch.Tensor):
                total.backward()

        run_stage("grad", path, backward)
        grads = {k: v.grad.detach().cpu().numpy() for k, v in model.state_dict(keep_vars=True).items()
                 if isinstance(v, torch.nn.Parameter) and v.grad is not None}
        result.update(grads=list(grads), grads_file=_save(job["prefix"] + "-grad.npz", grads))
    return result


# --- mindspore ---------------------------------------------------------------------------------

def run_mindspore(job: dict) -> dict:
    import mindspore

    from kb.verify.compare import leaves
    from kb.weights.convert import build_cell, fill_buffers, ms_buffers_of, ms_params_of, to_parameters
    from kb.weights.mapping import map_weights
    from kb.weights.usercode import run_stage

    path = Path(job["model"][0])
    mindspore.set_seed(job["seed"])
    net = build_cell(path, job["model"][1])
    net.set_train(False)
    ms_params = ms_params_of(net)
    buffers = {name: spec for name, spec in ms_buffers_of(net).items() if name not in ms_params}
    rules = json.loads(Path(job["rules"]).read_text())
    wm = map_weights(load_arrays(job["state_file"], job["state"]), {**buffers, **ms_params}, None, rules=rules)
    wm.unfilled_ms = [name for name in wm.unfilled_ms if name not in buffers]  # (a buffer torch lacks: its own value)
    fill_buffers(net, {name: wm.values.pop(name) for name in buffers if name in wm.values})
    result: dict[str, Any] = {"ok": True, "weights": wm.as_dict()}
    if wm.lossy:
        return {**result, "ok": False, "stage": "weights", "where": "",
                "message": f"{len(wm.lossy)} torch weights cannot be stored in the MindSpore parameters' dtypes "
                           f"without changing their values: {'; '.join(wm.lossy[:3])}"}
    if wm.unfilled_ms:
        shown = ", ".join(wm.unfilled_ms[:5]) + (" ..." if len(wm.unfilled_ms) > 5 else "")
        why = f" (first shape conflict: {wm.conflicts[0]})" if wm.conflicts else ""
        return {**result, "ok": False, "stage": "weights", "where": "",
                "message": f"{len(wm.unfilled_ms)} MindSpore parameters got no torch weight: {shown}{why}"}
    not_loaded, _ = mindspore.load_param_into_net(net, to_parameters(wm.values, ms_params))
    if not_loaded:
        return {**result, "ok": False, "stage": "weights", "where": "",
                "message": f"load_param_into_net left {len(not_loaded)} parameters unloaded: "
                           f"{', '.join(not_loaded[:5])}"}
    inputs = [mindspore.Tensor(a) for a in load_arrays(job["inputs"], job["input_names"]).values()]
    out = run_stage("forward", path, net, *inputs)

    def to_array(t: Any) -> Any:
        if not isinstance(t, mindspore.Tensor):
            return t
        return (t.astype(mindspore.float32) if t.dtype == mindspore.bfloat16 else t).asnumpy()

    result.update(run_stage("forward", path, _outputs, out, to_array, job["prefix"]))
    if job["grad"]:
        params = net.trainable_params()

        def total(*xs: Any) -> Any:
            parts = [v.astype(mindspore.float32).sum() for _, v in leaves(net(*xs))
                     if isinstance(v, mindspore.Tensor) and v.dtype in (mindspore.float16, mindspore.float32,
                                                                       mindspore.float64, mindspore.bfloat16)]
            return sum(parts[1:], parts[0])

        grads = run_stage("grad", path, mindspore.grad(total, grad_position=None, weights=params), *inputs)
        arrays = {p.name: g.asnumpy() for p, g in zip(params, grads, strict=False)}
        result.update(grads=list(arrays), grads_file=_save(job["prefix"] + "-grad.npz", arrays))
    return result


def main(side: str, parent: int) -> int:
    from kb.errors import MsmapError
    from kb.verify.lifetime import die_with_parent
    from kb.weights.usercode import UserCodeError, describe

    die_with_parent(parent)  # a killed msmap verify leaves no model running

    if side == "mindspore":
        sys.meta_path.insert(0, _NoTorch())
        import mindspore  # imported while the parent still prepares the jobs

        # Run each operator before the next Python line: a failing op then raises where the user's
        # code called it (file:line), not later at some read of a result.
        mindspore.runtime.launch_blocking()
    request = json.loads(sys.stdin.read())
    run = run_mindspore if side == "mindspore" else run_torch
    results = []
    for job in request["jobs"]:
        try:
            results.append(run(job))
        except UserCodeError as exc:
            results.append({"ok": False, "stage": exc.stage, "where": exc.where, "message": exc.detail})
        except MsmapError as exc:
            results.append({"ok": False, "stage": "build", "where": "", "message": str(exc)})
        except Exception as exc:  # msmap's own failure: still one line, never a traceback
            results.append({"ok": False, "stage": "internal", "where": "", "message": describe(exc)})
    Path(request["result"]).write_text(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], int(sys.argv[2])))
