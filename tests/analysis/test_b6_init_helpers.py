"""Init helpers that are plain arithmetic (held-out batch 6: hyperlight's ``init.calculate_gain``, pfrl's
``lecun_normal`` through ``nn.init._calculate_correct_fan``): ``ms_calculate_gain``, ``ms_calculate_fan_in_and_fan_out``
and ``ms_calculate_correct_fan`` (data/curated) give torch's numbers. Converted with ``msmap convert --device CPU`` in
both families and run next to torch; the gain helper is also checked against torch for every nonlinearity torch
accepts and for generated slopes."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.analysis.b6_converted import assert_runs_as_torch, cases_fixture
from tests.analysis.executed import FAMILIES

INIT = '''import torch
import torch.nn as nn
from torch.nn import init

NAMES = ['linear', 'conv1d', 'conv2d', 'conv3d', 'conv_transpose1d', 'conv_transpose2d', 'conv_transpose3d',
         'sigmoid', 'tanh', 'relu', 'leaky_relu', 'selu']


def lecun_std(tensor, scale=1.0):
    fan_in = torch.nn.init._calculate_correct_fan(tensor, "fan_in")
    return scale / fan_in ** 0.5


def run(x):
    gains = [init.calculate_gain(name) for name in NAMES]
    gains += [nn.init.calculate_gain('leaky_relu', a) for a in (0, 0.2, 1, 3.5)]
    layers = [nn.Linear(4, 3), nn.Conv1d(2, 5, 3), nn.Conv2d(3, 4, (2, 5)), nn.ConvTranspose2d(3, 6, 2),
              nn.Conv3d(2, 2, 1)]
    fans = [v for m in layers for v in init._calculate_fan_in_and_fan_out(m.weight)]
    fans += [init._calculate_correct_fan(m.weight, mode) for m in layers for mode in ('fan_in', 'fan_out', 'FAN_OUT')]
    stds = [lecun_std(m.weight, 2.0) for m in layers]
    return x * 0 + torch.tensor(gains + fans + stds)
'''


executed = cases_fixture({"init-helpers": {"source": INIT, "inputs": {"x": [46]}}})


@pytest.mark.parametrize("family", FAMILIES)
def test_init_helpers_convert_and_match_torch(executed, family):
    assert_runs_as_torch(executed[f"{family}/init-helpers"], "ms_calculate_gain", "ms_calculate_fan_in_and_fan_out",
                         "ms_calculate_correct_fan")


@pytest.fixture(scope="module")
def gain(real_kb):
    """The helper the knowledge base writes, as a function (it calls no MindSpore API)."""
    target = next(t for t in real_kb.mapping("torch.nn.init.calculate_gain")["targets"] if t["family"] == "classic")
    space: dict = {}
    exec(target["helper"], space)  # noqa: S102 - the knowledge base's own helper text
    return space["ms_calculate_gain"]


NONLINEARITIES = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
                  "sigmoid", "tanh", "relu", "leaky_relu", "selu"]


@pytest.mark.parametrize("name", NONLINEARITIES)
def test_every_nonlinearity_torch_accepts(gain, name):
    from torch.nn import init

    assert gain(name) == init.calculate_gain(name) and type(gain(name)) is type(init.calculate_gain(name))


@settings(max_examples=40, deadline=None)
@given(param=st.one_of(st.none(), st.floats(-1e3, 1e3, allow_nan=False), st.integers(-50, 50), st.booleans(),
                       st.text(max_size=3)),
       name=st.sampled_from(NONLINEARITIES + ["softmax", "gelu", "Relu", ""]))
def test_gain_is_torch_s_or_raises_as_torch(gain, name, param):
    from torch.nn import init

    try:
        expected = init.calculate_gain(name, param)
    except ValueError as error:
        with pytest.raises(ValueError, match=str(error).split(" ")[0]):
            gain(name, param)
        return
    got = gain(name, param)
    assert got == expected or (math.isnan(got) and math.isnan(expected))
