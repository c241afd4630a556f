"""Training-script idioms that stopped whole projects (issue 29), converted in both families and run next to torch:
typed tensor constructors given data (``torch.FloatTensor(list)``, ``torch.LongTensor(array)``) or sizes."""
from __future__ import annotations

import json
import runpy

import numpy as np
import pytest
import torch

from tests.analysis.executed import run_without_torch
from tests.analysis.roundtrip import converted


@pytest.fixture(params=["classic", "mint"])
def engine(request, classic, mint_cpu):
    return classic if request.param == "classic" else mint_cpu


def _run_both(engine, source: str, tmp_path, call: str) -> tuple[object, object, str]:
    """``source`` run by torch here and converted without torch; ``call`` (an expression on the module ``m``)
    returns plain Python values (lists, floats) on both sides."""
    text = converted(engine, source)
    assert "# msmap:" not in text and "import torch" not in text, text
    (tmp_path / "source.py").write_text(source)
    want = json.loads(json.dumps(eval(call, {"m": type("M", (), runpy.run_path(str(tmp_path / "source.py")))})))
    done = run_without_torch(tmp_path, text, f"""
        import json
        import converted as m
        print(json.dumps({call}))
    """)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), want, text


TYPED = '''\
import numpy as np
import torch


def rows():
    table = [[0.5, 1.25], [2.0, -3.5]]
    ids = np.array([2.7, 0.2, 1.9])
    weights = torch.FloatTensor(table)
    picked = torch.LongTensor(ids)
    counts = torch.IntTensor([[1, 2], [3, 4]])
    mask = torch.BoolTensor([1, 0, 3])
    raw = torch.ByteTensor(np.arange(4))
    exact = torch.DoubleTensor(table) / 3
    empty = torch.FloatTensor(2, 3)
    return [weights[picked.clamp(max=1)].tolist(), str(picked.dtype).split('.')[-1].lower(), counts.sum().item(),
            mask.tolist(), raw.tolist(), exact.tolist(), list(empty.shape), str(raw.dtype).split('.')[-1].lower()]
'''


def test_typed_tensor_constructors_take_data_and_sizes_like_torch(engine, tmp_path):
    got, want, text = _run_both(engine, TYPED, tmp_path, "m.rows()")
    assert "ms_typed_tensor(ms.int64, ids)" in text and "ms_typed_tensor(ms.float32, 2, 3)" in text
    assert got == want


METRICS = '''\
import torch
import torch.nn as nn


def to_numpy(tensor):
    return tensor.detach().cpu().numpy() if tensor.requires_grad else tensor.cpu().numpy()


def accuracy(logits, target):
    return (logits.argmax(dim=1) == target).float().mean().item()


def frozen(model: nn.Module):
    for name, p in model.named_parameters():
        if name.startswith('0.'):
            p.requires_grad_(False)
    leaf = torch.zeros(2).requires_grad_()
    return [p.requires_grad for p in model.parameters()], leaf.shape[0]


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    x = torch.arange(12.0).reshape(4, 3) / 10
    logits = model(x)
    target = torch.tensor([0, 1, 1, 0])
    return to_numpy(x).tolist(), round(accuracy(logits, target), 6), frozen(model)
'''


def test_metric_code_reads_requires_grad_and_takes_tensors_to_numpy_like_torch(engine, tmp_path):
    got, want, text = _run_both(engine, METRICS, tmp_path, "m.run()")
    assert 'if getattr(tensor, "requires_grad", False) else tensor.asnumpy()' in text
    assert "leaf = ms_requires_grad_(ms." in text and "ms.ops.stop_gradient(tensor).asnumpy() if" in text
    # the same weights are not loaded: only what does not depend on them is compared (accuracy is a float either way)
    assert got[0] == want[0] and got[2] == want[2] and isinstance(got[1], float)


CHECKPOINT = '''\
import safetensors.torch as st
from safetensors.torch import load_file, save_model


def export(tensors, path, model_path, model):
    st.save_file(tensors, path, metadata={"step": "3"})
    save_model(model, model_path)


def read(path):
    return {name: value.float().tolist() for name, value in sorted(load_file(path).items())}
'''


def test_safetensors_files_are_written_and_read_in_torchs_format(engine, tmp_path):
    from safetensors.torch import load_file, save_file

    text = converted(engine, CHECKPOINT)
    assert "st = MsSafetensors" in text and "load_file, save_model = MsSafetensors.load_file" in text
    assert "import safetensors" not in text and "# msmap:" not in text
    rng = np.random.default_rng(3)
    values = {"w": rng.standard_normal((3, 2)).astype(np.float32), "b": rng.standard_normal(2)}
    # torch writes, the converted code reads: every dtype torch gives, bfloat16 included
    torch_file = tmp_path / "torch.safetensors"
    save_file({"w": torch.from_numpy(values["w"]), "h": torch.from_numpy(values["w"]).bfloat16(),
               "i": torch.arange(5), "m": torch.tensor([True, False]), "b": torch.from_numpy(values["b"])},
              str(torch_file))
    done = run_without_torch(tmp_path, text, f"""
        import json
        import numpy as np
        import mindspore as ms
        import converted
        print(json.dumps(converted.read({str(torch_file)!r})))
        net = ms.nn.Dense(2, 3)
        tensors = {{"w": ms.Tensor(np.array({values['w'].tolist()!r}, np.float32)),
                    "h": ms.Tensor(np.array({values['w'].tolist()!r}, np.float32)).astype(ms.bfloat16),
                    "i": ms.Tensor(np.arange(4), ms.int64), "m": ms.Tensor(np.array([False, True]))}}
        converted.export(tensors, {str(tmp_path / 'ms.safetensors')!r}, {str(tmp_path / 'model.safetensors')!r}, net)
        print(json.dumps({{n: p.asnumpy().tolist() for n, p in net.parameters_and_names()}}))
    """)
    assert done.returncode == 0, done.stderr[-3000:]
    read, params = (json.loads(line) for line in done.stdout.strip().splitlines()[-2:])
    want = {name: value.float().tolist() for name, value in sorted(load_file(str(torch_file)).items())}
    assert read == want
    # the converted code writes, torch reads: the same values and dtypes, its metadata
    written = load_file(str(tmp_path / "ms.safetensors"))
    assert written["w"].dtype == torch.float32 and written["h"].dtype == torch.bfloat16
    assert written["i"].dtype == torch.int64 and written["m"].tolist() == [False, True]
    assert torch.equal(written["h"], torch.from_numpy(values["w"]).bfloat16())
    np.testing.assert_array_equal(written["w"].numpy(), values["w"])
    from safetensors import safe_open

    with safe_open(str(tmp_path / "ms.safetensors"), "pt") as f:
        assert f.metadata() == {"step": "3"}
    model = load_file(str(tmp_path / "model.safetensors"))
    assert sorted(model) == sorted(params)
    for name, value in params.items():
        np.testing.assert_array_equal(model[name].numpy(), np.array(value, np.float32))


HELD_MODEL = '''\
import torch
import torch.nn as nn


class Runner:
    def __init__(self):
        self.model = nn.Sequential(nn.Linear(3, 2), nn.Dropout(0.5))


def evaluate(runner, x):
    runner.model.eval()
    out = runner.model(x)
    flags = [runner.model.training, out.shape[1]]
    runner.model.train()
    return flags + [runner.model.training]


def run():
    return evaluate(Runner(), torch.ones(4, 3))
'''


def test_a_model_held_by_another_object_switches_mode_where_it_is_called(engine, tmp_path):
    got, want, text = _run_both(engine, HELD_MODEL, tmp_path, "m.run()")
    assert "runner.model.set_train(False)" in text and "runner.model.set_train()" in text
    assert got == want == [False, 2, True]
