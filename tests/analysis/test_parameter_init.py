"""In-place initialisation through ``.data`` (``m.weight.data.normal_(0, 0.02)``, ``.uniform_``, ``.zero_``):
the receiver is a tensor (``.data`` followed by an in-place method), so the rewrite applies without a marker,
and it fills the parameter itself, not ``.data`` (a copy in MindSpore, where writing changes nothing)."""
from __future__ import annotations

from tests.analysis.executed import run_without_torch
from tests.analysis.roundtrip import converted

SOURCE = '''\
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(256, 256)
        self.head = nn.Linear(256, 4)
        self.fc.weight.data.normal_(0, 0.02)
        self.fc.bias.data.zero_()
        self.head.weight.data.uniform_(0.5, 0.75)
'''


def test_init_through_data_fills_the_parameter(classic, tmp_path):
    text = converted(classic, SOURCE)
    assert "# msmap:" not in text and ".data" not in text
    done = run_without_torch(tmp_path, text, """
        import converted
        net = converted.Net()
        w, b, h = net.fc.weight.asnumpy(), net.fc.bias.asnumpy(), net.head.weight.asnumpy()
        print(round(float(w.std()), 3), float(abs(w.mean())) < 0.002, float(abs(b).max()),
              float(h.min()) >= 0.5, float(h.max()) <= 0.75, float(h.std()) > 0.05)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == "0.02 True 0.0 True True True"


def test_data_read_without_an_in_place_method_stays(classic):
    source = "import torch\n\ndef snapshot(layer):\n    return layer.weight.data.clone()\n"
    assert "layer.weight.data" in converted(classic, source)
