"""Idioms whole training projects stop at (issue 29, benchmarks/bench_projects.py), converted in both families and
run next to torch: each case is a small torch script with a ``Net`` and a ``run(model, batches, log, *args, path)`` (``path``: a file it may save to); torch
runs it here, the converted text runs in one child per module where importing torch fails, from torch's initial
weights (given by position: both sides register parameters in the same order) and the same batches. The logs and
the trained parameters must agree.
"""
from __future__ import annotations

import json
import runpy

import numpy as np
import pytest
import torch

from tests.analysis.executed import run_without_torch
from tests.analysis.roundtrip import converted

# Adam on an embedding table whose gradients are clipped small: the rows of rare tokens get gradients near eps, where
# MindSpore's ops.Adam (eps added before the bias correction) moved them less than torch; amsgrad, which that class
# ignored; a resume from the optimizer's state_dict, which must carry the step count and both moments
ADAM = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(12, 4)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(self.emb(x)).mean(1)


def train(model, batches, log, amsgrad, path, resume):
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=1e-4 if amsgrad else 0.0, amsgrad=amsgrad)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    if resume:
        checkpoint = torch.load(path)
        optimizer.load_state_dict(checkpoint['optimizer'])
        scheduler.load_state_dict(checkpoint['scheduler'])
    for x, y in batches:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1e-3)
        optimizer.step()
        scheduler.step()
        log.append(loss.item())
    torch.save({'optimizer': optimizer.state_dict(), 'scheduler': scheduler.state_dict()}, path)


def run(model, batches, log, amsgrad, path):
    train(model, batches[:3], log, amsgrad, path, False)
    train(model, batches[3:], log, amsgrad, path, True)
'''

# the class handed over as a value (a library's optimizer_fn=torch.optim.Adam default): an adapter with torch's
# parameters building MsAdam
ADAM_REFERENCE = ADAM.split("def train(")[0] + '''def run(model, batches, log, path, optimizer_fn=torch.optim.Adam):
    optimizer = optimizer_fn(model.parameters(), lr=0.01, amsgrad=True)
    for x, y in batches:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        log.append(loss.item())
'''


def _tokens(rng):
    return [(rng.integers(0, 12, (6, 5)), rng.integers(0, 3, 6)) for _ in range(6)]


# name -> (source, batches from a generator, the arguments of run between the log and the path)
CASES = {
    "adam": (ADAM, _tokens, [False]),
    "adam-amsgrad": (ADAM, _tokens, [True]),
    "adam-reference": (ADAM_REFERENCE, _tokens, []),
}

CHILD = '''
import importlib, json, sys, warnings
import numpy as np
import mindspore as ms
warnings.simplefilter("ignore")
out = {}
for case in json.loads(sys.argv[1] if len(sys.argv) > 1 else %r):
    module = importlib.import_module(case["module"])
    data = np.load(case["data"])
    net = module.Net()
    for i, (_, p) in enumerate(net.parameters_and_names()):
        p.set_data(ms.Tensor(data["p%%d" %% i]))
    batches = [tuple(ms.Tensor(data["b%%d_%%d" %% (i, j)]) for j in range(case["arrays"])) for i in range(case["steps"])]
    log = []
    try:
        module.run(net, batches, log, *case["args"])
        out[case["module"]] = {"log": log, "params": [p.asnumpy().tolist() for _, p in net.parameters_and_names()]}
    except Exception as exc:
        out[case["module"]] = {"error": "%%s: %%s" %% (type(exc).__name__, exc)}
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def ran(classic, mint_cpu, tmp_path_factory):
    """Every case converted in both families, run by torch here and by MindSpore in one child: {(case, family):
    (converted text, torch's log and parameters, MindSpore's result)}."""
    folder = tmp_path_factory.mktemp("training_idioms")
    cases, torch_side, texts = [], {}, {}
    for name, (source, make, args) in CASES.items():
        module = name.replace("-", "_")
        (folder / f"{module}_torch.py").write_text(source)
        reference = runpy.run_path(str(folder / f"{module}_torch.py"))
        torch.manual_seed(0)
        model = reference["Net"]()
        batches = make(np.random.default_rng(len(name)))
        data = {f"p{i}": p.detach().numpy().copy() for i, p in enumerate(model.parameters())}
        data |= {f"b{i}_{j}": a for i, b in enumerate(batches) for j, a in enumerate(b)}
        np.savez(folder / f"{module}.npz", **data)
        log: list = []
        reference["run"](model, [tuple(torch.from_numpy(a) for a in b) for b in batches], log, *args,
                         str(folder / f"{module}.torch-ckpt"))
        torch_side[name] = (log, [p.detach().numpy() for p in model.parameters()])
        for family, engine in (("classic", classic), ("mint", mint_cpu)):
            text = converted(engine, source)
            texts[(name, family)] = text
            (folder / f"{module}_{family}.py").write_text(text)
            cases.append({"module": f"{module}_{family}", "data": str(folder / f"{module}.npz"),
                          "arrays": len(batches[0]), "steps": len(batches),
                          "args": args + [str(folder / f"{module}_{family}.ckpt")]})
    done = run_without_torch(folder, "", CHILD % json.dumps(cases))
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    return {(name, family): (texts[(name, family)], torch_side[name], got[f"{name.replace('-', '_')}_{family}"])
            for name in CASES for family in ("classic", "mint")}


def _trains_like_torch(ran, name, family, rtol=1e-5, atol=1e-6):
    text, (log, params), result = ran[(name, family)]
    assert "# msmap:" not in text and "import torch" not in text and "from torch" not in text, text
    assert "error" not in result, result["error"]
    assert result["log"] == pytest.approx(log, rel=1e-5, abs=1e-7)
    assert len(result["params"]) == len(params)
    for got, want in zip(result["params"], params):
        np.testing.assert_allclose(np.array(got, np.float32), want, rtol=rtol, atol=atol)
    return text


@pytest.mark.parametrize("family", ["classic", "mint"])
@pytest.mark.parametrize("name", ["adam", "adam-amsgrad"])
def test_adam_takes_torchs_steps(ran, name, family):
    """torch.optim.Adam becomes MsAdam (experimental.optim.Adam's class with torch's update): rows of rare tokens
    whose gradients are near eps, amsgrad, weight decay, a StepLR schedule and a resume from the optimizer's
    state_dict all land on torch's parameters (experimental.optim.Adam alone: 1e-3 apart here)."""
    text = _trains_like_torch(ran, name, family, rtol=1e-5, atol=2e-7)
    assert "class MsAdam(ms.experimental.optim.Adam)" in text and "MsAdam(model.trainable_params()" in text


@pytest.mark.parametrize("family", ["classic", "mint"])
def test_adam_passed_as_a_value_builds_msadam(ran, family):
    """``optimizer_fn=torch.optim.Adam``: the reference becomes ms_Adam (torch's parameters, raising for
    decoupled_weight_decay) building MsAdam, and trains as torch's (it refused to build before)."""
    text = _trains_like_torch(ran, "adam-reference", family, rtol=1e-5, atol=2e-7)
    assert "optimizer_fn=ms_Adam" in text and "return MsAdam(params=params, lr=lr" in text


def test_adam_of_another_library_is_kept(classic):
    source = "import torch\nfrom mylib import Adam\n\n\ndef make(model):\n    return Adam(model.parameters(), lr=0.1)\n"
    assert "MsAdam" not in converted(classic, source)
