"""A weight-normalised layer's ``weight`` read after wrapping (held-out batch 6, pytorch-tdnn's tdnnf:
``nn.init.xavier_normal_(self.temporal_conv.weight)`` on a ``weight_norm(nn.Conv1d(...))`` stopped at "'MsWeightNorm'
object has no attribute 'weight'"). torch exposes the composed weight g * v / ||v|| there (an attribute the old
``weight_norm`` recomputes before every call, a property of the parametrisation), and an in-place init of it changes
nothing the layer uses; the converted wrapper (data/curated/recipes.yaml, MsWeightNorm) reads the same composed
weight at each read. Run next to torch in both families, in a child without torch."""
from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.executed import FAMILIES
from tests.analysis.loaded_state import run_with_torch_state
from tests.analysis.roundtrip import converted

MODEL = '''import torch
import torch.nn as nn
from torch.nn.utils import weight_norm
from torch.nn.utils.parametrizations import weight_norm as parametrized_weight_norm


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(4, 6, 3, padding=1, bias=False))
        self.grid = weight_norm(nn.Conv2d(6, 3, 1), dim=1)
        self.head = parametrized_weight_norm(nn.Linear(3, 5))
        nn.init.xavier_normal_(self.conv.weight)  # (the composed weight: torch recomputes it before each call)

    def forward(self, x):
        y = self.conv(x)
        y = self.grid(y[:, :, :, None])[:, :, :, 0]
        return self.head(y.mean(-1))

    def weights(self):
        return self.conv.weight * 1.0, self.grid.weight * 1.0, self.head.weight * 1.0
'''

RUN = """
for family in {families!r}:
    net = __import__(f"converted_{{family}}").Net()
    mapped = map_weights(state, ms_params_of(net), rules=rules)
    for p in net.get_parameters():
        p.set_data(ms.Tensor(mapped.values[p.name]))
    results[family] = {{"unfilled": mapped.unfilled_ms, "out": net(ms.Tensor(data["x"])).asnumpy().tolist(),
                       "weights": [w.asnumpy().reshape(-1).tolist() for w in net.weights()],
                       "shapes": [list(w.shape) for w in net.weights()]}}
"""


@pytest.fixture(scope="module")
def texts(classic, mint):
    engines = dict(zip(FAMILIES, (classic, mint), strict=True))
    return {family: converted(engine, MODEL) for family, engine in engines.items()}


def test_the_wrapped_layers_convert_with_nothing_left(texts):
    for text in texts.values():
        assert "# msmap:" not in text and "import torch" not in text, text
        assert "ms_init_(self.conv.weight" in text, text


def _torch_net():
    """torch's model, each g scaled so that it is no longer ||v|| (the composed weight is not v)."""
    import torch

    torch.manual_seed(0)
    scope: dict = {}
    exec(MODEL, scope)
    net = scope["Net"]()
    with torch.no_grad():
        for name, p in net.named_parameters():
            if name.endswith(("weight_g", "original0")):
                p.mul_(torch.rand_like(p) + 0.5)
    return net


def test_the_composed_weight_reads_as_torch_s_and_an_init_of_it_changes_nothing(texts, real_kb, tmp_path,
                                                                             monkeypatch):
    import torch

    net = _torch_net()
    monkeypatch.chdir(tmp_path)
    x = np.random.default_rng(0).standard_normal((2, 4, 7)).astype(np.float32)
    state = {k: v.detach().numpy().copy() for k, v in net.state_dict().items()}
    with torch.no_grad():
        out = net(torch.from_numpy(x)).numpy()
        weights = [w.numpy() for w in net.weights()]  # (after a call: the old weight_norm's attribute is fresh)
    found = run_with_torch_state(texts, state, {"x": x}, RUN, tmp_path, real_kb)
    for family in FAMILIES:
        got = found[family]
        assert got["unfilled"] == [], family
        np.testing.assert_allclose(np.array(got["out"]), out, rtol=1e-5, atol=1e-6, err_msg=family)
        for i, (value, shape, want) in enumerate(zip(got["weights"], got["shapes"], weights, strict=True)):
            assert tuple(shape) == want.shape, (family, i, shape)  # (a classic Conv1d's too: torch's layout)
            np.testing.assert_allclose(np.array(value), want.reshape(-1), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{family} weight {i}")
