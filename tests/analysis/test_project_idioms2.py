"""More idioms whole training projects stop at (issue 29, benchmarks/bench_projects.py), converted in both families and
run next to torch by tests/analysis/trained.py (a ``Net`` and a ``run(model, batches, log, *args, path)`` per case,
the converted text in a child where importing torch fails, from torch's initial weights and the same generated
batches; the logs and the trained parameters must agree).
"""
from __future__ import annotations

import pytest

from tests.analysis.trained import train_both_sides, trains_like_torch

# A sequence-tagging step (pytorch-ner's shape): a mask from ``arange(...).expand(size=...)``, whose rewrite settles
# over three passes into a fix that writes the text as it is, and ``logits.transpose(-1, -2)`` on an untyped result,
# rewritten behind a runtime type test. Fix-all kept re-applying the no-op fix until its passes ran out and then
# noted the first pass's guesses at their old offsets: a stray "if this is a tensor" note on an unrelated line.
MASKED_TAGGING = '''\
import torch
import torch.nn as nn


def masking(lengths):
    max_len = lengths.max()
    return torch.arange(end=max_len).expand(
        size=(lengths.shape[0], max_len)
    ) < lengths.unsqueeze(1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(self.emb(x))


def run(model, batches, log, path):
    criterion = nn.CrossEntropyLoss(reduction='none')
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for tokens, labels, lengths in batches:
        mask = masking(lengths)
        logits = model(tokens)
        loss_all = criterion(logits.transpose(-1, -2), labels)
        loss = torch.sum(loss_all * mask) / torch.sum(mask)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        log.append(loss.item())
'''


def _tagged(rng):
    return [(rng.integers(0, 10, (4, 6)), rng.integers(0, 3, (4, 6)), rng.integers(1, 7, 4)) for _ in range(4)]


# name -> (source, batches from a generator, the arguments of run between the log and the path)
CASES = {
    "masked-tagging": (MASKED_TAGGING, _tagged, []),
}


@pytest.fixture(scope="module")
def ran(classic, mint_cpu, tmp_path_factory):
    """Every case converted in both families and run next to torch (tests/analysis/trained.py)."""
    return train_both_sides(CASES, {"classic": classic, "mint": mint_cpu}, tmp_path_factory.mktemp("project_idioms2"))


@pytest.mark.parametrize("family", ["classic", "mint"])
def test_no_stray_note_after_a_fix_that_changes_nothing(ran, family):
    """The masked tagging step converts with no note anywhere (the guarded transpose is the only guess, and it is
    converted) and trains as torch's."""
    text = trains_like_torch(ran, "masked-tagging", family)
    assert "isinstance(logits, ms.Tensor)" in text
