"""The recipes' examples run: each example's MindSpore text, as stored in the knowledge base, is executed on the
installed MindSpore (in a subprocess) and compared with its torch text run on the same inputs."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

# torch name -> the inputs both sides see (NumPy expressions; 'np' is numpy)
CASES = {
    "torch._foreach_addcmul": "xs = [a(3), a(3)]; t1s = [a(3), a(3)]; t2s = [a(3), a(3)]",
    "torch._foreach_addcdiv": "xs = [a(3), a(3)]; t1s = [a(3), a(3)]; t2s = [a(3) + 5, a(3) + 5]",
    "torch._foreach_lerp": "xs = [a(3), a(3)]; ys = [a(3), a(3)]",
    "torch._foreach_clamp_min": "xs = [a(3), a(3)]",
    "torch.isin": "elements = np.array([[1, 2, 3], [4, 5, 6]]); test_elements = np.array([2, 5])",
    "torch.unflatten": "x = a(2, 12, 3)",
    "torch.Tensor.unflatten": "x = a(2, 12, 3)",
    "torch.mode": "x = np.array([[1., 2., 2., 3.], [4., 4., 1., 1.]], np.float32)",  # indices may differ: values only
    "torch.index_put": "x = a(3, 4); idx = np.array([0, 2]); values = np.ones((2, 4), np.float32)",
    "torch.nn.functional.bilinear": "x1 = a(2, 4); x2 = a(2, 3); w = a(5, 4, 3); b = a(5)",
    "torch.nn.functional.local_response_norm": "x = a(1, 6, 3, 3)",
    "torch.nn.functional.max_pool1d": "x = a(2, 3, 9)",
    "torch.corrcoef": "x = a(3, 6)",
    "torch.Tensor.take_along_dim": "x = a(3, 4); idx = np.argsort(a(3, 4), 1)",
    "torch.Tensor.kron": "x = a(2, 2); y = a(2, 3)",
    "torch._utils._unflatten_dense_tensors": "tensors = [a(2, 3), a(4)]; flat = a(10)",
}

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
