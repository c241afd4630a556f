"""In-place initialisation on the CPU: ``tensor.uniform_/normal_``, ``nn.init.*_`` on Parameters and on plain tensors,
through ``.data`` (``p.data.normal_``, ``nn.init.normal_(m.weight.data, ...)``) and as a value
(``nn.Parameter(nn.init.xavier_uniform_(torch.empty(a, b)))``). MindSpore 2.10's InplaceUniform/InplaceNormal have no
CPU kernel and a plain Tensor has no ``set_data``; the conversion fills the tensor from a MindSpore initializer
(``ms_init_``: ``assign_value`` of the initializer's data). Values differ from torch's draws (a model loads torch's
weights afterwards), so each tensor is compared on what the draw means: shape, dtype, mean and spread, and bounds
where the distribution has them. The module is built and run in both families, in PyNative and GRAPH_MODE."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tests.analysis.executed import run_without_torch
from tests.analysis.roundtrip import converted

SOURCE = '''\
import math

import torch
import torch.nn as nn


class Initialised(nn.Module):
    def __init__(self, a=256, b=128):
        super().__init__()
        s = 1.0 / math.sqrt(a)
        w = torch.zeros(a, b)
        w.uniform_(-s, s)
        self.w = nn.Parameter(w)
        self.xu = nn.Parameter(nn.init.xavier_uniform_(torch.empty(a, b)))
        self.u = nn.Parameter(torch.empty(a, b))
        nn.init.uniform_(self.u, -0.5, 1.5)
        self.n = nn.Parameter(torch.empty(a, b))
        nn.init.normal_(self.n, 1.0, 0.3)
        self.t = torch.empty(a, b)
        nn.init.trunc_normal_(self.t, std=0.02)
        self.tb = nn.Parameter(torch.empty(a, b))
        nn.init.trunc_normal_(self.tb, mean=0.0, std=1.0, a=-0.5, b=0.5)
        self.c = nn.Parameter(torch.empty(b))
        nn.init.constant_(self.c, 0.7)
        self.z = torch.ones(b)
        nn.init.zeros_(self.z)
        self.o = nn.Parameter(torch.empty(b))
        nn.init.ones_(self.o)
        self.q = nn.Parameter(torch.empty(b, a))
        nn.init.orthogonal_(self.q, gain=2.0)
        self.fc = nn.Linear(b, a)
        nn.init.kaiming_uniform_(self.fc.weight, a=math.sqrt(5))
        self.fc.bias.data.uniform_()
        self.fc2 = nn.Linear(a, b)
        nn.init.xavier_normal_(self.fc2.weight)
        nn.init.normal_(self.fc2.bias.data, 0, 0.02)
        self.conv = nn.Conv2d(8, 16, 3)
        nn.init.kaiming_normal_(self.conv.weight, mode='fan_out', nonlinearity='relu')
        nn.init.zeros_(self.conv.bias)
        self.head = nn.Linear(b, 256)
        for p in self.head.parameters():
            p.data.normal_(0, 0.02)

    def forward(self, x):
        h = (x @ self.w) * self.o + self.c
        h = self.fc2(torch.relu(self.fc(h)))
        return self.head(h) + self.z.sum()
'''

TENSORS = ("w", "xu", "u", "n", "t", "tb", "c", "z", "o", "q", "fc.weight", "fc.bias", "fc2.weight", "fc2.bias",
           "conv.weight", "conv.bias", "head.weight", "head.bias")
BOUNDED = ("w", "xu", "u", "tb", "fc.weight", "fc.bias")  # uniform or truncated: their values stay within bounds
STATS = """
import json
import numpy as np
import mindspore as ms
import converted

def stats(v):
    v = np.asarray(v, dtype=np.float64)
    return [list(v.shape), float(v.mean()), float(v.std()), float(v.min()), float(v.max())]

m = converted.Initialised()
found = {name: stats(eval("m." + name).asnumpy()) for name in NAMES}
found["dtypes"] = sorted({str(eval("m." + name).dtype) for name in NAMES})
q = m.q.asnumpy().astype(np.float64)
found["q_gram"] = float(np.abs(q @ q.T - 4.0 * np.eye(q.shape[0])).max())
x = ms.Tensor(np.linspace(-1, 1, 3 * 256, dtype=np.float32).reshape(3, 256))
eager = m(x).asnumpy()
ms.set_context(mode=ms.GRAPH_MODE)
graph = m(x).asnumpy()
found["out"] = [list(eager.shape), bool(np.isfinite(eager).all()), float(np.abs(eager - graph).max())]
print(json.dumps(found))
"""


def _torch_stats() -> dict:
    import torch

    namespace: dict = {}
    exec(SOURCE, namespace)
    torch.manual_seed(0)
    module = namespace["Initialised"]()
    found = {}
    for name in TENSORS:
        v = eval("module." + name, {"module": module}).detach().numpy().astype(np.float64)
        found[name] = [list(v.shape), float(v.mean()), float(v.std()), float(v.min()), float(v.max())]
    out = module(torch.linspace(-1, 1, 3 * 256).reshape(3, 256))
    found["out"] = [list(out.shape), True, 0.0]
    return found


@pytest.fixture(scope="module")
def torch_stats():
    return _torch_stats()


@pytest.mark.parametrize("family", ["classic", "mint"])
def test_initialisers_draw_what_torch_draws_and_the_module_runs(request, family, torch_stats, tmp_path):
    text = converted(request.getfixturevalue(family), SOURCE)
    assert "# msmap:" not in text and ".data" not in text and ".set_data(" not in text
    done = run_without_torch(tmp_path, text, f"NAMES = {TENSORS!r}\n" + STATS)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().split("\n")[-1])
    assert found["dtypes"] == ["Float32"]
    for name in TENSORS:
        (shape, mean, std, low, high), (t_shape, t_mean, t_std, t_low, t_high) = found[name], torch_stats[name]
        assert shape == t_shape, name
        n = math.prod(shape)
        assert abs(mean - t_mean) <= 6 * max(t_std, std) / math.sqrt(n) + 1e-6, (name, mean, t_mean)
        # a sample's spread varies by about 1/sqrt(2n) of itself
        assert abs(std - t_std) <= max(0.05, 5 / math.sqrt(2 * n)) * t_std + 1e-6, (name, std, t_std)
        if name in BOUNDED:
            margin = 0.01 * (t_high - t_low)
            assert t_low - margin <= low and high <= t_high + margin, (name, low, high, t_low, t_high)
    assert found["q_gram"] < 1e-4  # orthogonal rows, scaled by the gain: q q^T = gain^2 I
    shape, finite, graph_gap = found["out"]
    assert shape == torch_stats["out"][0] and finite and graph_gap < 1e-5


def test_the_written_tensor_loses_data_and_a_plain_tensor_is_filled_too(classic):
    text = converted(classic, SOURCE)
    assert "ms_init_(self.fc2.bias, ms.common.initializer.Normal(sigma=0.02, mean=0))" in text
    assert "ms_init_(self.t, ms.common.initializer.TruncatedNormal(" in text
    assert "ms.Parameter(ms_init_(ms.mint.empty(a, b), ms.common.initializer.XavierUniform(gain=1.0)))" in text
    assert text.count("def ms_init_(") == 1


def test_an_init_function_not_written_in_place_keeps_its_data(classic):
    # only the tensor an in-place function writes loses .data: a value read from .data elsewhere stays
    source = "import torch.nn as nn\n\n\ndef copy_into(m, w):\n    nn.init.constant_(m.bias, float(w.data.sum()))\n"
    text = converted(classic, source)
    assert "ms_init_(m.bias, ms.common.initializer.Constant(float(w.data.sum())))" in text
