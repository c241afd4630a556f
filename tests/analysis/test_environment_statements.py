"""Statements about torch's runtime environment rather than the model's math, as real model files write them
(self_attention_cv, deepctr-torch, vector-quantize-pytorch, asteroid-filterbanks, x-transformers): cuDNN and TF32
flags, ``self.to(device)``, TorchScript markers and queries, attention kernel choices. Converted, they leave no
torch reference and no marker, the module imports and runs without torch, and gives torch's results
(kb/analysis/rules/backend_flags.py, device_moves.py, jit_markers.py, attention_kernels.py;
data/curated/environment.yaml)."""
from __future__ import annotations

import json
import re
import runpy

import pytest

from kb.analysis import Engine, EngineSettings
from tests.analysis.executed import run_without_torch
from tests.analysis.roundtrip import converted

SOURCE = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F


def seed_all(seed):
    torch.manual_seed(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = True


def fast():
    torch.backends.cudnn.benchmark = True


class Net(nn.Module):
    def __init__(self, device="cpu"):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        nn.init.constant_(self.fc.weight, 0.5)
        nn.init.zeros_(self.fc.bias)
        self.to(device)

    @torch.jit.ignore
    def helper(self, x):
        return x * 3

    @torch.jit.export
    def kept(self, x):
        return x - 1

    def forward(self, x):
        if torch.jit.is_scripting() or torch._C._is_tracing():
            return x * 0
        if not torch.jit.is_tracing():
            x = x + 1
        with torch.backends.cuda.sdp_kernel(enable_flash=False):
            return self.fc(x)


def halve(x):
    return x * 0.5


compiled = torch.jit.script(halve)


def run():
    seed_all(0)
    fast()
    model = Net()
    model.to("cuda:0" if torch.cuda.is_available() else "cpu")
    model.to(torch.device("cpu"))
    x = torch.ones(2, 3)
    return [model(x).tolist(), model.helper(x).tolist(), model.kept(x).tolist(), compiled(x).tolist()]
'''


@pytest.fixture(params=["classic", "mint"])
def engine(request, classic, mint_cpu):
    return classic if request.param == "classic" else mint_cpu


def test_no_torch_reference_and_no_marker_is_left(engine):
    text = converted(engine, SOURCE)
    assert "# msmap:" not in text and not re.search(r"\btorch\b", text), text
    assert f"{_alias(text)}.set_deterministic(True)" in text
    assert "    pass  # cuDNN autotuning flag removed" in text  # (the only statement of its block)
    assert "compiled = halve" in text and "def helper(self, x):" in text and "self.to(" not in text


def test_the_converted_module_runs_without_torch_and_gives_torch_s_results(classic, tmp_path):
    text = converted(classic, SOURCE)
    (tmp_path / "source.py").write_text(SOURCE)
    want = runpy.run_path(str(tmp_path / "source.py"))["run"]()
    done = run_without_torch(tmp_path, text, """
        import json
        import converted
        print(json.dumps([[[round(v, 5) for v in row] for row in part] for part in converted.run()]))
    """)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got == [[[round(v, 5) for v in row] for row in part] for part in want]
    assert got[0] == [[3.0, 3.0], [3.0, 3.0]]  # the eager branch: 3 inputs of (1 + 1) * 0.5


def test_a_dtype_cast_of_a_module_is_not_removed(engine):
    text = converted(engine, "import torch\nimport torch.nn as nn\n\n\ndef widen(size):\n"
                             "    model = nn.Linear(size, size)\n    model.to(torch.float64)\n"
                             "    model.to(some_value)\n    model.to(args.device)\n    return model\n")
    assert re.search(r"model\.to\(\w+\.float64\)  # msmap: ", text), text
    assert "model.to(some_value)  # msmap: " in text and "args.device" not in text


def test_a_move_whose_value_is_used_becomes_the_module(classic):
    text = converted(classic, "import torch\nimport torch.nn as nn\n\n\ndef build(dev):\n"
                              "    net = nn.Linear(2, 2)\n    return net.to(dev)\n")
    assert "    return net\n" in text


def test_scripting_a_model_keeps_its_marker(classic):
    text = converted(classic, "import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    pass\n\n\n"
                              "def export(net, fn):\n    return torch.jit.script(Net()), torch.jit.script(fn)\n")
    assert "torch.jit.script(Net()), torch.jit.script(fn)  # msmap: " in text


def test_flags_without_an_answer_keep_their_marker(classic):
    flag = "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction"
    text = converted(classic, f"import torch\n{flag} = False\n")
    assert "allow_fp16_reduced_precision_reduction = False  # msmap: " in text


def test_tf32_flags_become_mindspore_s_gpu_switches_on_a_gpu(real_kb):
    gpu = Engine(real_kb, EngineSettings(device="GPU"))
    text = converted(gpu, "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
                          "torch.backends.cudnn.allow_tf32 = False\nx = 1; torch.backends.cudnn.benchmark = True\n")
    assert "ms.device_context.gpu.op_precision.matmul_allow_tf32(True)\n" in text
    assert "ms.device_context.gpu.op_precision.conv_allow_tf32(False)\n" in text
    assert "x = 1; pass\n" in text  # (a comment there would hide the code before it)


def test_attention_kernel_choices_go_and_their_body_stays(classic):
    text = converted(classic, "import torch\nfrom torch.nn.attention import sdpa_kernel, SDPBackend\n"
                              "torch.backends.cuda.enable_flash_sdp(False)\n\n\ndef attend(model, x):\n"
                              "    with sdpa_kernel(SDPBackend.MATH):\n        y = model(x)\n    return y\n")
    assert "def attend(model, x):\n    y = model(x)\n    return y\n" in text
    assert "sdp" not in text and "# msmap:" not in text


def _alias(text: str) -> str:
    found = re.search(r"^import mindspore as (\w+)$", text, re.M)
    return found[1] if found else "mindspore"


def test_a_block_of_flags_only_still_parses(classic):
    flags = "        torch.backends.cudnn.benchmark = True\n        torch.backends.cudnn.enabled = True\n"
    text = converted(classic, "import torch\n\n\ndef setup(gpu):\n    if gpu:\n" + flags)
    assert "torch" not in text and "# msmap:" not in text
    assert re.search(r"    if gpu:\n        # cuDNN autotuning flag removed.*\n        pass  # cuDNN on/off", text)
