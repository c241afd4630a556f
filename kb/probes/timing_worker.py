"""Time ops in this (throw-away) process:  python -m kb.probes.timing_worker < cases.json

Runs under any interpreter that has numpy and the framework it times (the project's venv for
torch, a per-version venv for MindSpore), so it imports nothing from msmap but the probes' kernel
message pattern.  stdin: a JSON list of cases (``kb.probes.timing.cases``).  stdout: one JSON
result per case, flushed as each finishes.  After a MindSpore failure the worker stops (exit 3)
and the runner starts a fresh process for the rest, as for the equivalence probes.

A measurement: the case's setup and code build ``fn``; three warm-up calls (the first compiles
kernels); then 5-9 samples, each the mean of enough calls to last about 50 ms, the result waited for
once per sample (a MindSpore wait alone can take milliseconds).  One thread on every side.
"""
from __future__ import annotations

import importlib
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

STOP_AFTER_MS_ERROR = 3
# mindspore 2.7's wording for a missing CPU kernel (beside kb.probes.worker.NO_KERNEL_RE's)
MORE_NO_KERNEL_RE = re.compile(r"Not found op \S+ on device|Not implement exception")
SAMPLE_SECONDS = 0.05   # one sample lasts at least this long (the wait for a result is amortised)
MAX_INNER = 4096        # calls per sample at most
WARMUP = 3


def _exists(api: str) -> bool:
    """Does the dotted name resolve (module attributes, as the user would spell it)?"""
    parts = api.split(".")
    try:
        obj: Any = importlib.import_module(parts[0])
    except ImportError:
        return False
    for i, part in enumerate(parts[1:], 1):
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        try:
            obj = importlib.import_module(".".join(parts[:i + 1]))
        except ImportError:
            return False
    return True


def _namespace(side: str) -> tuple[dict[str, Any], Callable[[Any], Any]]:
    """Names the case code sees, and the function that waits for a result to be computed."""
    import numpy as np

    rng = np.random.default_rng(0)

    def normal(*shape: int) -> Any:
        return rng.standard_normal(shape).astype("float32")

    def integers(high: int, *shape: int) -> Any:
        return rng.integers(0, high, shape)

    if side == "torch":
        import torch

        torch.set_num_threads(1)
        torch.set_grad_enabled(False)
        ns = {"torch": torch, "nn": torch.nn, "F": torch.nn.functional,
              "randn": lambda *s: torch.from_numpy(normal(*s)),
              "randint": lambda hi, *s: torch.from_numpy(integers(hi, *s).astype("int64"))}
        return ns, lambda out: out  # torch's CPU ops return when done
    import mindspore as ms

    try:
        from mindspore.device_context.cpu import op_tuning

        op_tuning.threads_num(1)
    except ImportError:
        ms.set_context(runtime_num_threads=1)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(0)
    ns = {"ms": ms, "mindspore": ms, "nn": ms.nn, "ops": ms.ops, "Tensor": ms.Tensor,
          "randn": lambda *s: ms.Tensor(normal(*s)),
          "randint": lambda hi, *s: ms.Tensor(integers(hi, *s).astype("int32"))}
    if side == "mint":
        ns.update(mint=ms.mint, F=ms.mint.nn.functional)

    def sync(out: Any) -> Any:
        first = out[0] if isinstance(out, (tuple, list)) else out
        return first.asnumpy() if hasattr(first, "asnumpy") else first

    return ns, sync


def build(case: dict, ns: dict[str, Any]) -> Callable[[], Any]:
    """The case's callable: setup, then the side's code (an expression, or statements that set ``fn``)."""
    env = dict(ns)
    env.update(case.get("vars") or {})
    exec(compile(case.get("setup") or "", f"<timing {case['id']} setup>", "exec"), env)  # our own fixed code
    try:
        expr = compile(case["code"], f"<timing {case['id']}>", "eval")
    except SyntaxError:  # statements that assign fn
        exec(compile(case["code"], f"<timing {case['id']}>", "exec"), env)
        return env["fn"]
    return lambda: eval(expr, env)


def _sample(fn: Callable[[], Any], sync: Callable[[Any], Any], inner: int) -> float:
    """Seconds for ``inner`` calls and one wait for the last result."""
    t0 = time.perf_counter()
    out = None
    for _ in range(inner):
        out = fn()
    sync(out)
    return time.perf_counter() - t0


def measure(fn: Callable[[], Any], sync: Callable[[Any], Any], repeats: int, budget: float) -> dict:
    """Median milliseconds per call, the samples' interquartile spread (relative to the median).

    Waiting for a MindSpore result costs milliseconds of its own on a busy machine, so a sample is
    as many calls as last SAMPLE_SECONDS (doubling from one), with one wait at its end."""
    for _ in range(WARMUP):
        sync(fn())
    inner, took = 1, _sample(fn, sync, 1)
    while took < SAMPLE_SECONDS and inner < MAX_INNER:
        inner = min(MAX_INNER, inner * 2)
        took = _sample(fn, sync, inner)
    repeats = max(5, min(repeats, int(budget / max(took, 1e-9))))
    samples = [_sample(fn, sync, inner) / inner * 1000.0 for _ in range(repeats)]
    med = statistics.median(samples)
    q1, _, q3 = statistics.quantiles(samples, n=4)
    return {"ms": round(med, 5), "spread": round((q3 - q1) / med, 3) if med else 0.0,
            "samples": len(samples), "inner": inner}


def run_case(case: dict, ns: dict[str, Any], sync: Callable[[Any], Any]) -> dict:
    res: dict[str, Any] = {"probe": case["id"]}
    if not _exists(case["api"]):
        res.update(result="absent", detail=f"{case['api']} does not exist in this version")
        return res
    try:
        fn = build(case, ns)
        res.update(measure(fn, sync, int(case.get("repeats", 9)), float(case.get("budget", 3.0))))
        res["result"] = "timed"
    except Exception as exc:  # the op failed on this side: classify, never crash the batch
        from kb.probes.worker import NO_KERNEL_RE, _first_line

        text = f"{type(exc).__name__}: {exc}"
        kernel = NO_KERNEL_RE.search(text) or MORE_NO_KERNEL_RE.search(text)
        res.update(result="no_cpu_kernel" if kernel else "error",
                   detail=f"{type(exc).__name__}: {_first_line(exc)}", side=case["side"])
    return res


def main() -> int:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    cases = json.loads(sys.stdin.read() or "[]")
    if not cases:
        return 0
    ns, sync = _namespace(cases[0]["side"])
    for case in cases:
        res = run_case(case, ns, sync)
        sys.stdout.write(json.dumps(res) + "\n")
        sys.stdout.flush()
        if res.get("side") in ("classic", "mint"):
            return STOP_AFTER_MS_ERROR
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
