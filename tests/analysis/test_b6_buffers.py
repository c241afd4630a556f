"""Persistent buffers carried with the weights (held-out batch 6, vn-transformer: its LayerNorm keeps ``beta`` as
``register_buffer('beta', torch.zeros(dim))``; no op differed: torch's state held a ``beta`` the MindSpore model never
received, because only parameters were filled, and the outputs differed by 5.39).

MindSpore 2.10's ``Cell.register_buffer`` keeps torch's buffer, ``Cell.state_dict`` lists the persistent ones, and a
checkpoint of parameters does not carry them: kb.weights.convert.ms_buffers_of names them and fill_buffers writes
torch's values into them, in the benchmark's weights stage and in ``msmap verify``. Run next to torch in both families,
in a child without torch."""
from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.executed import FAMILIES
from tests.analysis.loaded_state import run_with_torch_state
from tests.analysis.roundtrip import converted

MODEL = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Norm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(dim))
        self.register_buffer("beta", torch.zeros(dim))
        self.register_buffer("shift", torch.zeros(dim), persistent=False)

    def forward(self, x):
        return F.layer_norm(x, x.shape[-1:], self.gamma, self.beta) + self.shift


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 6)
        self.norm = Norm(6)

    def forward(self, x):
        return self.norm(self.proj(x))
'''

RUN = """
for family in {families!r}:
    net = __import__(f"converted_{{family}}").Net()
    net.set_train(False)
    x = ms.Tensor(data["x"])
    params, buffers = ms_params_of(net), ms_buffers_of(net)
    mapped = map_weights(state, {{**buffers, **params}}, rules=rules)
    for p in net.get_parameters():
        p.set_data(ms.Tensor(mapped.values[p.name]))
    before = net(x).asnumpy().tolist()
    filled = fill_buffers(net, mapped.values)
    results[family] = {{"buffers": sorted(buffers), "filled": filled, "before": before,
                       "out": net(x).asnumpy().tolist(), "unfilled": mapped.unfilled_ms}}
"""


@pytest.fixture(scope="module")
def texts(classic, mint):
    engines = dict(zip(FAMILIES, (classic, mint), strict=True))
    return {family: converted(engine, MODEL) for family, engine in engines.items()}


def test_torch_s_persistent_buffer_reaches_the_converted_model(texts, real_kb, tmp_path, monkeypatch):
    import torch

    torch.manual_seed(0)
    scope: dict = {}
    exec(MODEL, scope)
    net = scope["Net"]().eval()
    with torch.no_grad():  # (a checkpoint's buffer: no longer the zeros it was registered with)
        net.norm.beta.copy_(torch.rand(6) - 0.5)
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    state = {k: v.detach().numpy().copy() for k, v in net.state_dict().items()}
    assert "norm.beta" in state and "norm.shift" not in state
    with torch.no_grad():
        out = net(torch.from_numpy(x)).numpy()
    monkeypatch.chdir(tmp_path)
    for text in texts.values():
        assert "# msmap:" not in text and "import torch" not in text, text
    found = run_with_torch_state(texts, state, {"x": x}, RUN, tmp_path, real_kb)
    for family in FAMILIES:
        got = found[family]
        assert got["buffers"] == ["norm.beta"] and got["filled"] == ["norm.beta"], got  # (not the non-persistent one)
        assert got["unfilled"] == [], family
        assert not np.allclose(np.array(got["before"]), out, atol=1e-3), family  # the buffer matters here
        np.testing.assert_allclose(np.array(got["out"]), out, rtol=1e-5, atol=1e-6, err_msg=family)


def test_msmap_verify_gives_the_converted_model_torch_s_buffers(classic, real_kb, tmp_path):
    from kb.verify.inputs import parse_spec
    from kb.verify.run import Pair, verify_many

    torch_file = tmp_path / "net_torch.py"  # (a buffer drawn at random: the two sides draw different numbers)
    torch_file.write_text(MODEL.replace('self.register_buffer("beta", torch.zeros(dim))',
                                        'self.register_buffer("beta", torch.rand(dim) - 0.5)'))
    ms_file = tmp_path / "net_ms.py"
    ms_file.write_text(converted(classic, torch_file.read_text()))
    verdict, = verify_many([Pair((torch_file, "Net()"), (ms_file, "Net()"), [parse_spec("3,4")])], timeout=240,
                           rules=real_kb.weight_rules())
    assert verdict.verdict == "match", verdict.as_dict()
    assert ["norm.beta", "norm.beta"] in [list(pair) for pair in verdict.weights["matched"]], verdict.weights
