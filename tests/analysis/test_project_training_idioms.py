"""Idioms whole training projects stop at (issue 29, benchmarks/bench_projects.py), converted in both families and
run next to torch by tests/analysis/trained.py (a ``Net`` and a ``run(model, batches, log, *args, path)`` per case,
the converted text in a child where importing torch fails, from torch's initial weights and the same batches).
"""
from __future__ import annotations

import pytest

from tests.analysis.roundtrip import converted
from tests.analysis.trained import train_both_sides, trains_like_torch

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


@pytest.fixture(scope="module")
def ran(classic, mint_cpu, tmp_path_factory):
    """Every case converted in both families and run next to torch (tests/analysis/trained.py)."""
    return train_both_sides(CASES, {"classic": classic, "mint": mint_cpu}, tmp_path_factory.mktemp("training_idioms"))


@pytest.mark.parametrize("family", ["classic", "mint"])
@pytest.mark.parametrize("name", ["adam", "adam-amsgrad"])
def test_adam_takes_torchs_steps(ran, name, family):
    """torch.optim.Adam becomes MsAdam (experimental.optim.Adam's class with torch's update): rows of rare tokens
    whose gradients are near eps, amsgrad, weight decay, a StepLR schedule and a resume from the optimizer's
    state_dict all land on torch's parameters (experimental.optim.Adam alone: 1e-3 apart here)."""
    text = trains_like_torch(ran, name, family, rtol=1e-5, atol=2e-7)
    assert "class MsAdam(ms.experimental.optim.Adam)" in text and "MsAdam(model.trainable_params()" in text


@pytest.mark.parametrize("family", ["classic", "mint"])
def test_adam_passed_as_a_value_builds_msadam(ran, family):
    """``optimizer_fn=torch.optim.Adam``: the reference becomes ms_Adam (torch's parameters, raising for
    decoupled_weight_decay) building MsAdam, and trains as torch's (it refused to build before)."""
    text = trains_like_torch(ran, "adam-reference", family, rtol=1e-5, atol=2e-7)
    assert "optimizer_fn=ms_Adam" in text and "return MsAdam(params=params, lr=lr" in text


def test_adam_of_another_library_is_kept(classic):
    source = "import torch\nfrom mylib import Adam\n\n\ndef make(model):\n    return Adam(model.parameters(), lr=0.1)\n"
    assert "MsAdam" not in converted(classic, source)
