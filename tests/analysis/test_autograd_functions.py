"""Custom ``torch.autograd.Function`` subclasses convert (rules/autograd_functions.py, the ``MsFunction`` helper
of data/curated/autograd.yaml): each torch file below is converted per family, run with MindSpore (PyNative) in
a child without torch, and its forward output and its gradients (``mindspore.value_and_grad`` of the converted
model, with respect to the input and the model's Parameter) compared with torch autograd's. GRAPH_MODE cannot
build the Function's Cell inside ``construct``: there ``.apply`` raises NotImplementedError, which is checked."""
from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
import torch

from kb.analysis import Document, Engine
from kb.probes.calls import MARKER, torch_left
from tests.analysis.executed import BLOCK_TORCH
from tests.analysis.roundtrip import converted

ACTIVATION = '''\
import torch
import torch.nn as nn


class SoftClip(torch.autograd.Function):
    """x / (1 + |x|), with its derivative 1 / (1 + |x|)^2 written out."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x / (1 + x.abs())

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output / (1 + x.abs()) ** 2


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor([0.5, -1.5, 2.0, 0.25]))

    def forward(self, x):
        return SoftClip.apply(x * self.w) + SoftClip.apply(x)
'''


STRAIGHT = '''\
import torch
import torch.nn as nn
from torch.autograd import Function


class RoundSTE(Function):
    """Rounds in the forward pass; the backward passes the gradient straight through."""

    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad):
        return grad


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor([0.3, 1.7, -2.2, 0.9]))

    def forward(self, x):
        return RoundSTE.apply(x * self.w * 4) / 4
'''


NONTENSOR = '''\
import torch
import torch.nn as nn
from torch import autograd


class Gate(autograd.Function):
    """x * k where the gate is on; the gate tensor and the settings get no gradient."""

    @staticmethod
    def forward(ctx, x, gate, k, flip, unused):
        ctx.k = k
        ctx.flip = flip
        ctx.save_for_backward(gate)
        ctx.wanted = ctx.needs_input_grad
        out = x * gate * k
        return -out if flip else out

    @staticmethod
    def backward(ctx, grad):
        (gate,) = ctx.saved_tensors
        assert ctx.wanted[0] and not ctx.wanted[2] and not ctx.wanted[3]
        g = grad * gate * ctx.k
        return (-g if ctx.flip else g), None, None, None, None


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor([1.0, -0.5, 0.75, 2.0]))

    def forward(self, x):
        gate = (x > 0).float() * self.w
        return Gate.apply(x, gate, 3, True, None) + Gate.apply(x * x, gate, 2, False, None)
'''


CONTEXT = '''\
import torch
import torch.nn as nn
from torch.autograd.function import once_differentiable


class ScaleGrad(torch.autograd.Function):
    """The identity whose gradient is scaled by alpha (a gradient-reversal layer for alpha < 0)."""

    @staticmethod
    def forward(ctx, x, alpha=1.0):
        ctx.alpha = alpha
        ctx.set_materialize_grads(False)
        return x.view_as(x)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        return grad_output * ctx.alpha, None


class MulAdd(torch.autograd.Function):
    """Two outputs (x * y, x + y); the context is set apart from the forward pass."""

    @staticmethod
    def forward(x, y):
        return x * y, x + y

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, y = inputs
        ctx.save_for_backward(x, y)
        ctx.mark_non_differentiable()

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_prod, grad_sum):
        x, y = ctx.saved_tensors
        grad_x = grad_prod * y + grad_sum if ctx.needs_input_grad[0] else None
        grad_y = grad_prod * x + grad_sum if ctx.needs_input_grad[1] else None
        return grad_x, grad_y


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor([0.5, -1.0, 1.5, 0.5]))  # (tanh far from saturation)

    def forward(self, x):
        h = ScaleGrad.apply(torch.tanh(x * self.w), alpha=-0.5)
        prod, total = MulAdd.apply(h, self.w)
        again, _ = MulAdd.apply(prod, x)
        return again * total + ScaleGrad.apply(x)
'''

MISCOUNT = '''\
import torch
import torch.nn as nn


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        return x * k

    @staticmethod
    def backward(ctx, grad):
        return grad * 2  # one gradient for two inputs: torch refuses


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor([1.0, 2.0, 3.0, 4.0]))

    def forward(self, x):
        return Scale.apply(x * self.w, 3)
'''

SOURCES = {"activation": ACTIVATION, "straight": STRAIGHT, "nontensor": NONTENSOR, "context": CONTEXT,
           "miscount": MISCOUNT}
X = [0.8, -1.3, 0.45, 2.1]

CHILD = """
import json, sys
import numpy as np
import mindspore as ms
sys.path.insert(0, {folder!r})
found = {{}}
for name in {names!r}:
    module = __import__(name)
    net = module.Net()
    x = ms.Tensor(np.array({x!r}, np.float32))

    def loss(x):
        out = net(x)
        return (out * out).sum()

    out = net(x)
    try:
        _, (grad_x, (grad_w,)) = ms.value_and_grad(loss, grad_position=0, weights=net.trainable_params())(x)
    except RuntimeError as exc:
        found[name] = {{"out": out.asnumpy().tolist(), "error": str(exc)}}
        continue
    found[name] = {{"out": out.asnumpy().tolist(), "x": grad_x.asnumpy().tolist(), "w": grad_w.asnumpy().tolist()}}
ms.set_context(mode=ms.GRAPH_MODE)
try:
    __import__("activation").Net()(x)
    found["graph"] = "ran"
except NotImplementedError as exc:
    found["graph"] = str(exc)
print(json.dumps(found))
"""


def torch_results(source: str) -> dict[str, Any]:
    """The torch file's forward output and the gradients of sum(out ** 2) for the input and the Parameter (a
    Parameter no gradient reached, torch's None, is MindSpore's zeros)."""
    namespace: dict = {}
    exec(compile(source, "<torch source>", "exec"), namespace)
    net = namespace["Net"]()
    x = torch.tensor(X, requires_grad=True)
    out = net(x)
    try:
        (out * out).sum().backward()
    except RuntimeError as exc:
        return {"out": out.detach().tolist(), "error": str(exc)}
    grads = [g if g is not None else torch.zeros_like(t) for t, g in ((x, x.grad), (net.w, net.w.grad))]
    return {"out": out.detach().tolist(), "x": grads[0].tolist(), "w": grads[1].tolist()}


@pytest.fixture(scope="module", params=["classic", "mint"])
def ran(request, tmp_path_factory):
    """Every source converted in one family and run in one child: {name: results} and the converted texts."""
    engine = request.getfixturevalue(request.param)
    folder = tmp_path_factory.mktemp(request.param)
    texts = {name: converted(engine, source) for name, source in SOURCES.items()}
    for name, text in texts.items():
        (folder / f"{name}.py").write_text(text)
    program = BLOCK_TORCH + CHILD.format(folder=str(folder), names=list(SOURCES), x=X)
    # (run in its folder: GRAPH_MODE's failure report, rank_0/, is written to the working directory)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=600, cwd=folder)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), texts


@pytest.mark.parametrize("name", list(SOURCES))
def test_forward_and_gradients_match_torch(ran, name):
    results, texts = ran
    text = texts[name]
    assert MARKER not in text and not torch_left(text), text
    assert "class MsFunction(" in text and ".apply(" in text
    wanted = torch_results(SOURCES[name])
    assert results[name].get("error") == wanted.get("error")  # a backward torch refuses is refused alike
    for key in [k for k in ("out", "x", "w") if k in wanted]:
        np.testing.assert_allclose(results[name][key], wanted[key], rtol=1e-4, atol=1e-5, err_msg=f"{name}: {key}")


def test_a_straight_through_gradient_is_the_custom_backward(ran):
    """round() has a zero derivative: a gradient equal to torch's and not zero came from the class's backward."""
    results, _ = ran
    assert np.abs(results["straight"]["x"]).min() > 0


def test_graph_mode_refuses_with_a_reason(ran):
    results, _ = ran
    assert "PyNative mode only" in results["graph"]


def test_the_decorators_and_imports_go(classic):
    text = converted(classic, CONTEXT)
    assert "once_differentiable" not in text and "@staticmethod" in text
    assert "class ScaleGrad(MsFunction):" in text and "class MulAdd(MsFunction):" in text
    assert text.count("class MsFunction(") == 1


def test_every_reference_to_the_base_becomes_the_helper(classic):
    src = (STRAIGHT + "\n\ndef is_function(obj):\n    return isinstance(obj, type) and issubclass(obj, Function)\n")
    text = converted(classic, src)
    assert "issubclass(obj, MsFunction)" in text and MARKER not in text


def test_a_class_named_function_that_is_not_torch_s_is_left_alone(classic):
    src = """\
import torch


class Function:
    @staticmethod
    def apply(x):
        return x


class Double(Function):
    @staticmethod
    def apply(x):
        return torch.relu(x) * 2
"""
    text = converted(classic, src)
    assert "class Double(Function):" in text and "MsFunction" not in text


def test_the_editor_finds_what_a_fresh_analysis_finds(classic):
    """The language server's path: edits that make, unmake and rename a Function base leave the editor's
    analysis equal to a fresh one of the same text."""
    document = Document(STRAIGHT)
    classic.analyze(document)
    for old, new in (("class RoundSTE(Function):", "class RoundSTE(nn.Module):"),
                     ("class RoundSTE(nn.Module):", "class RoundSTE(Function):"),
                     ("from torch.autograd import Function", "from torch.autograd import Function as Fn"),
                     ("class RoundSTE(Function):", "class RoundSTE(Fn):")):
        document.update(document.text.replace(old, new, 1))
        edited = classic.analyze(document)
        fresh = Engine(classic.catalog, classic.settings).analyze(document.text)
        assert [(u.torch_name, u.start, u.end, u.rule, u.edits) for u in edited.uses] == \
            [(u.torch_name, u.start, u.end, u.rule, u.edits) for u in fresh.uses], (old, new)
    assert any(u.rule == "autograd-function" for u in edited.uses)
