"""Rules found on torchvision's ViT, Swin and ConvNeXt files: classes imported from a sibling file,
helpers two fixes write at the same place (bundled KB). Each fix beside its no-op neighbour; the
ones with numbers are run in torch and in MindSpore (child processes) and compared."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from kb.analysis import Engine, EngineSettings
from kb.analysis.project import convert_file
from kb.analysis.siblingclasses import imported_classes
from tests.analysis.roundtrip import converted


@pytest.fixture(scope="module")
def classic(real_kb):
    return Engine(real_kb, EngineSettings(device="CPU"))


@pytest.fixture(scope="module")
def mint(real_kb):
    return Engine(real_kb, EngineSettings(family="mint", device="CPU"))


MISC = """import torch
from torch import nn


class MLP(torch.nn.Sequential):
    def __init__(self, dims):
        layers = [nn.Linear(a, b) for a, b in zip(dims, dims[1:])]
        super().__init__(*layers)


class Deeper(MLP):
    def forward(self, x):
        return super().forward(x) * 2


class Plain:
    def modules(self):
        return [1, 2]
"""

USER = """from torch import nn

from .misc import MLP, Plain, Deeper as D


class Block(MLP):
    def __init__(self):
        super().__init__([4, 8, 4])
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = MLP([4, 3])
        self.deep = D([3, 2])
        self.plain = Plain()
        self.count = len(list(self.mlp.modules())) + len(list(self.deep.modules()))
        self.other = self.plain.modules()


def count():
    block = Block()
    return len(list(block.modules())), Net().count
"""


def _package(tmp_path, files):
    package = tmp_path / "pkg"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    for name, text in files.items():
        (package / name).write_text(text)
    return package


def test_a_sibling_files_torch_class_is_known_with_its_bases_and_methods(tmp_path):
    package = _package(tmp_path, {"misc.py": MISC, "user.py": USER})
    found = imported_classes(package / "user.py", USER.encode())
    assert set(found) == {"MLP", "D"}  # Plain derives from nothing torch: not a torch class
    assert found["MLP"].torch_bases == ("torch.nn.Sequential",) and found["MLP"].methods == {"__init__"}
    assert found["D"].torch_bases == ("torch.nn.Sequential",) and "forward" in found["D"].methods


def test_modules_of_a_class_from_a_sibling_file_walks_the_cell_tree(classic, mint, tmp_path):
    package = _package(tmp_path, {"misc.py": MISC, "user.py": USER})
    torch_count = _run(tmp_path, "import torch", "from pkg.user import count; print(json.dumps(count()))")
    for engine in (classic, mint):
        misc, user = convert_file(engine, package / "misc.py"), convert_file(engine, package / "user.py")
        out = user.converted.decode()
        assert "for m in [cell for _, cell in self.cells_and_names()]:" in out
        assert "len(list([cell for _, cell in block.cells_and_names()]))" in out  # an instance of the subclass
        assert "len(list([cell for _, cell in self.mlp.cells_and_names()]))" in out
        assert "len(list([cell for _, cell in self.deep.cells_and_names()]))" in out  # through an alias
        assert "self.other = self.plain.modules()" in out  # not a torch class: its own method
        assert "torch" not in out and "# msmap:" not in out
        ms_dir = tmp_path / engine.settings.family
        _package(ms_dir, {"misc.py": misc.converted.decode(), "user.py": out})
        ms_count = _run(ms_dir, "import mindspore", "from pkg.user import count; print(json.dumps(count()))")
        assert ms_count == torch_count == [3, 2 + 2]  # the cell itself and every descendant, as torch


def test_a_plain_relative_import_is_no_class(tmp_path):
    package = _package(tmp_path, {"util.py": "def helper(m):\n    return m\n", "user.py": ""})
    src = "import torch\nfrom .util import helper\nfrom . import util\n\nx = helper(torch.zeros(2)).modules()\n"
    assert imported_classes(package / "user.py", src.encode()) == {}


def _run(where, first: str, code: str):
    script = f"import json\n{first}\n{code}\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240, cwd=where)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


TWO_HELPERS = """from functools import partial
from torch import nn


class V(nn.Module):
    def __init__(self, norm_layer=partial(nn.LayerNorm, eps=1e-6)):
        super().__init__()
        seq = nn.Sequential()
        seq.add_module("a", nn.ReLU())
        self.seq = seq
        self.norm = norm_layer(4)
"""


def test_two_fixes_writing_helpers_at_the_same_place_both_apply(classic):
    out = converted(classic, TWO_HELPERS)
    # The adapter and the add_module helper both go before the class: one pass writes both (the
    # add_module fix, left for the next pass, would find seq already a SequentialCell and stay).
    assert 'ms_add_module(seq, "a", ms.nn.ReLU())' in out and "partial(ms_LayerNorm, eps=1e-6)" in out
    assert out.index("def ms_LayerNorm(") < out.index("def ms_add_module(") < out.index("class V(")
    assert "# msmap:" not in out and out.count("def ms_add_module(") == 1


def test_one_helper_asked_for_twice_is_written_once(classic):
    src = TWO_HELPERS.replace('seq.add_module("a", nn.ReLU())', 'seq.add_module("a", nn.ReLU())\n'
                              '        seq.add_module("b", nn.ReLU())')
    out = converted(classic, src)
    assert out.count("def ms_add_module(") == 1 and 'ms_add_module(seq, "b", ms.nn.ReLU())' in out
