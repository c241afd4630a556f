"""Training-loop rules (kb/analysis/trainloop.py and the optimizer, device and argmax data): fixes and no-ops."""
from __future__ import annotations


from kb.analysis import Engine, EngineSettings
from kb.analysis.convert import convert_source


def _convert(engine, body: str) -> str:
    return convert_source(engine, "import torch\n" + body).text


def test_mode_switch_on_a_called_model_becomes_set_train(classic):
    text = _convert(classic, "def f(model, x):\n    model.train()\n    y = model(x)\n    model.eval()\n    return y\n")
    assert "model.set_train()" in text and "model.set_train(False)" in text


def test_mode_switch_on_an_object_never_called_is_left(classic):
    src = "def f(trainer):\n    trainer.train()\n    trainer.eval()\n"
    assert _convert(classic, src).endswith(src)


def test_group_learning_rate_read_becomes_a_float_and_a_store_is_left(classic):
    text = _convert(classic, "def f(opt):\n    lr = opt.param_groups[0]['lr']\n    opt.param_groups[0]['lr'] = lr * 0.5\n")
    assert "lr = float(opt.param_groups[0]['lr'])" in text
    assert "opt.param_groups[0]['lr'] = lr * 0.5" in text


def test_cpu_device_becomes_its_string_and_another_device_is_left(classic):
    text = _convert(classic, "a = torch.device('cpu')\nb = torch.device('cuda')\n")
    assert "a = 'cpu'" in text and "b = torch.device('cuda')  # msmap:" in text


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
