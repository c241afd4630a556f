"""Training-step idioms of real projects (issue 29), converted in both families and trained next to torch.

Each script trains a small model a few steps in torch (here) and, converted with msmap (``--device CPU``), in
MindSpore in a child where torch cannot be imported, from the same weights and batches; the per-step losses
(and clipping norms) and the final parameters must match torch's. Idioms: gradient clipping between the backward
and the step (clip_grad_norm_ in its spellings, its norm assigned, norm_type inf, clip_grad_value_ under an
``if``), zero_grad anywhere (before the loop, after the step, ``set_to_none=True``, ``model.zero_grad()``, a
``p.grad = None`` loop), statements between the loss and its backward, data preparation before the forward, a
one-line loss, a trainer whose optimizer and model are attributes. Gradient accumulation is not converted: its
backward keeps a marker.
"""
from __future__ import annotations

import json
import runpy

import numpy as np
import pytest
import torch

from tests.analysis.executed import run_without_torch
from tests.analysis.roundtrip import converted

HEAD = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.nn.utils import clip_grad_norm_


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))

'''

CLIP_NORM = HEAD + '''
def run(model, batches, log):
    optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in batches:
        optimizer.zero_grad()
        out = model(x)
        loss = F.mse_loss(out, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.05)
        optimizer.step()
        log.append(loss.item())
    optimizer.zero_grad()
    for x, y in batches:
        loss = F.mse_loss(model(x), y)
        loss.backward()
        norm = clip_grad_norm_(model.parameters(), max_norm=0.02, norm_type=float('inf'))
        optimizer.step()
        optimizer.zero_grad()
        log.append(loss.item())
        log.append(norm.item())
'''

CLIP_VALUE = HEAD + '''
def run(model, batches, log, clip=0.01):
    criterion = nn.MSELoss()
    optimizer = optim.Adam(model.parameters(), lr=0.01)
    optimizer.zero_grad(set_to_none=True)
    for x, y in batches:
        x, y = x.float(), y.float()
        out = model(x)
        loss = criterion(out, y)
        log.append(loss.item())
        loss.backward()
        if clip:
            nn.utils.clip_grad_value_(model.parameters(), clip)
        optimizer.step()
        model.zero_grad()
'''

TRAINER = HEAD + '''
class Trainer:
    def __init__(self, model):
        self.model = model
        self.criterion = nn.MSELoss()
        self.optimizer = optim.SGD(self.model.parameters(), lr=0.05)

    def step(self, x, y, log):
        for param in self.model.parameters():
            param.grad = None
        total = 0.0
        loss = self.criterion(self.model(x), y)
        total += loss.item()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        log.append(total)


def run(model, batches, log):
    trainer = Trainer(model)
    for x, y in batches:
        trainer.step(x, y, log)
'''

ACCUMULATION = HEAD + '''
def run(model, batches, log):
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    for i, (x, y) in enumerate(batches):
        loss = F.mse_loss(model(x), y)
        loss = loss / 2
        loss.backward()
        if (i + 1) % 2 == 0:
            optimizer.step()
            optimizer.zero_grad()
'''

CHILD = '''
import json
import numpy as np
import mindspore as ms
import converted
data = np.load({data!r})
net = converted.Net()
for name, p in net.parameters_and_names():  # Linear keeps torch's parameter names in both families
    p.set_data(ms.Tensor(data[name]))
log = []
converted.run(net, [(ms.Tensor(data["x%d" % i]), ms.Tensor(data["y%d" % i])) for i in range({steps})], log)
print(json.dumps({{"log": log, "params": {{n: p.asnumpy().tolist() for n, p in net.parameters_and_names()}}}}))
'''
STEPS = 5


def _trained_like_torch(engine, source: str, tmp_path) -> str:
    """``source`` converted, then trained by torch here and by MindSpore without torch; both must agree."""
    text = converted(engine, source)
    assert "# msmap:" not in text and "import torch" not in text and "from torch" not in text, text
    (tmp_path / "source.py").write_text(source)
    reference = runpy.run_path(str(tmp_path / "source.py"))
    torch.manual_seed(0)
    model = reference["Net"]()
    rng = np.random.default_rng(0)
    batches = [(rng.uniform(-1, 1, (8, 4)).astype(np.float32), rng.uniform(-1, 1, (8, 3)).astype(np.float32))
               for _ in range(STEPS)]
    data = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    data.update({f"x{i}": x for i, (x, _) in enumerate(batches)}, **{f"y{i}": y for i, (_, y) in enumerate(batches)})
    np.savez(tmp_path / "data.npz", **data)
    want: list = []
    reference["run"](model, [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in batches], want)
    done = run_without_torch(tmp_path, text, CHILD.format(data=str(tmp_path / "data.npz"), steps=STEPS))
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(got["log"]) == len(want) >= STEPS
    assert got["log"] == pytest.approx(want, rel=1e-5, abs=1e-7)
    trained = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    assert max(float(np.abs(trained[k] - data[k]).max()) for k in trained) > 1e-3  # it did train
    for name, value in got["params"].items():
        np.testing.assert_allclose(np.array(value, np.float32), trained[name], rtol=1e-5, atol=1e-6)
    return text


@pytest.fixture(params=["classic", "mint"])
def engine(request, classic, mint_cpu):
    return classic if request.param == "classic" else mint_cpu


def test_clip_grad_norm_between_backward_and_step_trains_like_torch(engine, tmp_path):
    text = _trained_like_torch(engine, CLIP_NORM, tmp_path)
    assert "grads = ms_clip_grad_norm_(optimizer.parameters, grads, model.trainable_params(), 0.05)[0]" in text
    assert "grads, norm = ms_clip_grad_norm_(optimizer.parameters, grads" in text
    assert "zero_grad" not in text and text.count("def ms_clip_grad_norm_(") == 1


def test_guarded_clip_grad_value_and_zero_grad_anywhere_train_like_torch(engine, tmp_path):
    text = _trained_like_torch(engine, CLIP_VALUE, tmp_path)
    assert "grads = ms_clip_grad_value_(optimizer.parameters, grads, model.trainable_params(), clip)" in text
    assert "zero_grad" not in text
    assert "x, y = x.float(), y.float()\n        def forward_fn" in text  # data preparation stays out of the forward


def test_trainer_attributes_and_statements_before_the_backward_train_like_torch(engine, tmp_path):
    text = _trained_like_torch(engine, TRAINER, tmp_path)
    assert "self.optimizer(grads)" in text and ".grad = None" not in text and "zero_grad" not in text


def test_gradient_accumulation_keeps_its_marker(classic):
    text = converted(classic, ACCUMULATION)
    line = next(line for line in text.splitlines() if "loss.backward()" in line)
    assert "# msmap:" in line and "value_and_grad" not in text


def test_zero_grad_is_left_where_nothing_says_what_it_is(classic):
    source = "import torch\n\ndef reset(thing):\n    thing.zero_grad()\n"
    assert converted(classic, source).endswith("def reset(thing):\n    thing.zero_grad()\n")


def test_zero_grad_on_an_annotated_optimizer_is_removed_without_a_step(classic):
    source = ("import torch\n\ndef step(optimizer: torch.optim.Optimizer, model):\n"
              "    optimizer.zero_grad()\n    model(1)\n")
    text = converted(classic, source)
    assert "zero_grad" not in text and "    model(1)\n" in text
