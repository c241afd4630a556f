"""Data pipelines convert in both families (``torch.utils.data`` -> ``mindspore.dataset.dataloader``, 2.10) and
give torch's batches: a TensorDataset, a Dataset subclass with ``__getitem__``/``__len__``, ``drop_last``,
``len(loader)``, a sampler; the converted module imports without torch."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kb.analysis.convert import convert_source
from tests.analysis.executed import run_without_torch

SCRIPT = '''\
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, SequentialSampler, TensorDataset

ON_GPU = torch.cuda.is_available() or torch.backends.mps.is_available()


class Pairs(Dataset):
    def __init__(self, n):
        g = np.random.RandomState(0)
        self.x = g.randn(n, 4).astype(np.float32)
        self.y = g.randint(0, 3, size=n)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def batches():
    x = torch.arange(24, dtype=torch.float32).reshape(12, 2)
    y = torch.arange(12)
    tensors = DataLoader(TensorDataset(x, y), batch_size=5, shuffle=False)
    items = torch.utils.data.DataLoader(Pairs(10), batch_size=4, drop_last=True)
    ordered = DataLoader(Pairs(7), batch_size=3, sampler=SequentialSampler(range(7)))
    seen = []
    for loader in (tensors, items, ordered):
        for xb, yb in loader:
            seen.append([list(xb.shape), str(xb.dtype).split(".")[-1].lower(), round(float(xb.sum()), 4),
                         str(yb.dtype).split(".")[-1].lower(), int(yb.sum())])
    return {"batches": seen, "lengths": [len(tensors), len(items), len(ordered)], "gpu": ON_GPU}
'''


@pytest.fixture(scope="module")
def torch_result(tmp_path_factory):
    folder = tmp_path_factory.mktemp("torch")
    (folder / "original.py").write_text(SCRIPT)
    done = subprocess.run([sys.executable, "-c", "import json, original; print(json.dumps(original.batches()))"],
                          cwd=folder, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("family", ["classic", "mint"])
def test_loaders_give_torchs_batches_without_torch(family, request, tmp_path, torch_result):
    converted = convert_source(request.getfixturevalue(family), SCRIPT).text
    assert "torch" not in converted.replace("torch.utils.data", ""), converted  # nothing left for a human
    assert "# msmap:" not in converted
    assert "mindspore.dataset.dataloader" in converted or "ms.dataset.dataloader" in converted
    done = run_without_torch(tmp_path, converted, """
        import json, converted
        print(json.dumps(converted.batches()))
    """)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["lengths"] == torch_result["lengths"] == [3, 2, 3]
    assert result["gpu"] is torch_result["gpu"] is False
    assert len(result["batches"]) == len(torch_result["batches"]) == 8
    for ours, theirs in zip(result["batches"], torch_result["batches"]):
        assert ours[:2] + ours[3:] == theirs[:2] + theirs[3:], (ours, theirs)  # shape, dtypes, labels
        assert ours[2] == pytest.approx(theirs[2], rel=1e-6), (ours, theirs)
