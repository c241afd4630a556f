"""Training-loop rules (kb/analysis/trainloop.py and the optimizer, device and argmax data): fixes and no-ops."""
from __future__ import annotations


from kb.analysis import Engine, EngineSettings
from kb.analysis.convert import convert_source
from tests.analysis.executed import run_without_torch


def _convert(engine, body: str) -> str:
    return convert_source(engine, "import torch\n" + body).text


def test_mode_switch_on_a_called_model_becomes_set_train(classic):
    text = _convert(classic, "def f(model, x):\n    model.train()\n    y = model(x)\n    model.eval()\n    return y\n")
    assert "model.set_train()" in text and "model.set_train(False)" in text


def test_mode_switch_on_an_object_never_called_is_left(classic):
    src = "def f(trainer):\n    trainer.train()\n    trainer.eval()\n"
    assert _convert(classic, src).endswith(src)


HOLDER = """\
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.bn = nn.BatchNorm1d(2)

    def forward(self, x):
        return self.bn(self.fc(x))


class Holder:
    def __init__(self, build, runner):
        self.model = build()
        self.runner = runner

    def fit(self, x):
        self.model.train()
        return self.model(x)

    def load(self, state):
        self.model.load_state_dict(state)
        self.model.eval()
        self.runner.eval()


def count(model):
    return sum(p.numel() for p in model.parameters()), [n for n, _ in model.named_parameters()]


def make(model, library):
    return library.Lamb(model.parameters(), lr=0.1)
"""


def test_attribute_models_switch_mode_and_answer_module_questions(classic, tmp_path):
    text = _convert(classic, HOLDER)
    assert "self.model.set_train()" in text and "self.model.set_train(False)" in text
    assert "self.runner.eval()" in text  # never called with data nor asked what a module answers: left
    assert "for p in model.get_parameters()" in text and "model.parameters_and_names()" in text
    assert "library.Lamb(model.trainable_params(), lr=0.1)" in text  # a class given them: an optimizer
    factory = _convert(classic, "def fit(self, net):\n    return self.optimizer_fn(net.parameters(), lr=0.1), "
                                "count(net.parameters())\n")
    assert "self.optimizer_fn(net.trainable_params(), lr=0.1), count(net.parameters())" in factory
    done = run_without_torch(tmp_path, text, """
        import types, numpy as np, converted
        h = converted.Holder(converted.Net, types.SimpleNamespace(eval=lambda: None))
        h.fit(converted.ms.Tensor(np.ones((4, 3), np.float32)))
        assert h.model.training
        h.load(h.model.state_dict())
        assert not h.model.training
        n, names = converted.count(h.model)
        print(n, len(names))

        class Library:
            Lamb = staticmethod(lambda params, lr: [p.name for p in params])

        print(len(converted.make(h.model, Library)))
    """)
    assert done.returncode == 0, done.stderr[-2000:]
    # fc 3*2 + 2 and bn 2 + 2 learnable; MindSpore keeps BatchNorm's moving mean and variance as Parameters too
    # (torch: buffers), so 16 values in 6 (torch: 12 in 4; the mapping's caveat says so); an optimizer is given
    # the 4 trainable ones, as torch's skips what needs no gradient
    assert done.stdout.split() == ["16", "6", "4"]


def test_group_learning_rate_read_becomes_a_float_and_a_store_goes_into_the_parameter(classic):
    text = _convert(classic, "def f(opt):\n    lr = opt.param_groups[0]['lr']\n    opt.param_groups[0]['lr'] = lr * 0.5\n")
    assert "lr = float(opt.param_groups[0]['lr'])" in text
    assert "ms_set_lr(opt.param_groups[0], lr * 0.5)" in text


def test_cpu_device_becomes_its_string_and_another_device_the_processs(classic, tmp_path):
    text = _convert(classic, "a = torch.device('cpu')\nb = torch.device('cuda')\nc = torch.device('cuda:1')\n")
    assert "a = 'cpu'" in text and "b = MsDevice('cuda')" in text and "# msmap:" not in text
    done = run_without_torch(tmp_path, text, """
        import converted
        print(converted.b, converted.b.type, converted.b.index, converted.c.type, converted.c.index)
    """)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["cpu", "cuda", "None", "cuda", "1"]  # CPU build: tensors stay on the CPU


def test_optimizers_and_schedulers_take_the_torch_style_classes(classic):
    text = _convert(classic, "opt = torch.optim.AdamW(params, lr=0.1)\n"
                             "s = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=3)\n")
    assert "ms.experimental.optim.AdamW(params, lr=0.1)" in text
    assert "ms.experimental.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=3)" in text


def test_mint_optimizers_off_cpu_stay_mint(real_kb):
    ascend = Engine(real_kb, EngineSettings(family="mint", device="Ascend"))
    cpu = Engine(real_kb, EngineSettings(family="mint", device="CPU"))
    src = "opt = torch.optim.SGD(params, lr=0.1)\n"
    assert "ms.mint.optim.SGD(params, lr=0.1)" in _convert(ascend, src)
    assert "ms.experimental.optim.SGD(params, lr=0.1)" in _convert(cpu, src)  # mint's update is a no-op on CPU


def test_argmax_keeps_torch_keywords_on_210_and_renames_before(real_kb, classic):
    src = "def f(x):\n    return torch.relu(x).argmax(dim=1, keepdim=True)\n"
    assert "argmax(dim=1, keepdim=True)" in _convert(classic, src)
    old = Engine(real_kb, EngineSettings(family="classic", device="CPU", ms_version="2.7.0"))
    before = _convert(old, src)  # renamed where proven, else left with its reason: never torch's keywords unmarked
    assert "argmax(axis=1, keepdims=True)" in before or "argmax(dim=1, keepdim=True)  # msmap:" in before


CONTAINER = """\
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential()
        self.features.add_module("init_block", nn.Linear(3, 4))
        self.features.add_module("act", nn.ReLU())
        self.features.add_module("out", nn.Linear(4, 2))
        self.head = nn.Linear(2, 1)

    def forward(self, x):
        return self.head(self.features(x))


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = Net()
"""


def test_children_added_to_an_attached_container_keep_torchs_parameter_names(classic, tmp_path):
    text = _convert(classic, CONTAINER)
    assert text.count("ms_name_parameters(self)") == 1  # Net's __init__ only: Outer adds nothing to a container
    assert _convert(classic, text) == text  # converting again changes nothing (the unused torch import goes)
    done = run_without_torch(tmp_path, text, """
        import converted
        print(" ".join(p.name for p in converted.Outer().get_parameters()))
    """)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["net.features.init_block.weight", "net.features.init_block.bias",
                                   "net.features.out.weight", "net.features.out.bias", "net.head.weight",
                                   "net.head.bias"]


def test_an_attribute_named_like_a_module_method_is_the_instances_own(classic):
    """nbeats keeps ``self.parameters = []``: ``self.parameters`` is then a list, never Cell.get_parameters."""
    text = _convert(classic, "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
                    "        super().__init__()\n        self.parameters = []\n        self.fc = nn.Linear(2, 2)\n"
                    "        self.parameters.extend(self.fc.parameters())\n\n    def count(self):\n"
                    "        return len(self.parameters), len(list(self.named_parameters()))\n")
    assert "self.parameters = []" in text and "self.parameters.extend(self.fc.get_parameters())" in text
    assert "get_parameters =" not in text and "self.parameters_and_names()" in text


def test_a_containers_private_module_dict_becomes_its_named_cells(classic, tmp_path):
    """pytorchcv's containers walk ``self._modules``: MindSpore's ``name_cells()`` gives the same children."""
    text = _convert(classic, "import torch.nn as nn\n\n\nclass Multi(nn.Sequential):\n    def forward(self, x):\n"
                    "        outs = []\n        for module in self._modules.values():\n            x = module(x)\n"
                    "            outs.append(x)\n        return outs, len(self._modules), list(self._modules)\n")
    assert "self.name_cells().values()" in text and "len(self.name_cells())" in text
    done = run_without_torch(tmp_path, text, """
        import numpy as np, converted
        ms = converted.ms
        net = converted.Multi(ms.nn.Dense(3, 4), ms.nn.ReLU(), ms.nn.Dense(4, 2))
        outs, n, names = net(ms.Tensor(np.ones((2, 3), np.float32)))
        print([tuple(o.shape) for o in outs], n, names)
    """)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[(2, 4), (2, 4), (2, 2)] 3 ['0', '1', '2']"


def test_the_optimizer_base_class_is_the_torch_style_one(classic, mint, tmp_path):
    """pytorch_warmup checks isinstance(optimizer, torch.optim.Optimizer): the converted optimizers pass it."""
    src = ("import torch\nfrom torch.optim import Optimizer\n\n\ndef check(model):\n"
           "    opt = torch.optim.AdamW(model.parameters(), lr=0.1)\n"
           "    return isinstance(opt, Optimizer), isinstance(opt, torch.optim.Optimizer)\n")
    for engine in (classic, mint):
        text = convert_source(engine, src).text
        done = run_without_torch(tmp_path, text, """
            import converted
            print(converted.check(converted.ms.nn.Dense(2, 2)))
        """)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip() == "(True, True)"


WARMUP = """\
import torch


class Dampen:
    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.lrs = [group['lr'] for group in optimizer.param_groups]

    def dampen(self, omega):
        for group in self.optimizer.param_groups:
            group['lr'] *= omega

    def restore(self):
        for group, lr in zip(self.optimizer.param_groups, self.lrs):
            group['lr'] = lr


def rates(optimizer):
    return [optimizer.param_groups[0]['lr']]
"""


def test_a_group_learning_rate_written_reaches_the_optimizer(classic, tmp_path):
    """pytorch_warmup dampens group['lr'] in place: the value must reach the Parameter the MindSpore optimizer
    steps with (rebinding the dict entry left it at the full rate), and saved rates stay plain floats."""
    text = _convert(classic, WARMUP)
    assert "ms_set_lr(group, float(group['lr']) * (omega))" in text and "ms_set_lr(group, lr)" in text
    assert "[float(group['lr']) for group in optimizer.param_groups]" in text
    done = run_without_torch(tmp_path, text, """
        import numpy as np, converted
        ms = converted.ms
        net = ms.nn.Dense(2, 1)
        opt = ms.experimental.optim.SGD(net.trainable_params(), lr=0.5)
        d = converted.Dampen(opt)
        d.dampen(0.0)  # a zero rate: a step leaves the weights as they are
        before = net.weight.asnumpy().copy()
        grads = tuple(ms.ops.ones_like(p) for p in net.trainable_params())
        opt(grads)
        print(round(float(np.abs(net.weight.asnumpy() - before).max()), 5), converted.rates(opt), d.lrs)
        d.restore()
        opt(grads)
        print(round(float(np.abs(net.weight.asnumpy() - before).max()), 5), converted.rates(opt))  # float32: w - 0.5 - w
    """)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-2:] == ["0.0 [0.0] [0.5]", "0.5 [0.5]"]


SCHEDULED = """\
import torch


def rates():
    model = torch.nn.Linear(2, 1)
    opt = torch.optim.AdamW(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6, eta_min=0.01)
    seen = []
    for _ in range(3):
        sched.step()
        seen.append(round(opt.param_groups[0]['lr'], 6))
    state = sched.state_dict()
    opt2 = torch.optim.AdamW(model.parameters(), lr=0.1)
    sched2 = torch.optim.lr_scheduler.CosineAnnealingLR(opt2, T_max=6, eta_min=0.01)
    sched2.load_state_dict(state)
    for group, lr in zip(opt2.param_groups, sched2.get_last_lr()):
        group['lr'] = lr
    for _ in range(3):
        sched2.step()
        seen.append(round(opt2.param_groups[0]['lr'], 6))
    return seen
"""


def test_a_scheduler_resumes_from_its_state_dict_like_torch(classic, tmp_path):
    import subprocess
    import sys

    (tmp_path / "original.py").write_text(SCHEDULED)
    torch_run = subprocess.run([sys.executable, "-c", "import original; print(original.rates())"], cwd=tmp_path,
                               capture_output=True, text=True, timeout=300)
    assert torch_run.returncode == 0, torch_run.stderr
    text = _convert(classic, SCHEDULED)
    assert "ms_scheduler_state_dict(sched)" in text and "ms_scheduler_load_state_dict(sched2, state)" in text
    done = run_without_torch(tmp_path, text, """
        import converted
        print([round(x, 6) for x in converted.rates()])
    """)
    assert done.returncode == 0, done.stderr[-2000:]
    ours, theirs = eval(done.stdout.splitlines()[-1]), eval(torch_run.stdout.splitlines()[-1])
    assert len(ours) == len(theirs) == 6
    assert all(abs(a - b) <= 1e-6 for a, b in zip(ours, theirs, strict=True)), (ours, theirs)


def test_rates_read_as_floats_already_and_other_dicts_lr_are_left(classic):
    src = ("def f(opt, config):\n    a = float(opt.param_groups[0]['lr'])\n    config['lr'] = 0.1\n"
           "    for group in config['groups']:\n        group['lr'] *= 2\n    return a, config['lr']\n")
    assert _convert(classic, src).endswith(src)  # no param_groups behind these: nothing to do


def test_a_container_built_on_self_keeps_its_names_without_a_renaming_pass(classic):
    text = _convert(classic, "import torch.nn as nn\n\n\nclass Net(nn.Sequential):\n    def __init__(self):\n"
                    "        super().__init__()\n        self.add_module('fc', nn.Linear(2, 2))\n")
    assert "ms_add_module(self, 'fc'" in text and "ms_name_parameters" not in text
