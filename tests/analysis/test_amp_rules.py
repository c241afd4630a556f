"""Mixed precision (issue 29): autocast regions and GradScaler steps, converted in both families and trained next to
torch on this CPU-only machine.

torch here: a cuda autocast is disabled (float32), a cuda GradScaler disables itself (scale 1.0, every step taken), a
cpu GradScaler scales for real (and skips a step whose gradients overflow), a cpu autocast computes in bfloat16. The
converted code (MsAutocast, MsGradScaler written into the file, the step as mindspore.value_and_grad) must give
torch's per-step losses, scales and trained parameters; a region torch computes in bfloat16 must raise when entered.
"""
from __future__ import annotations

import json
import runpy

import numpy as np
import pytest
import torch

from tests.analysis.executed import run_without_torch
from tests.analysis.roundtrip import converted

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")

HEAD = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(5, 7)
        self.fc2 = nn.Linear(7, 2)

    def forward(self, x):
        return self.fc2(torch.sigmoid(self.fc1(x)))

'''

# the recipe of torch's AMP page, written for CUDA: on a CPU-only machine both are off and the run is float32
CUDA_RECIPE = HEAD + '''
def run(model, batches, log):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
    scaler = torch.cuda.amp.GradScaler()
    for x, y in batches:
        optimizer.zero_grad()
        with torch.cuda.amp.autocast():
            out = model(x)
            loss = F.mse_loss(out, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        log.append(loss.item())
        log.append(scaler.get_scale())
    log.append(len(scaler.state_dict()))
'''

# a cpu scaler scales for real: an initial scale so large that the first scaled loss overflows (the step skipped, the
# scale backed off far below float32's limit), growth every 2 clean steps; unscale_ before clipping; the scaler's
# state restored into a new one
CPU_SCALER = HEAD + '''
from torch.amp import GradScaler, autocast


def run(model, batches, log):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = GradScaler('cpu', init_scale=2.0 ** 127, growth_factor=4.0, backoff_factor=2.0 ** -20, growth_interval=2)
    for x, y in batches:
        optimizer.zero_grad(set_to_none=True)
        with autocast(device_type='cuda', dtype=torch.float16):
            loss = F.mse_loss(model(x), y) * 1000.0
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        scaler.step(optimizer)
        scaler.update()
        log.append(loss.item())
        log.append(scaler.get_scale())
    state = scaler.state_dict()
    again = torch.amp.GradScaler('cpu')
    again.load_state_dict(state)
    log.append(again.get_scale())
    log.append(again.state_dict()['_growth_tracker'])
'''

# the usual switch between an AMP step and a plain one, the forward in an autocast region before the if
SWITCH = HEAD + '''
class Trainer:
    def __init__(self, model, use_scaler):
        self.model = model
        self.use_scaler = use_scaler
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9)
        self.scaler = torch.amp.GradScaler('cpu', init_scale=256.0, enabled=use_scaler)

    def step(self, x, y):
        self.optimizer.zero_grad()
        with torch.autocast('cuda', enabled=self.use_scaler):
            out = self.model(x)
            loss = F.smooth_l1_loss(out, y)
        if self.use_scaler:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            loss.backward()
            self.optimizer.step()
        return loss.item()


def run(model, batches, log):
    first, second = Trainer(model, True), Trainer(model, False)
    for i, (x, y) in enumerate(batches):
        log.append((first if i % 2 else second).step(x, y))
    log.append(first.scaler.get_scale())
    log.append(second.scaler.get_scale())
'''

# autocast as a decorator, turned off by a literal, and asked of the CPU with a dtype its autocast refuses
DECORATED = HEAD + '''
@torch.autocast('cuda')
def forward(model, x):
    return model(x)


def run(model, batches, log):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.3)
    for x, y in batches:
        with torch.autocast('cpu', enabled=False):
            out = forward(model, x)
        with torch.cpu.amp.autocast(dtype=torch.float64):
            loss = F.l1_loss(out, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        log.append(loss.item())
'''

CHILD = '''
import json
import warnings
import numpy as np
import mindspore as ms
import converted
warnings.simplefilter("ignore")
data = np.load({data!r})
net = converted.Net()
for name, p in net.parameters_and_names():
    p.set_data(ms.Tensor(data[name]))
log = []
converted.run(net, [(ms.Tensor(data["x%d" % i]), ms.Tensor(data["y%d" % i])) for i in range({steps})], log)
print(json.dumps({{"log": log, "params": {{n: p.asnumpy().tolist() for n, p in net.parameters_and_names()}}}}))
'''
STEPS = 6
_logged: list = []  # torch's log of the last run


def _trained_like_torch(engine, source: str, tmp_path) -> str:
    """``source`` converted, then trained by torch here and by MindSpore without torch, from the same weights and
    batches: the logs (losses, scales) and the trained parameters must agree."""
    text = converted(engine, source)
    assert "# msmap:" not in text and "import torch" not in text and "from torch" not in text, text
    (tmp_path / "source.py").write_text(source)
    reference = runpy.run_path(str(tmp_path / "source.py"))
    torch.manual_seed(0)
    model = reference["Net"]()
    rng = np.random.default_rng(1)
    batches = [(rng.uniform(-1, 1, (8, 5)).astype(np.float32), rng.uniform(-1, 1, (8, 2)).astype(np.float32))
               for _ in range(STEPS)]
    data = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    data.update({f"x{i}": x for i, (x, _) in enumerate(batches)}, **{f"y{i}": y for i, (_, y) in enumerate(batches)})
    np.savez(tmp_path / "data.npz", **data)
    want: list = []
    with pytest.warns(UserWarning) if "GradScaler()" in source else _nothing():
        reference["run"](model, [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in batches], want)
    _logged[:] = want
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


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.fixture(params=["classic", "mint"])
def engine(request, classic, mint_cpu):
    return classic if request.param == "classic" else mint_cpu


def test_cuda_autocast_and_grad_scaler_train_in_float32_like_torch_on_cpu(engine, tmp_path):
    text = _trained_like_torch(engine, CUDA_RECIPE, tmp_path)
    assert "scaler = MsGradScaler('cuda')" in text and "with MsAutocast('cuda'):" in text
    assert "ms.value_and_grad(scaler.scaled(forward_fn), None, optimizer.parameters, has_aux=True)()" in text
    assert "scaler.step(optimizer, grads)" in text and "scaler.update()" in text and "zero_grad" not in text


def test_cpu_grad_scaler_skips_overflowing_steps_and_moves_its_scale_like_torch(engine, tmp_path):
    text = _trained_like_torch(engine, CPU_SCALER, tmp_path)
    assert _logged[1::2][:6] == [2.0 ** 107, 2.0 ** 107, 2.0 ** 109, 2.0 ** 109, 2.0 ** 111, 2.0 ** 111]
    assert "grads = scaler.unscale_(optimizer, grads)" in text
    assert "grads = ms_clip_grad_norm_(optimizer.parameters, grads, model.trainable_params(), 0.5)[0]" in text


def test_a_step_switching_between_scaler_and_plain_backward_trains_like_torch(engine, tmp_path):
    text = _trained_like_torch(engine, SWITCH, tmp_path)
    assert text.count("def forward_fn():") == 1  # defined once, before the if; each branch takes its gradients
    assert "self.scaler.step(self.optimizer, grads)" in text and "self.optimizer(grads)" in text


def test_autocast_decorator_literal_off_and_refused_dtype_run_as_written(engine, tmp_path):
    text = _trained_like_torch(engine, DECORATED, tmp_path)
    assert "@MsAutocast('cuda')" in text and "MsAutocast('cpu', dtype=ms.float64)" in text
    assert "enabled=False" not in text.split("def run")[1]  # the literal off: the with-item removed


# a target computed under no_grad from the same model before the autocast forward: it stays outside the function
# value_and_grad differentiates (moved in, with no_grad gone, gradients would flow through it)
TARGET_WITHOUT_GRAD = HEAD + '''
def run(model, batches, log):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
    for x, y in batches:
        with torch.no_grad():
            target = model(x) * 0.5 + y
        with torch.autocast('cuda'):
            out = model(x)
        loss = F.mse_loss(out, target)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        log.append(loss.item())
'''


def test_a_no_grad_block_before_the_autocast_forward_stays_outside_it(engine, tmp_path):
    text = _trained_like_torch(engine, TARGET_WITHOUT_GRAD, tmp_path)
    assert "target = model(x) * 0.5 + y\n        def forward_fn():\n            with MsAutocast('cuda'):" in text


BFLOAT16 = HEAD + '''
def predict(model, x):
    with torch.autocast('cpu'):
        return model(x)
'''


def test_a_region_torch_computes_in_bfloat16_raises_when_entered(engine, tmp_path):
    (tmp_path / "source.py").write_text(BFLOAT16)
    reference = runpy.run_path(str(tmp_path / "source.py"))
    assert reference["predict"](reference["Net"](), torch.ones(2, 5)).dtype == torch.bfloat16  # torch: low precision
    text = converted(engine, BFLOAT16)
    assert "with MsAutocast('cpu'):" in text and "# msmap:" not in text
    done = run_without_torch(tmp_path, text, """
        import numpy as np, converted
        try:
            converted.predict(converted.Net(), converted.ms.Tensor(np.ones((2, 5), np.float32)))
        except NotImplementedError as error:
            print("refused:", error)
    """)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("refused: torch.autocast('cpu'") and "low precision" in done.stdout


ELSEWHERE = '''\
import torch


def backward(scaler, loss):
    scaler.scale(loss).backward()


def step(optimizer, model, x):
    scaler = torch.cuda.amp.GradScaler()
    backward(scaler, model(x).sum())
    scaler.step(optimizer)
    scaler.update()
'''


def test_a_scaler_step_apart_from_its_backward_keeps_markers(classic):
    text = converted(classic, ELSEWHERE)
    backward = next(line for line in text.splitlines() if ".backward()" in line)
    step = next(line for line in text.split("def step(")[-1].splitlines() if "scaler.step(" in line)
    assert "# msmap:" in backward and "ms.value_and_grad(" not in text
    assert "# msmap:" in step and "MindSpore optimizers take the gradients" in text


PLAIN_STEP_AFTER_SCALED_BACKWARD = HEAD + '''
def run(model, x, y, optimizer, scaler):
    loss = F.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    optimizer.step()
'''


def test_a_scaled_backward_stepped_without_its_scaler_is_left(classic):
    text = converted(classic, PLAIN_STEP_AFTER_SCALED_BACKWARD)
    line = next(line for line in text.splitlines() if ".backward()" in line)
    assert "# msmap:" in line and "ms.value_and_grad(" not in text


DTYPE_CHOICE = '''\
import torch


def choose():
    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return device, torch.cuda.is_bf16_supported(), str(dtype).split('.')[-1].lower()
'''


def test_the_amp_dtype_choice_answers_as_torch_without_cuda(engine, tmp_path):
    (tmp_path / "source.py").write_text(DTYPE_CHOICE)
    want = list(runpy.run_path(str(tmp_path / "source.py"))["choose"]())
    text = converted(engine, DTYPE_CHOICE)
    # (a CPU target answers the queries as torch without CUDA, and the branch they rule out drops: device_queries.py)
    assert "device = 'cpu'" in text and "is_available" not in text and "# msmap:" not in text
    done = run_without_torch(tmp_path, text, "import json, converted\nprint(json.dumps(converted.choose()))\n")
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == want == ["cpu", False, "float16"]
