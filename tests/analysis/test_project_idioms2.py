"""More idioms whole training projects stop at (issue 29, benchmarks/bench_projects.py), converted in both families and
run next to torch by tests/analysis/trained.py (a ``Net`` and a ``run(model, batches, log, *args, path)`` per case,
the converted text in a child where importing torch fails, from torch's initial weights and the same generated
batches; the logs and the trained parameters must agree).
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.roundtrip import converted
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


# A language model's batches cut from a token stream at NumPy window starts (picogpt's evaluation): ``stream[i:i + T]``
# with ``i`` a NumPy integer, and a NumPy array of positions as an index; MindSpore refuses both in an index.
NUMPY_WINDOWS = '''\
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(16, 8)
        self.head = nn.Linear(8, 16)

    def forward(self, x):
        return self.head(self.emb(x))


def run(model, batches, log, path):
    rng = np.random.default_rng(3)
    stream = torch.tensor(rng.integers(0, 16, 64), dtype=torch.long)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    T = 5
    for _ in batches:
        starts = rng.integers(0, 64 - T - 1, 6)
        order = np.argsort(starts)
        x = torch.stack([stream[i:i + T] for i in starts])[order]
        y = torch.stack([stream[i + 1:i + T + 1] for i in starts])[order]
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, 16), y.view(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log.append(loss.item())
'''


# An evaluation inside the loop (pytorch-tabnet's predict): a layer built and called at once,
# ``torch.nn.Softmax(dim=1)(out).detach().numpy()``, whose result the converter did not know for a tensor, and a NumPy
# chain ``np.asarray(p).reshape(...).transpose(1, 0)`` it took for one: both were left with "if this is a tensor".
INLINE_LAYER = '''\
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)


def run(model, batches, log, path):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        probs = torch.nn.Softmax(dim=1)(model(x)).detach().numpy()
        table = np.asarray(probs).reshape(-1, 3).transpose(1, 0)
        log.append(loss.item())
        log.append(float(table[0].sum()))
'''


# A trainer's evaluation (wavencoder's test_evaluate_classifier): ``model.to(device).eval()``, the mode set on what
# ``to`` returns (the module itself). Dropout makes the mode show: in training mode it would draw masks.
EVAL_CHAIN = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.fc(x))


def run(model, batches, log, path, device=torch.device("cpu")):
    model.train()
    model.to(device).eval()
    with torch.no_grad():
        for x, y in batches:
            log.append(F.cross_entropy(model(x), y).item())
'''


def _features(rng):
    return [(rng.standard_normal((5, 4)).astype(np.float32), rng.integers(0, 3, 5)) for _ in range(3)]


def _steps(rng):
    return [(rng.integers(0, 2, 1),) for _ in range(4)]


def _tagged(rng):
    return [(rng.integers(0, 10, (4, 6)), rng.integers(0, 3, (4, 6)), rng.integers(1, 7, 4)) for _ in range(4)]


# name -> (source, batches from a generator, the arguments of run between the log and the path)
CASES = {
    "masked-tagging": (MASKED_TAGGING, _tagged, []),
    "numpy-windows": (NUMPY_WINDOWS, _steps, []),
    "inline-layer": (INLINE_LAYER, _features, []),
    "eval-chain": (EVAL_CHAIN, _features, []),
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


@pytest.mark.parametrize("family", ["classic", "mint"])
def test_numpy_integers_and_arrays_index_a_tensor(ran, family):
    """Window starts from a NumPy generator as slice bounds and a NumPy array of positions as an index pass through
    ms_index (an int, a tensor) and the model trains as torch's; ``range``'s ints and enumerate's counter stay."""
    text = trains_like_torch(ran, "numpy-windows", family)
    assert "stream[ms_index(i):ms_index(i) + T] for i in starts" in text and "[ms_index(order)]" in text


def test_numpy_indices_leave_ints_and_other_receivers(classic):
    """No-op cases: a ``range`` loop's int, enumerate's counter, a list (not a tensor) indexed by a NumPy integer."""
    source = """import numpy as np
import torch


def pick(values, starts):
    t = torch.tensor(values)
    out = [t[n] for n in range(3)]
    for k, j in enumerate(starts):
        out.append(t[k])
    rows = list(values)
    return out, [rows[i] for i in np.arange(2)]
"""
    text = converted(classic, source)
    assert "ms_index" not in text, text


@pytest.mark.parametrize("family", ["classic", "mint"])
def test_layer_called_at_once_and_numpy_chains(ran, family):
    """``nn.Softmax(dim=1)(x)`` is a tensor (its .detach().numpy() converts), a chain of NumPy calls is NumPy's (its
    transpose stays), and the loop logs torch's numbers."""
    text = trains_like_torch(ran, "inline-layer", family)
    assert "np.asarray(probs).reshape(-1, 3).transpose(1, 0)" in text


def test_chains_from_data_libraries_are_not_tensors(classic):
    """A pandas or NumPy chain keeps its methods with no note; a chain starting at torch is still converted."""
    source = """import numpy as np
import pandas as pd
import torch


def f(y, x):
    kinds = pd.Series(y).map(type).unique()
    a = np.asarray(y).reshape(2, 3).transpose(1, 0)
    t = torch.from_numpy(a).transpose(0, 1)
    return kinds, a, t
"""
    text = converted(classic, source)
    assert "pd.Series(y).map(type).unique()\n" in text and "np.asarray(y).reshape(2, 3).transpose(1, 0)\n" in text
    assert "# msmap:" not in text and "transpose(0, 1)" not in text, text


@pytest.mark.parametrize("family", ["classic", "mint"])
def test_mode_set_on_what_to_returns(ran, family):
    """``model.to(device).eval()`` sets the Cell's mode (set_train(False)) after ``model.train()``: the evaluation
    logs torch's numbers (with the mode left as training, dropout would draw masks)."""
    text = trains_like_torch(ran, "eval-chain", family)
    assert "model.to(device).set_train(False)" in text
