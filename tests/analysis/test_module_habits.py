"""Module habits met in real model files, converted in both families and run next to torch:

- a registered buffer given a new tensor (positional-encodings' ``cached_penc``): MindSpore's Cell refuses a Tensor
  assigned to a buffer's name, so the assignment goes through ``register_buffer`` with the buffer's persistence
  (rules/buffer_assignments.py);
- None held in a ``ModuleList`` (x-transformers' norms): the written list holds None at torch's index, and the
  parameters keep torch's indices (data/curated/module.yaml);
- an einops axis named like a parameter of the written helper (``x=``, ``reduction=``): its own parameters are
  positional-only (data/curated/third_party.yaml);
- ``getattr(F, name)`` with a name passed in (pytorch-tsmixer): a table of the proven conversions, with every
  function the knowledge base proves a plain rename for ``f(x)`` (runtimelookups.py)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kb.analysis import Engine, EngineSettings
from kb.analysis.convert import convert_source
from kb.probes.calls import Case
from tests.analysis.executed import FAMILIES, assert_converted_and_matching, convert_and_run
from tests.analysis.roundtrip import converted

ROOT = Path(__file__).resolve().parents[2]

BUFFER = '''import torch
import torch.nn as nn


class PosEnc(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.register_buffer("cached_penc", None, persistent=False)
        self.register_buffer("steps", torch.zeros(1), False)  # (a persistent one would be randomised by the harness)
        self.channels = channels

    def forward(self, x):
        self.steps += 1
        if self.cached_penc is not None and self.cached_penc.shape == x.shape:
            return self.cached_penc + x
        self.cached_penc = None
        pos = torch.arange(x.shape[1], dtype=x.dtype)[:, None] * torch.arange(self.channels, dtype=x.dtype)
        self.cached_penc = torch.sin(pos)[None].repeat(x.shape[0], 1, 1)
        return self.cached_penc + x


def make():
    return PosEnc(4)
'''

EINOPS = '''import torch
from einops import rearrange, reduce, repeat


def run(q):
    y = rearrange(q, 'b h (x y) d -> b (h x) y d', x=2, y=3)
    z = repeat(q, 'b h n d -> b h n d x', x=2)
    t = reduce(q, 'b h (x n) d -> b h n d', 'mean', x=2)
    return y, z, t
'''

EINOPS_LAYERS = '''import torch
import torch.nn as nn
from einops.layers.torch import Rearrange, Reduce


class Att(nn.Module):
    def __init__(self):
        super().__init__()
        self.split = Rearrange('b h (x y) d -> b h y x d', x=2)
        self.red = Reduce('b h (x n) d -> b h n d', 'sum', x=3)

    def forward(self, q):
        return self.split(q).sum(2) + self.red(q)


def make():
    return Att()
'''

GETATTR = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Mixer(nn.Module):
    def __init__(self, width, activation_fn="relu"):
        super().__init__()
        activation_fn = getattr(F, activation_fn)
        self.fc = nn.Linear(width, width)
        self.act = activation_fn

    def forward(self, x):
        return self.act(self.fc(x))


def make():
    return nn.Sequential(Mixer(5, "gelu"), Mixer(5, "tanh"), Mixer(5, "softsign"), Mixer(5))
'''

CASES = [("buffer-reassigned", BUFFER, {"x": [2, 3, 4]}, True),
         ("einops-axis-named-like-a-parameter", EINOPS, {"q": [2, 3, 6, 4]}, False),
         ("einops-layer-axis-named-x", EINOPS_LAYERS, {"q": [2, 3, 6, 4]}, True),
         ("getattr-functional-by-argument", GETATTR, {"x": [2, 5]}, True)]


@pytest.fixture(scope="module")
def executed(real_kb, tmp_path_factory):
    return convert_and_run(real_kb, tmp_path_factory, lambda family: [
        Case(id=f"{family}/{cid}", source=source, inputs=inputs, layer=layer) for cid, source, inputs, layer in CASES])


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("cid", [c[0] for c in CASES])
def test_converts_and_matches_torch(executed, family, cid):
    assert_converted_and_matching(executed[f"{family}/{cid}"], cid)


def test_a_buffer_takes_its_new_tensor_through_register_buffer_with_its_persistence(classic):
    text = converted(classic, BUFFER)
    assert 'self.register_buffer("cached_penc", ms_tile(' in text and "persistent=False)" in text
    assert 'self.register_buffer("steps", self.steps + (1), persistent=False)' in text
    assert "self.cached_penc = None" in text  # None: MindSpore keeps it as torch does


def test_assignments_to_other_names_stay(classic):
    source = BUFFER.replace('self.register_buffer("cached_penc", None, persistent=False)', "self.cached_penc = None")
    text = converted(classic, source)
    assert "self.cached_penc = ms_tile(" in text and 'register_buffer("cached_penc"' not in text


def test_a_subclass_assigns_its_base_s_buffer(classic):
    source = BUFFER + '''

class Child(PosEnc):
    def reset(self):
        self.steps = torch.zeros(1)
'''
    assert 'self.register_buffer("steps", ms.ops.zeros(1), persistent=False)' in converted(classic, source)


def test_the_einops_helper_s_own_parameters_end_in_an_underscore_as_no_axis_name_does(classic):
    text = converted(classic, EINOPS)  # (not positional-only: GRAPH_MODE compiles none)
    assert "def apply(x_, pattern_, reduction_=None, **axes_lengths):" in text


def test_getattr_on_functional_lists_the_functions_proven_as_plain_renames(classic):
    text = converted(classic, GETATTR)
    assert "ms_torch_nn_functional(activation_fn)" in text and "# msmap:" not in text
    table = text.split("found = {", 1)[1].split("}", 1)[0]
    for name in ('"relu"', '"gelu"', '"tanh"', '"sigmoid"', '"softsign"'):
        assert name in table
    assert '"normalize"' not in table and '"dropout"' not in table


LIST = '''import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.layers = nn.ModuleList([])
        for i in range(depth):
            norms = nn.ModuleList([nn.LayerNorm(dim), None, nn.LayerNorm(dim) if i else None])
            self.layers.append(nn.ModuleList([norms, nn.Linear(dim, dim)]))
        self.tail = nn.ModuleList([None, nn.Linear(dim, dim)])
        self.tail.insert(0, nn.Identity())

    def forward(self, x):
        for norms, fc in self.layers:
            a, b, c = norms
            assert b is None and norms[1] is None and len(norms) == 3 and len(norms[1:]) == 2
            x = fc(a(x))
            if c is not None:
                x = c(x)
        for layer in self.tail:
            if layer is not None:
                x = layer(x)
        return x
'''

CHILD = '''
import json, runpy, sys
import numpy as np
import torch
import mindspore as ms
from kb.weights import map_weights

torch.manual_seed(0)
source, converted, family = sys.argv[1:4]
reference, net = runpy.run_path(source)["Net"](4, 2).eval(), runpy.run_path(converted)["Net"](4, 2)
rng = np.random.default_rng(1)
state = {k: rng.uniform(0.5, 1.5, v.shape).astype(np.float32) for k, v in reference.state_dict().items()}
reference.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
params = {p.name: (tuple(p.shape), str(p.dtype)) for p in net.get_parameters()}
mapped = map_weights(state, params, family)
for p in net.get_parameters():
    p.set_data(ms.Tensor(mapped.values[p.name]))
x = rng.uniform(-1, 1, (2, 4)).astype(np.float32)
diff = float(np.abs(reference(torch.from_numpy(x)).detach().numpy() - net(ms.Tensor(x)).asnumpy()).max())
print(json.dumps({"torch": sorted(state), "names": sorted(params), "pairs": sorted(mapped.sources.items())
                  if hasattr(mapped, "sources") else [], "unfilled": mapped.unfilled_ms,
                  "unused": mapped.unused_torch, "diff": diff}))
'''


@pytest.mark.parametrize("family", FAMILIES)
def test_a_module_list_holding_none_keeps_torch_s_indices_and_output(real_kb, tmp_path, family):
    engine = Engine(real_kb, EngineSettings(family=family, device="CPU"))
    text = convert_source(engine, LIST).text
    assert "import torch" not in text and "# msmap:" not in text
    (tmp_path / "source.py").write_text(LIST)
    (tmp_path / "converted.py").write_text(text)
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "source.py"), str(tmp_path / "converted.py"),
                           family], capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["unfilled"] == [] and result["unused"] == []
    assert len(result["names"]) == len(result["torch"])  # one to one
    assert {n.rsplit(".", 1)[0] for n in result["names"]} == {n.rsplit(".", 1)[0] for n in result["torch"]}
    assert "layers.1.0.2.weight" in result["torch"] and "tail.2.weight" in result["names"]
    assert result["diff"] < 1e-5
