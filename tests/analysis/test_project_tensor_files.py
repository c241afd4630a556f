"""Files of a torch project that import no torch (issue 26, item 5): a ``utils.py`` receiving the
project's tensors gets the same tensor-method rewrite or marker as a file that imports torch; a file
of a project that never imports torch stays as it is (bundled KB)."""
from __future__ import annotations

import pytest

from kb.analysis import Engine, EngineSettings
from kb.analysis.project import convert_file, project_settings

UTILS = """def accuracy(output, target):
    n = target.size(1)
    probs = output.softmax(dim=-1)
    extra = output.new_tensor([1.0, 2.0])
    return n, probs, extra, output.relu()
"""
MODEL = "import torch\nfrom utils import accuracy\n\n\ndef step(net, x, y):\n    return accuracy(net(x), y)\n"
PLAIN = "def words(line, table):\n    return line.split(','), table.items(), line.strip()\n"


def _project(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return sorted(tmp_path.glob("*.py"))


@pytest.fixture(scope="module")
def cpu():
    return EngineSettings(device="CPU")


def test_a_torchless_file_of_a_torch_project_gets_guarded_tensor_methods(real_kb, cpu, tmp_path):
    settings = project_settings(_project(tmp_path, {"model.py": MODEL, "utils.py": UTILS}), cpu)
    assert settings.project_tensor_files
    result = convert_file(Engine(real_kb, settings), tmp_path / "utils.py")
    out = result.converted.decode()
    assert "    n = target.shape[1]\n" in out  # a rewrite right on any receiver applies here too
    assert "    probs = output.softmax(axis=-1)\n" in out  # dim= is torch's spelling: the receiver is a torch tensor
    guarded = next(text for text in out.splitlines() if "return n, probs, extra, (" in text)
    assert "isinstance(output, ms.Tensor) else output.relu())" in guarded, guarded  # tested at run time
    assert result.guarded and not result.unsure


def test_a_torchless_file_without_tensor_methods_stays(real_kb, cpu, tmp_path):
    settings = project_settings(_project(tmp_path, {"model.py": MODEL, "plain.py": PLAIN}), cpu)
    result = convert_file(Engine(real_kb, settings), tmp_path / "plain.py")
    assert not result.changed and not result.unsure and not result.left


def test_a_project_without_torch_stays_as_it_is(real_kb, cpu, tmp_path):
    settings = project_settings(_project(tmp_path, {"utils.py": UTILS, "plain.py": PLAIN}), cpu)
    assert settings == cpu  # no file imports torch: nothing says these are tensors
    result = convert_file(Engine(real_kb, settings), tmp_path / "utils.py")
    assert result.converted is None and not result.unsure


def test_the_engine_guesses_in_a_torchless_file_only_when_told(real_kb, cpu):
    told = Engine(real_kb, EngineSettings(device="CPU", project_tensor_files=True)).analyze(UTILS.encode())
    assert {u.torch_name for u in told.uses if u.guess} >= {"torch.Tensor.softmax", "torch.Tensor.relu"}
    assert Engine(real_kb, cpu).analyze(UTILS.encode()).uses == []
