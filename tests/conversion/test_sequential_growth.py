"""Blocks added to Sequential containers by name run and load torch's weights after conversion.

A snippet written for this test (not a corpus file) grows containers the ways real models do:
``self.features.add_module`` on an attached ``nn.Sequential``, ``self.add_module`` inside a
``Sequential`` subclass and inside a ``ModuleDict`` subclass, and layers set as attributes of a
``Sequential`` subclass. The converted code is run with MindSpore next to torch in a child
process: the parameter names must map onto torch's state dict and the outputs must match.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kb.analysis import Engine, EngineSettings
from kb.analysis.convert import convert_source

ROOT = Path(__file__).resolve().parents[2]

SOURCE = '''from collections import OrderedDict
from torch import nn


class Pair(nn.ModuleDict):
    def __init__(self):
        super().__init__()
        for i in range(11):
            self.add_module("layer%d" % (i + 1), nn.Linear(4, 4))

    def forward(self, x):
        for name, layer in self.items():
            x = layer(x)
        return x


class Stage(nn.Sequential):
    def __init__(self, n):
        super().__init__()
        for i in range(n):
            self.add_module(f"block{i}-x", nn.Linear(4, 4))


class Transition(nn.Sequential):
    def __init__(self, c):
        super().__init__()
        self.norm = nn.LayerNorm(c)
        self.relu = nn.ReLU(inplace=True)
        self.fc = nn.Linear(c, 3)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(OrderedDict([("fc0", nn.Linear(4, 4))]))
        self.features.add_module("pair", Pair())
        self.features.add_module("stage", Stage(2))
        self.head = Transition(4)

    def forward(self, x):
        return self.head(self.features(x))
'''

CHILD = '''
import json, runpy, sys
import numpy as np
import torch
import mindspore as ms
from kb.weights import map_weights

torch.manual_seed(0)
source, converted, family = sys.argv[1:4]
reference, net = runpy.run_path(source)["Net"]().eval(), runpy.run_path(converted)["Net"]()
state = {k: v.detach().numpy() for k, v in reference.state_dict().items()}
for k in state:  # a wrong LayerNorm mapping must not pass on default weights
    if "norm" in k:
        state[k] = np.random.default_rng(1).uniform(0.5, 1.5, state[k].shape).astype(np.float32)
reference.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
params = {p.name: (tuple(p.shape), str(p.dtype)) for p in net.get_parameters()}
mapped = map_weights(state, params, family)
for p in net.get_parameters():
    p.set_data(ms.Tensor(mapped.values[p.name]))
x = np.random.default_rng(2).uniform(-1, 1, (2, 4)).astype(np.float32)
diff = float(np.abs(reference(torch.from_numpy(x)).detach().numpy() - net(ms.Tensor(x)).asnumpy()).max())
print(json.dumps({"names": sorted(params), "unfilled": mapped.unfilled_ms, "unused": mapped.unused_torch,
                  "diff": diff}))
'''


@pytest.mark.parametrize("family", ["classic", "mint"])
def test_blocks_added_by_name_run_with_torch_weights(real_kb, tmp_path, family):
    engine = Engine(real_kb, EngineSettings(family=family, device="CPU"))
    text = convert_source(engine, SOURCE).text
    assert "from torch" not in text and "import torch" not in text and "# msmap:" not in text
    (tmp_path / "source.py").write_text(SOURCE)
    (tmp_path / "converted.py").write_text(text)
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "source.py"), str(tmp_path / "converted.py"),
                           family], capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["unfilled"] == [] and result["unused"] == []
    assert "features.pair.layer11.weight" in result["names"]  # named from the parent's place
    assert "features.stage.block1-x.bias" in result["names"]
    assert result["diff"] < 1e-5
