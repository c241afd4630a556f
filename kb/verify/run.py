"""Drive the two framework processes and turn their results into verdicts.

The MindSpore process starts first (its import is the slow part) and waits for its jobs on stdin
while the torch process builds the models and writes their weights; several model pairs share the
two processes.  Every process has a time limit.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kb.verify.child import load_arrays
from kb.verify.compare import compare_arrays, compare_outputs, compared_nothing, decode
from kb.verify.inputs import InputSpec, make_inputs
from kb.verify.lifetime import interruptible, work_folder


@dataclass
class Pair:
    torch_model: tuple[Path, str]
    ms_model: tuple[Path, str]
    inputs: list[InputSpec]
    seed: int = 0
    grad: bool = False
    rtol: float = 1e-4
    atol: float = 1e-5


@dataclass
class Verdict:
    verdict: str  # match | mismatch | error
    stage: str | None = None  # import, build, weights, forward, grad, compare (or the framework side)
    side: str | None = None  # torch | mindspore
    where: str = ""  # file:line in the user's code
    message: str = ""
    outputs: list[dict[str, Any]] = field(default_factory=list)
    grads: list[dict[str, Any]] = field(default_factory=list)
    weights: dict[str, Any] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return {"match": 0, "mismatch": 1}.get(self.verdict, 2)

    def as_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "stage": self.stage, "side": self.side, "where": self.where,
                "message": self.message, "outputs": self.outputs, "grads": self.grads, "weights": self.weights}


def _child(side: str, log: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONUNBUFFERED="1", GLOG_v="3")
    env.pop("MSMAP_DEBUG", None)
    with open(log, "wb") as out:
        return subprocess.Popen([sys.executable, "-m", "kb.verify.child", side, str(os.getpid())],
                                stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT, env=env)


def _finish(proc: subprocess.Popen, request: dict, deadline: float, log: Path, side: str) -> list[dict] | str:
    """Send the jobs, wait (bounded), read the results; a string says why there are none."""
    try:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(request).encode())
        proc.stdin.close()
    except BrokenPipeError:
        pass
    try:
        proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return f"the {side} process did not finish within the time limit (--timeout)"
    result = Path(request["result"])
    if not result.is_file():
        tail = log.read_text(errors="replace").strip().splitlines()[-3:] if log.is_file() else []
        return f"the {side} process exited with code {proc.returncode}: " + " | ".join(tail)[-400:]
    return json.loads(result.read_text())


def verify_many(pairs: list[Pair], timeout: float = 300.0, rules: list[dict] | None = None) -> list[Verdict]:
    """One torch and one MindSpore process for all pairs; one Verdict per pair.  ``rules``: the
    weight rules (default: the knowledge base's)."""
    from kb.weights.mapping import load_rules

    rules = rules if rules is not None else load_rules()
    deadline = time.monotonic() + timeout
    with interruptible(), work_folder() as work:
        procs = [_child("mindspore", work / "mindspore.log")]
        try:
            (work / "rules.json").write_text(json.dumps(rules))
            t_jobs = []
            for i, p in enumerate(pairs):
                arrays = make_inputs(p.inputs, p.seed)
                names = [f"input{j}" for j in range(len(arrays))]
                np.savez(work / f"in{i}.npz", **{f"a{j}": a for j, a in enumerate(arrays)})
                t_jobs.append({"model": [str(p.torch_model[0]), p.torch_model[1]], "seed": p.seed, "grad": p.grad,
                               "inputs": str(work / f"in{i}.npz"), "input_names": names, "prefix": str(work / f"t{i}")})
            procs.append(_child("torch", work / "torch.log"))
            t_res = _finish(procs[1], {"jobs": t_jobs, "result": str(work / "torch.json")}, deadline,
                            work / "torch.log", "torch")
            if isinstance(t_res, str):
                return [Verdict("error", "run", "torch", message=t_res) for _ in pairs]
            m_jobs = [{**t_jobs[i], "model": [str(p.ms_model[0]), p.ms_model[1]], "prefix": str(work / f"m{i}"),
                       "rules": str(work / "rules.json"), "state": t_res[i].get("state", []),
                       "state_file": t_res[i].get("state_file", "")}
                      for i, p in enumerate(pairs) if t_res[i]["ok"]]
            m_list = _finish(procs[0], {"jobs": m_jobs, "result": str(work / "mindspore.json")}, deadline,
                             work / "mindspore.log", "mindspore")
        finally:  # also on Ctrl-C, SIGTERM, SIGHUP (``interruptible``): no child outlives this run
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        if isinstance(m_list, str):
            return [Verdict("error", "run", "mindspore", message=m_list) for _ in pairs]
        m_iter = iter(m_list)
        return [_verdict(p, t, next(m_iter) if t["ok"] else None) for p, t in zip(pairs, t_res, strict=False)]


def _verdict(p: Pair, t: dict, m: dict | None) -> Verdict:
    if not t["ok"]:
        return Verdict("error", t["stage"], "torch", t["where"], t["message"])
    assert m is not None
    weights = m.get("weights", {})
    if not m["ok"]:
        return Verdict("error", m["stage"], "mindspore", m["where"], m["message"], weights=weights)
    rows, problem = compare_outputs(_named(t), _named(m), p.rtol, p.atol)
    v = Verdict("match", outputs=rows, weights=weights)
    if any(r.get("error") for r in rows):
        v.verdict, v.stage, v.message = "error", "compare", problem or ""
        return v
    if problem:
        v.verdict, v.stage, v.message = "mismatch", "forward", problem
        return v
    if compared_nothing(rows):
        v.verdict, v.stage = "error", "compare"
        shown = ", ".join(f"{r['name']} is None" for r in rows[:5]) or "an empty tuple, list or dict"
        v.message = f"nothing to compare: neither model returned a tensor or a value ({shown} on both sides)"
        return v
    if p.grad:
        v.grads, problem = _compare_grads(t, m, weights, p)
        if problem:
            v.verdict, v.stage, v.message = "mismatch", "grad", problem
    return v


def _named(res: dict) -> list[tuple[str, Any]]:
    return decode(res["outputs"], load_arrays(res["outputs_file"], res["output_arrays"]))


def _compare_grads(t: dict, m: dict, weights: dict, p: Pair) -> tuple[list[dict], str | None]:
    t_grads = load_arrays(t["grads_file"], t["grads"])
    m_grads = load_arrays(m["grads_file"], m["grads"])
    torch_of = {ms: tk for tk, ms in weights.get("matched", [])}
    rows = []
    for name, g in m_grads.items():
        tg = t_grads.get(torch_of.get(name, ""))
        if tg is None:
            continue
        scale = float(np.abs(tg).max()) if tg.size else 0.0
        rows.append(compare_arrays(f"grad {name}", tg.reshape(g.shape) if tg.size == g.size else tg, g,
                                   p.rtol, p.atol * max(1.0, scale)))
    missing = sorted(set(torch_of.values()) & set(t_grads) - {torch_of[n] for n in m_grads if n in torch_of})
    bad = next((r for r in rows if not r["ok"]), None)
    if bad:
        return rows, f"{bad['name']}: {bad['why']}"
    if missing:
        return rows, f"torch parameters with gradients but no trainable MindSpore twin: {', '.join(missing[:5])}"
    return rows, None
