"""Small fixed timing rows for the tests (the shape of data/timing/*.jsonl)."""
from __future__ import annotations

from typing import Any, Optional

APIS = ["torch.nn.Conv2d", "torch.nn.functional.conv2d"]


def row(family: str, version: str, shape: str, ratio: Optional[float], op: str = "conv2d", result: str = "timed",
        spread: float = 0.05, device: str = "CPU", apis: Optional[list[str]] = None) -> dict[str, Any]:
    torch_ms = 4.0
    return {"op": op, "torch": (apis or APIS)[0], "torch_apis": apis or APIS, "family": family,
            "ms_api": "mindspore.nn.Conv2d" if family == "classic" else "mindspore.mint.nn.Conv2d",
            "device": device, "ms_version": version, "torch_version": "2.13.0", "shape": shape, "result": result,
            "ms": None if ratio is None else ratio * torch_ms, "spread": spread, "torch_ms": torch_ms,
            "torch_spread": spread, "ratio": ratio, "ratio_spread": None if ratio is None else 2 * spread,
            "date": "2026-11-25", "machine": "test machine, 2 cores", "detail": None}


def conv_rows() -> list[dict[str, Any]]:
    """Conv2d: ~34x slower on 2.10.0 than on 2.7.1 (classic), no CPU kernel in mint on 2.10.0."""
    out = []
    for shape, old, new in (("x[1,64,32,32]", 1.0, 34.0), ("x[4,128,16,16]", 1.5, 51.0)):
        out.append(row("classic", "2.7.1", shape, old))
        out.append(row("classic", "2.10.0", shape, new))
        out.append(row("mint", "2.7.1", shape, old * 1.1))
        out.append(row("mint", "2.10.0", shape, None, result="no_cpu_kernel"))
    return out


def dense_rows() -> list[dict[str, Any]]:
    """Linear: about torch's speed on both versions (no cliff)."""
    apis = ["torch.nn.Linear"]
    return [row(fam, v, "x[64,512]", r, op="linear", apis=apis)
            for fam in ("classic", "mint") for v, r in (("2.7.1", 1.2), ("2.10.0", 1.3))]
