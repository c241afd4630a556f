"""Checkpoints convert: torch.save / torch.load become the ms_save / ms_load helpers written into the file.

A training script written for this test trains 3 steps, saves model + optimizer + epoch with torch.save,
builds a fresh model and optimizer, restores them with torch.load + load_state_dict and trains 3 more steps.
Converted per family, the script imports no torch and, run where torch cannot be imported, from torch's
initial weights and batches, gives torch's six losses. ms_load refuses a file torch wrote; a file ms_save
wrote comes back with its containers, key order and dtypes.
"""
from __future__ import annotations

import ast
import json
from collections import OrderedDict

import numpy as np
import pytest
import torch

from kb.analysis import Engine, EngineSettings
from kb.analysis.convert import convert_source
from tests.analysis.executed import run_without_torch

TRAINING = '''import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def train(model, optimizer, batches):
    losses = []
    loss_fn = nn.MSELoss()
    for x, y in batches:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def run(model, make_model, batches, path):
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = train(model, optimizer, batches[:3])
    torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(), 'epoch': 3}, path)
    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    checkpoint = torch.load(path, map_location='cpu')
    model.load_state_dict(checkpoint['model'])
    optimizer.load_state_dict(checkpoint['optimizer'])
    losses += train(model, optimizer, batches[3:])
    return losses, checkpoint['epoch']
'''

CONVERTED_RUN = '''
import json, sys
import numpy as np
import mindspore as ms
import converted

init = np.load(sys.argv[1])
data = np.load(sys.argv[2])
batches = [(ms.Tensor(data["x"][i]), ms.Tensor(data["y"][i])) for i in range(6)]

def make_model():
    net = converted.Net()  # another start than torch's: the checkpoint must bring the trained weights
    for name, p in net.parameters_and_names():
        p.set_data(ms.Tensor(np.zeros(p.shape, np.float32)))
    return net

net = converted.Net()
for name, p in net.parameters_and_names():  # Linear keeps torch's parameter names in both families
    p.set_data(ms.Tensor(init[name]))
losses, epoch = converted.run(net, make_model, batches, sys.argv[3])
print(json.dumps({"losses": losses, "epoch": epoch}))
'''


def _convert(real_kb, family: str, source: str) -> str:
    return convert_source(Engine(real_kb, EngineSettings(family=family, device="CPU")), source).text


def _imports_torch(text: str) -> bool:
    for node in ast.walk(ast.parse(text)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        if any(n == "torch" or n.startswith("torch.") for n in names):
            return True
    return False


@pytest.mark.parametrize("family", ["classic", "mint"])
def test_training_resumes_from_a_checkpoint_like_torch(real_kb, tmp_path, family):
    text = _convert(real_kb, family, TRAINING)
    assert not _imports_torch(text) and "# msmap:" not in text, text
    assert "ms_save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(), 'epoch': 3}, path)" in text
    assert "checkpoint = ms_load(path)" in text and "def ms_save(obj, f):" in text and "def ms_load(f):" in text
    assert "model.load_state_dict(checkpoint['model'])" in text
    assert "ms_optim_load_state_dict(optimizer, checkpoint['optimizer'])" in text

    namespace: dict = {}
    exec(compile(TRAINING, "training.py", "exec"), namespace)
    torch.manual_seed(0)
    model = namespace["Net"]()
    init = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    rng = np.random.default_rng(0)
    xs, ys = rng.uniform(-1, 1, (6, 8, 4)).astype(np.float32), rng.uniform(-1, 1, (6, 8, 1)).astype(np.float32)
    batches = [(torch.from_numpy(xs[i]), torch.from_numpy(ys[i])) for i in range(6)]
    want, epoch = namespace["run"](model, namespace["Net"], batches, str(tmp_path / "torch.pth"))

    np.savez(tmp_path / "init.npz", **init)
    np.savez(tmp_path / "data.npz", x=xs, y=ys)
    program = "import sys\nsys.argv = [''] + " + repr([str(tmp_path / "init.npz"), str(tmp_path / "data.npz"),
                                                       str(tmp_path / "ms.ckpt")]) + CONVERTED_RUN
    done = run_without_torch(tmp_path, text, program)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["epoch"] == epoch == 3
    assert got["losses"] == pytest.approx(want, rel=1e-5), (got["losses"], want)


HELPERS = '''import torch


def save(obj, f):
    torch.save(obj, f)


def load(f):
    return torch.load(f, map_location='cpu', weights_only=False)
'''

ROUND_TRIP = '''
import collections, json, sys
import numpy as np
import mindspore as ms
from converted import load, save

folder = sys.argv[1]
out = {}
for name in ("zip.pt", "legacy.pt"):  # written by torch: refused with the reason
    try:
        load(folder + "/" + name)
        out[name] = "loaded"
    except ValueError as error:
        out[name] = str(error)
x = ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
obj = {"b": collections.OrderedDict([("z", x), ("a", ms.Parameter(x * 2, name="p"))]),
       "a": [x.astype(ms.float16), (ms.Tensor(np.array([1.5, -2.25, 3e38]), ms.bfloat16), 7, "s")],
       "i": ms.Tensor(np.array([1, -2], np.int64)), "m": ms.Tensor(np.array([True, False])),
       "n": np.ones(2, np.float64), "e": 3}
save(obj, folder + "/nested.ckpt")
with open(folder + "/nested.ckpt", "rb") as fh:
    back = load(fh)
od, seq = back["b"], back["a"]
out["round"] = {
    "keys": list(back), "od": type(od).__name__, "od_keys": list(od),
    "seq": [type(seq).__name__, type(seq[1]).__name__],
    "dtypes": [str(v.dtype) for v in (od["z"], od["a"], seq[0], seq[1][0], back["i"], back["m"])],
    "types": [type(v).__name__ for v in (od["a"], back["n"])], "rest": [seq[1][1], seq[1][2], back["e"]],
    "bf16": seq[1][0].astype(ms.float32).asnumpy().tolist(),
    "bf16_before": obj["a"][1][0].astype(ms.float32).asnumpy().tolist(), "param": od["a"].asnumpy().tolist(),
    "int": back["i"].asnumpy().tolist(), "mask": back["m"].asnumpy().tolist()}
print(json.dumps(out))
'''


def test_ms_load_refuses_torch_files_and_round_trips_nested_containers(real_kb, tmp_path):
    text = _convert(real_kb, "mint", HELPERS)
    assert not _imports_torch(text) and "ms_save(obj, f)" in text and "return ms_load(f)" in text, text
    torch.save({"w": torch.ones(2)}, tmp_path / "zip.pt")
    torch.save({"w": torch.ones(2)}, tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    program = "import sys\nsys.argv = ['', " + repr(str(tmp_path)) + "]" + ROUND_TRIP
    done = run_without_torch(tmp_path, text, program)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    for name in ("zip.pt", "legacy.pt"):
        assert str(tmp_path / name) in out[name] and "PyTorch checkpoint" in out[name], out[name]
        assert "msmap weights" in out[name]
    got = out["round"]
    assert got["keys"] == ["b", "a", "i", "m", "n", "e"]
    assert got["od"] == OrderedDict.__name__ and got["od_keys"] == ["z", "a"] and got["seq"] == ["list", "tuple"]
    assert got["dtypes"] == ["Float32", "Float32", "Float16", "BFloat16", "Int64", "Bool"]
    assert got["types"] == ["Tensor", "ndarray"]  # a Parameter comes back as a Tensor; a NumPy array stays one
    assert got["rest"] == [7, "s", 3]
    assert got["bf16"] == got["bf16_before"] and got["bf16"][:2] == [1.5, -2.25]  # bfloat16 bits kept exactly
    assert got["param"] == [[0, 2, 4], [6, 8, 10]] and got["int"] == [1, -2] and got["mask"] == [True, False]


def test_a_custom_pickle_module_is_left_for_a_human(real_kb):
    source = "import pickle\nimport torch\n\n\ndef save(obj, f):\n    torch.save(obj, f, pickle_module=pickle)\n"
    text = _convert(real_kb, "classic", source)
    assert "ms_save" not in text and "torch.save(obj, f, pickle_module=pickle)" in text
