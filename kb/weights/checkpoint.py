"""Read a torch checkpoint into numpy arrays without executing anything from the file.

``.safetensors`` is read by safetensors; anything else by ``torch.load(weights_only=True)``, which
unpickles tensors and plain containers only and refuses a file that names any other code.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from kb.errors import MsmapError

# Keys under which training scripts usually keep the model's state_dict.
NESTED_KEYS = ("state_dict", "model_state_dict", "model", "module", "net", "network", "params", "weights")


def load_state(path: Path) -> tuple[dict[str, np.ndarray], list[str]]:
    """(torch key -> array, notes).  Raises MsmapError (exit 2) naming the file on any problem."""
    if not path.is_file():
        raise MsmapError(f"{path}: checkpoint: no such file")
    if path.suffix == ".safetensors":
        tensors = _read_safetensors(path)
        notes: list[str] = []
    else:
        tensors, notes = _find_state_dict(path, _torch_load(path))
    if not tensors:
        raise MsmapError(f"{path}: checkpoint: no tensors found")
    prefix = "module."
    if all(k.startswith(prefix) for k in tensors):  # saved from DataParallel / DistributedDataParallel
        tensors = {k[len(prefix):]: v for k, v in tensors.items()}
        notes.append(f"removed the '{prefix}' prefix every key had")
    return {k: _to_numpy(v) for k, v in tensors.items()}, notes


def _torch_load(path: Path) -> Any:
    import pickle

    import torch

    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        import re

        found = re.search(r"GLOBAL ([\w.]+)", str(exc))
        if not found:  # not a pickle torch can read at all
            why = re.search(r"WeightsUnpickler error: \s*([^\n]+)", str(exc))
            raise MsmapError(f"{path}: checkpoint: not a readable torch checkpoint "
                             f"({why[1].strip() if why else type(exc).__name__})") from None
        detail = f"it names {found[1]}"
        raise MsmapError(
            f"{path}: checkpoint: refused: loading it could run code ({detail}); "
            "msmap loads tensors only - save model.state_dict() or a .safetensors file instead"
        ) from None
    except Exception as exc:  # zip, pickle framing and storage errors of a file that is not a checkpoint
        raise MsmapError(
            f"{path}: checkpoint: not a readable torch checkpoint ({type(exc).__name__}: {exc})"[:400]) from None


def _read_safetensors(path: Path) -> dict[str, Any]:
    try:
        from safetensors.torch import load_file
    except ImportError:
        raise MsmapError(f"{path}: checkpoint: reading .safetensors needs the 'safetensors' package") from None
    try:
        return dict(load_file(str(path), device="cpu"))
    except Exception as exc:
        raise MsmapError(f"{path}: checkpoint: not a readable .safetensors file ({exc})"[:400]) from None


def _is_tensor(v: Any) -> bool:
    import torch

    return isinstance(v, torch.Tensor)


def _find_state_dict(path: Path, obj: Any) -> tuple[dict[str, Any], list[str]]:
    if not isinstance(obj, dict):
        raise MsmapError(f"{path}: checkpoint: holds a {type(obj).__name__}, not a state_dict (a dict of tensors)")
    tensors = {k: v for k, v in obj.items() if isinstance(k, str) and _is_tensor(v)}
    if tensors:
        skipped = len(obj) - len(tensors)
        return tensors, ([f"skipped {skipped} entries that are not tensors"] if skipped else [])
    for key in NESTED_KEYS:
        inner = obj.get(key)
        if isinstance(inner, dict):
            found, notes = _find_state_dict(path, inner)
            return found, [f"state_dict read from the '{key}' entry", *notes]
    shown = ", ".join(repr(k) for k in list(obj)[:8])
    raise MsmapError(f"{path}: checkpoint: no tensors at the top level or under {'/'.join(NESTED_KEYS)} "
                     f"(keys: {shown})")


def _to_numpy(t: Any) -> np.ndarray:
    import torch

    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16; float32 holds every value exactly
        t = t.float()
    return t.numpy().copy()
