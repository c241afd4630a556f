"""``@torch.jit.script`` on a function is removed (data/curated/modes.yaml): the converted module imports
and the function gives the same results as Python; a call that scripts a model is left with its reason.
Two held-out batch-2 files stopped at import on the decorator's stand-in."""
from __future__ import annotations

from kb.analysis.convert import convert_source
from tests.analysis.executed import run_without_torch

SOURCE = ("import torch\n\n\n@torch.jit.script\ndef halve(x: torch.Tensor) -> torch.Tensor:\n    return x * 0.5\n\n\n"
          "def script(model):\n    return torch.jit.script(model)\n")


def test_the_decorator_goes_and_the_function_runs_without_torch(classic, tmp_path):
    result = convert_source(classic, SOURCE)
    assert "@torch.jit.script" not in result.text and "def halve(x: ms.Tensor) -> ms.Tensor:" in result.text
    assert [left.torch_name for left in result.left] == ["torch.jit.script"]  # the scripting call
    assert "return torch.jit.script(model)  # msmap:" in result.text
    done = run_without_torch(tmp_path, result.text, "import numpy as np, mindspore as ms\nimport converted\n"
                             "print(converted.halve(ms.Tensor(np.array([2.0, 4.0], np.float32))).asnumpy().tolist())")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[1.0, 2.0]"
