"""A converted module never imports torch (kb/analysis/standins.py): torch names left for a human become
stand-ins that raise where they are reached, with their reason; everything else imports and runs."""
from __future__ import annotations

import ast

import pytest

from kb.analysis.convert import convert_source
from tests.analysis.executed import run_without_torch

LOADER = '''\
"""Weights from a URL, a helper, a version check in a function."""
import torch
from torch.utils import model_zoo

VALUE = 3
ACTIVATION = torch.nn.ReLU()  # (something converts: a file nothing converts in stays as it is)


def load(url):
    return model_zoo.load_url(url)


class Mine(torch.autograd.function.InplaceFunction):
    @staticmethod
    def forward(ctx, x):
        return x


mine = Mine.apply  # (a subclass's attribute is reached at import: it fails only when called)


def recent():
    return "built with torch " + torch.__version__  # (a version reported, not tested: left for a human)
'''


@pytest.fixture(scope="module")
def loader(classic):
    return convert_source(classic, LOADER).text


def test_no_torch_import_is_left(loader):
    ast.parse(loader)
    assert "import torch" not in loader and "from torch" not in loader
    assert 'model_zoo = MsUnconverted("torch.utils.model_zoo")' in loader
    assert "# msmap:" in loader  # the markers stay for the human


def test_converting_again_changes_nothing(classic, loader):
    assert convert_source(classic, loader).text == loader


def test_the_module_imports_without_torch_and_fails_where_reached(tmp_path, loader):
    done = run_without_torch(tmp_path, loader, """
        import converted
        assert converted.VALUE == 3
        for call in (lambda: converted.load("https://example.com/w.pth"), lambda: converted.Mine.apply(1),
                     lambda: converted.Mine(), lambda: converted.mine(1), converted.recent):
            try:
                call()
            except NotImplementedError as exc:
                print("raised:", exc)
            else:
                raise SystemExit("no error")
    """)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 5
    assert "torch.utils.model_zoo.load_url" in lines[0] and "msmap" in lines[0]
    assert all("torch.autograd.function.InplaceFunction" in line for line in lines[1:4])
    assert "torch.__version__" in lines[4]


def test_a_converted_model_runs_beside_what_is_left(tmp_path, classic):
    source = '''\
import torch
import torch.nn as nn
from torch.utils import model_zoo


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def net(pretrained=False):
    model = Net()
    if pretrained:
        model.load_state_dict(model_zoo.load_url("https://example.com/w.pth"))
    return model
'''
    text = convert_source(classic, source).text
    assert "MsUnconverted" in text and "import torch" not in text
    done = run_without_torch(tmp_path, text, """
        import numpy as np
        import mindspore as ms
        import converted
        print(converted.net()(ms.Tensor(np.ones((3, 4), np.float32))).shape)
        try:
            converted.net(pretrained=True)
        except NotImplementedError as exc:
            print("raised:", "load_url" in str(exc))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["(3, 2)", "raised: True"]


@pytest.mark.parametrize("source", [
    pytest.param("import torch\nimport torch.nn as nn\n\nlayer = nn.Linear(2, 3)\n", id="all-converted"),
    pytest.param("try:\n    import torch\nexcept ImportError:\n    torch = None\n\nHAS = torch is not None\n",
                 id="guarded-import"),
    pytest.param("import einops\n\ny = einops.rearrange(x, 'a b -> b a')\n", id="einops-imports-without-torch"),
    pytest.param("import numpy as np\n\nx = np.zeros(3)\n", id="no-torch"),
])
def test_no_stand_in_where_nothing_needs_one(classic, source):
    assert "MsUnconverted" not in convert_source(classic, source).text
