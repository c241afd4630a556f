"""``inplace=True`` of activation and dropout layers and functions (held-out batch 6's ``nn.ELU(inplace=True)``, which
stopped a build): the call converts without the switch (same values), automatically where nobody can read the input
torch overwrites, and with a marker on the line otherwise (rules/inplace_activations.py), the module still building
and running. Converted with ``msmap convert --device CPU`` in both families and run next to torch."""
from __future__ import annotations

import re

import pytest

from kb.analysis.convert import convert_source
from tests.analysis.b6_converted import assert_runs_as_torch, cases_fixture
from tests.analysis.executed import FAMILIES, run_without_torch

# every switch where the overwritten input is never read again: rebinding, a fresh temporary, a later place in a
# Sequential or a list of layers, a layer on self whose every call is one of those
UNOBSERVED = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.ELU(inplace=True)
        self.gate = nn.Hardtanh(-0.5, 0.5, inplace=True)
        self.seq = nn.Sequential(nn.Linear(4, 4), nn.LeakyReLU(0.1, inplace=True), nn.Dropout(0.3, inplace=True))
        layers = [nn.Linear(4, 4), nn.ReLU6(inplace=True)]
        self.listed = nn.Sequential(*layers)

    def forward(self, x):
        h = self.act(self.fc(x))
        h = self.gate(h)
        y = F.relu(h - 0.2, inplace=True)
        y = F.elu(y, 1.0, True)
        return self.seq(y) + self.listed(h) + F.leaky_relu(x * 2, 0.2, inplace=True)


def make():
    return Block()
'''

# torch's overwritten input read afterwards (x + y, h reused, the first layer of a Sequential, a layer appended
# to a list), and a call whose result nobody uses
OBSERVED = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ELU(inplace=True)  # observed
        self.first = nn.Sequential(nn.ReLU(inplace=True), nn.Linear(4, 4))  # observed
        mods = []
        mods.append(nn.SELU(inplace=True))  # observed
        self.mods = nn.Sequential(*mods)

    def forward(self, x):
        y = self.act(x)
        h = F.relu(y, inplace=True)  # observed
        return x + y + h + self.first(x) + self.mods(x)


def bare(x):
    F.relu(x, inplace=True)  # discarded
    return x
'''


executed = cases_fixture({"unobserved": {"source": UNOBSERVED, "inputs": {"x": [3, 4]}, "layer": True}})


@pytest.mark.parametrize("family", FAMILIES)
def test_unobserved_switches_convert_and_match_torch(executed, family):
    """No marker, the values and dtypes torch gives."""
    assert_runs_as_torch(executed[f"{family}/unobserved"])


@pytest.fixture(params=FAMILIES)
def engine(request):
    return request.getfixturevalue(request.param)


def test_observed_switches_are_marked_and_the_module_runs(engine, tmp_path):
    """Each line whose input may be read after torch overwrote it carries the marker, every other line none, and
    the converted module imports, builds and runs without torch (the layers are converted, not stand-ins)."""
    text = convert_source(engine, OBSERVED).source.decode()
    for line in text.splitlines():
        marked = "# msmap:" in line
        if "# observed" in line or "# discarded" in line:
            assert marked and ("overwrote the input" in line or "not used" in line), line
        else:
            assert not marked, line
    code = re.sub(r"  # (observed|discarded).*", "", text)
    done = run_without_torch(tmp_path, code.split("\ndef bare(", 1)[0] + "\n", """
        import numpy as np
        import mindspore as ms
        from converted import Block
        out = Block()(ms.Tensor(np.ones((2, 4), np.float32)))
        print(out.shape)
    """)
    assert done.returncode == 0 and "(2, 4)" in done.stdout, done.stderr[-2000:]
