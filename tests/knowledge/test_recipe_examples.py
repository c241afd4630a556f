"""The recipes' examples run: each example's MindSpore text, as stored in the knowledge base, is executed on the
installed MindSpore (in a subprocess) and compared with its torch text run on the same inputs."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

# torch name -> the inputs both sides see: one YAML file per curation round in recipe_cases/ (Python with NumPy:
# 'np' is numpy, a(*shape) a float32 standard-normal array)
CASES: dict[str, str] = {}
for _path in sorted((Path(__file__).parent / "recipe_cases").glob("*.yaml")):
    CASES.update(yaml.safe_load(_path.read_text()) or {})

RUNNER = r'''
import json, sys
import numpy as np
import mindspore, torch, functools
from mindspore import ops, nn, Tensor
import torch.nn.functional as F
rng = np.random.default_rng(0)
def a(*shape):
    return rng.standard_normal(shape).astype(np.float32)
def convert(v, to):
    if isinstance(v, np.ndarray):
        return to(v)
    if isinstance(v, list):
        return [convert(i, to) for i in v]
    return v
def value(v):
    if isinstance(v, (list, tuple)):
        return [value(i) for i in v]
    return v.asnumpy() if hasattr(v, "asnumpy") else v.detach().numpy() if hasattr(v, "detach") else np.asarray(v)
def same(m, t):
    if isinstance(t, list):
        return isinstance(m, list) and len(m) == len(t) and all(same(i, j) for i, j in zip(m, t))
    m, t = np.asarray(m, dtype=float), np.asarray(t, dtype=float)
    return m.shape == t.shape and bool(np.allclose(m, t, atol=1e-4))
out = {}
for case in json.loads(sys.stdin.read()):
    inputs = {}
    exec(case["inputs"], {"np": np, "a": a}, inputs)
    t_ns = {k: convert(v, torch.tensor) for k, v in inputs.items()}
    t_ns.update(torch=torch, F=F, np=np)
    m_ns = {k: convert(v, Tensor) for k, v in inputs.items()}
    m_ns.update(mindspore=mindspore, ops=ops, nn=nn, np=np, functools=functools)
    before = set(t_ns)
    t_code = case["torch"] if "=" in case["torch"].split("(")[0] else "xs = " + case["torch"]
    try:
        exec(t_code, t_ns)
        exec(case["mindspore"], m_ns)
    except Exception as exc:
        out[case["name"]] = f"{type(exc).__name__}: {exc}"
        continue
    names = [n for n in t_ns if n not in before and not n.startswith("__") and n != "indices"] or ["xs"]
    out[case["name"]] = all(same(value(m_ns[n]), value(t_ns[n])) for n in names)
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def results(real_kb):
    cases = []
    for name, inputs in CASES.items():
        example = next(t["example"] for t in real_kb.mapping(name)["targets"] if t.get("example"))
        cases.append({"name": name, "inputs": inputs, **example})
    proc = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(cases), capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_example_runs_and_agrees_with_torch(results, name):
    assert results[name] is True
