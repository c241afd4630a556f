"""Read a torch checkpoint into numpy arrays without executing anything from the file.

``.safetensors`` is read by safetensors; anything else by ``torch.load(weights_only=True)``, which
unpickles tensors and plain containers only and refuses a file that names any other code.
"""
from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from kb.errors import MsmapError

# Keys under which training scripts usually keep the model's state_dict.
NESTED_KEYS = ("state_dict", "model_state_dict", "model", "module", "net", "network", "params", "weights")


MiB = 1 << 20
# A torch checkpoint is a zip whose members torch stores uncompressed: expanded, it is about its own
# size.  A deflated one may expand this much (and never past max_expanded, when given).
EXPAND_RATIO = 10
EXPAND_SLACK = 64 * MiB


def expansion_limit(path: Path) -> int:
    """The default bound on what a zip checkpoint may expand to (bytes)."""
    return EXPAND_RATIO * path.stat().st_size + EXPAND_SLACK


def check_expanded_size(path: Path, limit: int | None = None) -> None:
    """Refuse a zip checkpoint whose members expand to more than ``limit`` bytes (a few hundred KB
    of deflated zeros can hold gigabytes), before anything reads them.  A deflated member is
    inflated here, in bounded pieces, as far as the limit: its header may understate its size, and
    torch's reader inflates all of it whatever the header says."""
    import zipfile

    if not zipfile.is_zipfile(path):
        return
    limit = expansion_limit(path) if limit is None else limit
    expanded = 0
    try:
        with zipfile.ZipFile(path) as zf, open(path, "rb") as handle:
            for info in zf.infolist():
                size = max(info.file_size, 0)
                if info.compress_type == zipfile.ZIP_DEFLATED:
                    size = max(size, _inflated_size(handle, info, limit - expanded))
                expanded += size
                if expanded > limit:
                    break
    except (zipfile.BadZipFile, OSError, ValueError, zlib.error) as exc:
        raise MsmapError(f"{path}: checkpoint: not a readable torch checkpoint (zip: {exc})"[:400]) from None
    if expanded > limit:
        raise MsmapError(
            f"{path}: checkpoint: its zip members expand to more than {limit / MiB:,.0f} MiB (at least "
            f"{expanded / MiB:,.0f} MiB) from a {path.stat().st_size / MiB:,.1f} MiB file; if the file is "
            "genuine, raise the limit with --max-expanded-size MB")


def _inflated_size(handle: BinaryIO, info: Any, limit: int) -> int:
    """What a deflated zip member really inflates to, counted up to just past ``limit`` (output in
    1 MiB pieces: one piece of input can inflate a thousandfold)."""
    handle.seek(info.header_offset)
    head = handle.read(30)
    if len(head) < 30 or head[:4] != b"PK\x03\x04":
        raise ValueError(f"{info.filename}: no local header")
    name_len, extra_len = struct.unpack("<HH", head[26:30])
    handle.seek(info.header_offset + 30 + name_len + extra_len)
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    left, total = info.compress_size, 0
    while left > 0 and total <= limit:
        chunk = handle.read(min(MiB, left))
        if not chunk:
            break
        left -= len(chunk)
        while chunk and total <= limit:
            total += len(inflater.decompress(chunk, MiB))
            chunk = inflater.unconsumed_tail
    return total


def _check_values_size(path: Path, tensors: dict[str, Any], limit: int) -> None:
    """Refuse tensors whose values, written out, take more than ``limit`` bytes: a saved view may
    repeat one stored number (stride 0), so a 1.5 KB file can hold a 40 GB tensor."""
    sizes = {k: t.numel() * t.element_size() for k, t in tensors.items() if not t.is_meta}
    total = sum(sizes.values())
    if total > limit:
        biggest = sorted(sizes, key=sizes.__getitem__, reverse=True)[:3]
        shown = ", ".join(f"{k!r} {tuple(tensors[k].shape)} ({sizes[k] / MiB:,.0f} MiB)" for k in biggest)
        raise MsmapError(
            f"{path}: checkpoint: its tensors hold {total / MiB:,.0f} MiB of values (largest: {shown}) from a "
            f"{path.stat().st_size / MiB:,.1f} MiB file, more than the limit of {limit / MiB:,.0f} MiB; "
            "if the file is genuine, raise the limit with --max-expanded-size MB")


def load_state(path: Path, max_expanded: int | None = None) -> tuple[dict[str, np.ndarray], list[str]]:
    """(torch key -> array, notes).  Raises MsmapError (exit 2) naming the file on any problem.
    ``max_expanded``: bytes a zip checkpoint may expand to (default ``expansion_limit``)."""
    if not path.is_file():
        try:
            mode = path.stat().st_mode
        except OSError:
            raise MsmapError(f"{path}: checkpoint: no such file") from None
        from kb.safepaths import kind

        raise MsmapError(f"{path}: checkpoint: {kind(mode)}, not a regular file")
    if path.suffix == ".safetensors":
        tensors = _read_safetensors(path)
        notes: list[str] = []
    else:
        check_expanded_size(path, max_expanded)
        tensors, notes = _find_state_dict(path, _torch_load(path))
    if not tensors:
        raise MsmapError(f"{path}: checkpoint: no tensors found")
    _check_values_size(path, tensors, expansion_limit(path) if max_expanded is None else max_expanded)
    prefix = "module."
    if all(k.startswith(prefix) for k in tensors):  # saved from DataParallel / DistributedDataParallel
        tensors = {k[len(prefix):]: v for k, v in tensors.items()}
        notes.append(f"removed the '{prefix}' prefix every key had")
    return _arrays(path, tensors, notes), notes


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


def _kind_problem(t: Any) -> str | None:
    """Why the tensor ``t`` has no values msmap can convert (None: it has)."""
    import torch

    if t.is_meta:
        return "a meta tensor: it has a shape but no values (saved from a model built on the meta device)"
    if getattr(t, "is_nested", False):
        return "a nested tensor; save its tensors one by one"
    if t.layout != torch.strided:
        return f"a sparse tensor ({str(t.layout).replace('torch.', '')}); save tensor.to_dense() instead"
    if t.is_quantized:
        return f"a quantized tensor ({str(t.dtype).replace('torch.', '')}); save tensor.dequantize() or the " \
               "float model's state_dict instead"
    return None


def _arrays(path: Path, tensors: dict[str, Any], notes: list[str]) -> dict[str, np.ndarray]:
    """The tensors as numpy arrays; MsmapError naming every key whose tensor has no convertible values."""
    import torch

    arrays: dict[str, np.ndarray] = {}
    problems: list[str] = []
    widened: dict[str, list[str]] = {}
    for key, t in tensors.items():
        why = _kind_problem(t)
        if why is None:
            t = t.detach().cpu()
            if t.dtype.is_floating_point and t.dtype.itemsize < 2 or t.dtype == torch.bfloat16:
                widened.setdefault(str(t.dtype).replace("torch.", ""), []).append(key)
                t = t.float()  # float8 and bfloat16: numpy has neither; float32 holds every value exactly
            elif t.dtype == torch.complex32:
                t = t.to(torch.complex64)
            try:
                arrays[key] = t.numpy().copy()
                continue
            except (TypeError, RuntimeError) as exc:
                why = f"dtype {str(t.dtype).replace('torch.', '')} has no numpy counterpart ({exc})"[:200]
        problems.append(f"{key!r} is {why}")
    if problems:
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        count = f"{len(problems)} tensor{'s' if len(problems) > 1 else ''}"
        raise MsmapError(f"{path}: checkpoint: {count} cannot be converted: {shown}")
    for dtype, keys in widened.items():
        if dtype != "bfloat16":
            notes.append(f"{len(keys)} {dtype} tensors read as float32 (exactly): {', '.join(keys[:5])}")
    return arrays
