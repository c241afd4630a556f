"""Custom optimizers (issue 29, torch-optimizer's way of writing them): a ``torch.optim.Optimizer`` subclass whose
``step(closure=None)`` loops over ``self.param_groups``, reads ``p.grad``, keeps ``self.state[p]`` buffers and writes
parameters and buffers with in-place methods, converted in both families (rules/optimizer_subclasses.py) and trained
for 20 steps next to torch from the same weights and batches: per-step losses and trained parameters must agree."""
from __future__ import annotations

import pytest

from tests.analysis.roundtrip import converted
from tests.analysis.test_amp_rules import HEAD as NET
from tests.analysis.trained import train_both_sides, trains_like_torch

# test_amp_rules' Net (two Linear layers), the optimizer's base imported as torch-optimizer imports it
HEAD = "import math\n" + NET + "\nfrom torch.optim.optimizer import Optimizer\n"
# the training loop, {optimizer} built from model
RUN = '''

def run(model, batches, log, path):
    optimizer = {optimizer}
    for x, y in batches:
        optimizer.zero_grad()
        loss = F.{loss}(model(x), y)
        loss.backward()
        optimizer.step()
        log.append(loss.item())
'''

# Adam with a diffGrad friction term, as torch-optimizer writes its optimizers: state made on the first step with
# torch.zeros_like, chained in-place updates, the parameter written through .data
DIFF_ADAM = HEAD + '''
class DiffAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        if lr <= 0.0:
            raise ValueError('Invalid learning rate: {}'.format(lr))
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        super(DiffAdam, self).__init__(params, defaults)

    def step(self, closure=None):
        loss = None
        if closure is not None:
            loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group['betas']
            for p in group['params']:
                if p.grad is None:
                    continue
                grad = p.grad.data
                if grad.is_sparse:
                    raise RuntimeError('DiffAdam does not support sparse gradients')
                state = self.state[p]
                if len(state) == 0:
                    state['step'] = 0
                    state['exp_avg'] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    state['exp_avg_sq'] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    state['previous_grad'] = torch.zeros_like(p, memory_format=torch.preserve_format)
                exp_avg, exp_avg_sq, previous_grad = state['exp_avg'], state['exp_avg_sq'], state['previous_grad']
                state['step'] += 1
                if group['weight_decay'] != 0:
                    grad.add_(p.data, alpha=group['weight_decay'])
                exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = exp_avg_sq.sqrt().add_(group['eps'])
                bias_correction1 = 1 - beta1 ** state['step']
                bias_correction2 = 1 - beta2 ** state['step']
                dfc = torch.div(1.0, (1.0 + torch.exp(-torch.abs(previous_grad - grad))))
                state['previous_grad'] = grad.clone()
                step_size = group['lr'] * math.sqrt(bias_correction2) / bias_correction1
                p.data.addcdiv_(exp_avg * dfc, denom, value=-step_size)
        return loss
'''
ADAM_LIKE = DIFF_ADAM + RUN.format(optimizer="DiffAdam(model.parameters(), lr=0.05, weight_decay=0.01)",
                                   loss="mse_loss")
# half the steps under a StepLR schedule, the optimizer's state saved with the model's, a new optimizer resumed from
# it (its state buffers, step counters and the scheduled learning rate) for the other half
RESUME = DIFF_ADAM + '''
from torch.optim.lr_scheduler import StepLR


def train(model, optimizer, batches, log):
    for x, y in batches:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        log.append(loss.item())


def run(model, batches, log, path):
    optimizer = DiffAdam(model.parameters(), lr=0.05)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.5)
    train(model, optimizer, batches[:10], log)
    scheduler.step()
    torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict()}, path)
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint['model'])
    again = DiffAdam(model.parameters(), lr=0.05)
    again.load_state_dict(checkpoint['optimizer'])
    log.append(again.param_groups[0]['lr'])
    train(model, again, batches[10:], log)
'''

# SGD with momentum and decoupled weight decay, the closure typed as torch-optimizer types it and called when given,
# the step under torch.no_grad(); two parameter groups with their own learning rates
CLOSURE = HEAD + '''
from typing import Callable, Optional


class MomentumW(Optimizer):
    def __init__(self, params, lr=0.01, momentum=0.9, dampening=0.0, weight_decay=0.0):
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure: Optional[Callable[[], float]] = None) -> Optional[float]:
        loss = None
        if closure is not None:
            loss = closure()
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is None:
                    continue
                d_p = p.grad
                state = self.state[p]
                if 'momentum_buffer' not in state:
                    buf = state['momentum_buffer'] = d_p.clone().detach()
                else:
                    buf = state['momentum_buffer']
                    buf.mul_(group['momentum']).add_(d_p, alpha=1 - group['dampening'])
                if group['weight_decay'] != 0:
                    p.mul_(1 - group['lr'] * group['weight_decay'])
                p.add_(buf, alpha=-group['lr'])
        return loss
''' + RUN.format(optimizer="MomentumW([{'params': model.fc1.parameters()}, {'params': model.fc2.parameters(), "
                             "'lr': 0.05}], lr=0.1, weight_decay=0.1)", loss="l1_loss")



def _batches(rng):
    return [(rng.uniform(-1, 1, (8, 5)).astype("float32"), rng.uniform(-1, 1, (8, 2)).astype("float32"))
            for _ in range(20)]


CASES = {"adam-like": (ADAM_LIKE, _batches, []), "closure": (CLOSURE, _batches, []),
         "resume": (RESUME, _batches, [])}


@pytest.fixture(scope="module")
def ran(classic, mint_cpu, tmp_path_factory):
    """Both optimizers converted in both families and trained 20 steps next to torch (tests/analysis/trained.py)."""
    return train_both_sides(CASES, {"classic": classic, "mint": mint_cpu}, tmp_path_factory.mktemp("optimizers"))


@pytest.mark.parametrize("family", ["classic", "mint"])
@pytest.mark.parametrize("name", ["adam-like", "closure"])
def test_custom_optimizer_trains_like_torch(ran, name, family):
    """The subclass derives from MsTorchOptimizer, its in-place writes go through MsInplace, and its 20 per-step
    losses and trained parameters are torch's (the step reads p.grad set by the training step's optimizer(grads))."""
    text = trains_like_torch(ran, name, family, rtol=1e-5, atol=1e-6)
    assert "(MsTorchOptimizer):" in text and "MsInplace(p).add" in text
    assert "is_sparse" not in text
    assert len(ran[(name, family)][1][0]) == 20


@pytest.mark.parametrize("family", ["classic", "mint"])
def test_custom_optimizer_resumes_like_torch(ran, family):
    """MsTorchOptimizer.state_dict/load_state_dict keep torch's form: the resumed optimizer has the scheduled
    learning rate (0.025, logged) and the saved state buffers, and goes on along torch's curve."""
    text = trains_like_torch(ran, "resume", family, rtol=1e-5, atol=1e-6)
    assert "(MsTorchOptimizer):" in text
    assert ran[("resume", family)][1][0][10] == 0.025


# what must not change: a subclass that keeps torch's step (only its constructor differs), an in-place call outside
# an optimizer class
UNTOUCHED = '''\
import torch


class Tuned(torch.optim.SGD):
    def __init__(self, params):
        super().__init__(params, lr=0.1)


def clip(model):
    for p in model.parameters():
        p.data.clamp_(-1, 1)
'''


def test_no_step_no_helper(classic):
    text = converted(classic, UNTOUCHED)
    assert "MsTorchOptimizer" not in text and "MsInplace" not in text, text
