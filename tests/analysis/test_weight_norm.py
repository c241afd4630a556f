"""Weight and spectral normalisation converted (data/curated/recipes.yaml: MsWeightNorm, MsSpectralNorm;
kb/analysis/rules/weight_norm_statements.py) and run next to torch: both key styles (``weight_g``/``weight_v``,
``weight_orig``/``weight_u``/``weight_v`` and the ``parametrizations.weight...`` names) load torch's state_dict through
kb.weights.map_weights; the forward in training mode and one training step (gradients of g, v, the weight and the
bias, an SGD update, spectral norm's u and v after two calls) and the forward in eval mode match torch under PyNative
and GRAPH_MODE; ``remove_weight_norm`` and ``remove_spectral_norm`` fold the weight as torch does. One model per
family, all MindSpore work in one child without torch."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.analysis.executed import run_without_torch
from tests.analysis.roundtrip import converted

MODEL = '''import torch
import torch.nn as nn
from torch.nn.utils import weight_norm, remove_weight_norm, spectral_norm, remove_spectral_norm
from torch.nn.utils.parametrizations import weight_norm as parametrized_weight_norm
from torch.nn.utils.parametrizations import spectral_norm as parametrized_spectral_norm
import torch.nn.utils as utils


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = weight_norm(nn.Conv1d(4, 6, 3, padding=1))
        self.grouped = weight_norm(nn.Conv1d(6, 6, 3, padding=2, dilation=2, groups=2), dim=1)
        self.blocks = nn.ModuleList([utils.weight_norm(nn.Conv1d(6, 6, 1), name="weight", dim=None)])
        self.critic = spectral_norm(nn.Conv1d(6, 6, 1))
        self.head = parametrized_weight_norm(nn.Linear(6, 5))
        self.tail = nn.Linear(5, 3)
        weight_norm(self.tail, dim=1)
        self.score = parametrized_spectral_norm(nn.Linear(3, 2), n_power_iterations=2)

    def forward(self, x):
        x = self.grouped(self.embed(x))
        for block in self.blocks:
            x = x + block(x)
        x = self.critic(x)
        return self.score(self.tail(self.head(x.mean(-1))))

    def remove(self):
        remove_weight_norm(self.embed)
        for block in self.blocks:
            remove_weight_norm(block)
        remove_spectral_norm(self.critic)
'''

LOSS = """import mindspore as ms


class Loss(ms.nn.Cell):  # (in a file: GRAPH_MODE compiles no code given with -c)
    def __init__(self, net):
        super().__init__(auto_prefix=False)
        self.net = net

    def construct(self, x, w):
        out = self.net(x)  # (one call: in training mode spectral norm's power method steps once per call, as torch's)
        return (out * w).sum(), out
"""

# Each family once (the classic one compiled): the helpers meet classic Conv1d and Dense, whose bias waits on
# has_bias, and mint Linear, whose construct passes its bias on
RUNS = [("mint", "pynative"), ("classic", "graph")]

RUN = """
import json

import mindspore as ms
import numpy as np

from kb.weights import map_weights
from kb.weights.convert import ms_params_of
from loss_cell import Loss

data = np.load({data!r})
state = {{k[2:]: data[k] for k in data.files if k.startswith("s:")}}
rules = json.load(open({rules!r}))
x, w = ms.Tensor(data["x"]), ms.Tensor(data["w"])

found = {{}}
for family, mode in {runs!r}:
    module = __import__(f"converted_{{family}}")
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    net = module.Net()
    net.set_train(True)  # (a torch module starts in training mode)
    mapped = map_weights(state, ms_params_of(net), rules=rules)
    for p in net.get_parameters():
        p.set_data(ms.Tensor(mapped.values[p.name]))
    params = net.trainable_params()
    step = ms.value_and_grad(Loss(net), grad_position=None, weights=params, has_aux=True)
    (_, out), grads = step(x, w)
    for p, g in zip(params, grads):
        ms.ops.assign(p, p - 0.1 * g)  # one SGD step, in place (a compiled graph does not see set_data)
    (_, stepped), _ = step(x, w)  # (the forward after it, from the graph compiled once)
    after = {{p.name: p.asnumpy().reshape(-1).tolist() for p in net.get_parameters()}}
    found[f"{{family}}/{{mode}}"] = {{
        "unfilled": mapped.unfilled_ms, "unused": mapped.unused_torch, "after": after,
        "out": out.asnumpy().tolist(), "stepped": stepped.asnumpy().tolist(),
        "grads": {{p.name: g.asnumpy().reshape(-1).tolist() for p, g in zip(params, grads)}}}}
    if mode == "graph":
        continue  # (GRAPH_MODE compiles each mode of each network again: eval and the fold once, under PyNative)
    net.set_train(False)
    found[f"{{family}}/{{mode}}"]["evaluated"] = net(x).asnumpy().tolist()
    folded = module.Net()
    folded.set_train(True)
    for p in folded.get_parameters():
        p.set_data(ms.Tensor(mapped.values[p.name]))
    folded.remove()
    found[f"{{family}}/{{mode}}"]["removed_names"] = sorted(p.name for p in folded.get_parameters())
    found[f"{{family}}/{{mode}}"]["removed"] = folded(x).asnumpy().tolist()
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def texts(classic, mint):
    return {"classic": converted(classic, MODEL), "mint": converted(mint, MODEL)}


def test_every_weight_norm_form_converts_with_nothing_left(texts):
    for text in texts.values():
        assert "# msmap:" not in text and "import torch" not in text, text
        assert "self.tail = MsWeightNorm(self.tail, dim=1)" in text  # torch changed it in place: the wrapper takes its place
        assert 'MsWeightNorm(ms.nn.Dense(6, 5), keys="parametrizations")' in text.replace("mint.nn.Linear", "nn.Dense")
        assert "MsWeightNorm.remove(self.embed)" in text and "MsSpectralNorm.remove(self.critic)" in text
        assert 'MsSpectralNorm(ms.nn.Dense(3, 2), n_power_iterations=2, keys="parametrizations")' in \
            text.replace("mint.nn.Linear", "nn.Dense")


def test_a_weight_norm_whose_argument_is_no_place_keeps_the_plain_call(classic):
    text = converted(classic, MODEL.replace("weight_norm(self.tail, dim=1)", "weight_norm(nn.Linear(5, 3))"))
    assert "\n        MsWeightNorm(ms.nn.Dense(5, 3))\n" in text  # dropped on both sides: nothing to assign


def test_converted_weight_norm_loads_torch_s_state_and_trains_as_torch_in_both_modes(texts, real_kb, tmp_path,
                                                                                   monkeypatch):
    import torch

    monkeypatch.chdir(tmp_path)  # (GRAPH_MODE writes its analysis files into the working directory)
    for family, text in texts.items():
        (tmp_path / f"converted_{family}.py").write_text(text)
    scope: dict = {}
    exec(MODEL, scope)
    torch.manual_seed(0)
    net = scope["Net"]()
    with torch.no_grad():  # g no longer ||v||, so g and v each count
        for name, p in net.named_parameters():
            if name.endswith(("weight_g", "original0")):
                p.mul_(torch.rand_like(p) + 0.5)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 7)).astype(np.float32)
    state = {k: v.detach().numpy().copy() for k, v in net.state_dict().items()}
    assert {"embed.weight_v", "head.parametrizations.weight.original1", "critic.weight_u",
            "score.parametrizations.weight.0._v"} <= set(state)
    out = net(torch.from_numpy(x))
    w = rng.standard_normal(tuple(out.shape)).astype(np.float32)
    (out * torch.from_numpy(w)).sum().backward()
    grads = {k: p.grad.numpy().reshape(-1) for k, p in net.named_parameters()}
    with torch.no_grad():
        for p in net.parameters():
            p -= 0.1 * p.grad
        stepped = net(torch.from_numpy(x)).numpy()
        after = {k: v.numpy().reshape(-1) for k, v in net.state_dict().items()}
        evaluated = net.eval()(torch.from_numpy(x)).numpy()
        folded = scope["Net"]()
        folded.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
        folded.remove()
        removed = folded(torch.from_numpy(x)).numpy()
    (tmp_path / "loss_cell.py").write_text(LOSS)
    np.savez(tmp_path / "data.npz", x=x, w=w, **{"s:" + k: v for k, v in state.items()})
    (tmp_path / "rules.json").write_text(json.dumps(real_kb.weight_rules()))
    done = run_without_torch(tmp_path, texts["classic"], RUN.format(
        data=str(tmp_path / "data.npz"), rules=str(tmp_path / "rules.json"), runs=RUNS))
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().split("\n")[-1])
    assert sorted(found) == sorted(f"{f}/{m}" for f, m in RUNS)
    for run, got in found.items():
        assert got["unfilled"] == [] and got["unused"] == [], run
        np.testing.assert_allclose(np.array(got["out"]), out.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=run)
        assert sorted(got["grads"]) == sorted(grads), run
        for name, g in got["grads"].items():
            np.testing.assert_allclose(np.array(g), grads[name], rtol=1e-5, atol=1e-5, err_msg=f"{run} {name}")
        np.testing.assert_allclose(np.array(got["stepped"]), stepped, rtol=1e-5, atol=1e-5, err_msg=run)
        assert sorted(got["after"]) == sorted(after), run  # spectral norm's u and v too, after two training calls
        for name, value in got["after"].items():
            np.testing.assert_allclose(np.array(value), after[name], rtol=1e-5, atol=1e-6, err_msg=f"{run} {name}")
        if "removed" in got:  # (under PyNative: eval mode, and the fold)
            np.testing.assert_allclose(np.array(got["evaluated"]), evaluated, rtol=1e-5, atol=1e-5, err_msg=run)
            assert got["removed_names"] == sorted(folded.state_dict()), run
            np.testing.assert_allclose(np.array(got["removed"]), removed, rtol=1e-5, atol=1e-5, err_msg=run)
    assert any("removed" in got for got in found.values())
