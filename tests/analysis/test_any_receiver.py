"""Guessed tensor methods whose rewrite holds for any receiver (kb/analysis/tensors.py ``ANY_RECEIVER``):
``x.size(0)`` -> ``x.shape[0]`` is applied without knowing that ``x`` is a tensor (a helper method that
forward calls with one, a layer subclass's own weight), since the rewrite is right for a MindSpore tensor
and a NumPy array and the torch spelling fails on MindSpore (``Tensor.size`` is an int there)."""
from __future__ import annotations

import numpy as np
import torch

from tests.analysis.roundtrip import converted

SOURCE = '''\
import torch
import torch.nn as nn


class Net(nn.Conv2d):
    def forward(self, x):
        h, w = self.weight.size()[-2:]
        return self.flat(x).sum() * h * w


def flat(x):
    return x.reshape(x.size(0), -1), x.size(-1), x.size()
'''


def test_size_calls_become_shape_on_any_receiver(classic):
    text = converted(classic, SOURCE)
    assert "self.weight.shape[-2:]" in text
    assert "return x.reshape(x.shape[0], -1), x.shape[-1], x.shape" in text
    assert "if this is a tensor" not in text


def test_the_rewrite_gives_torch_s_numbers_on_numpy(classic):
    text = converted(classic, SOURCE)
    helper = text[text.index("def flat"):]
    scope: dict = {}
    exec(helper, scope)  # the converted helper alone: NumPy in, as a MindSpore tensor would be
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    got = scope["flat"](data)
    x = torch.from_numpy(data)
    assert got[0].shape == tuple(x.reshape(x.size(0), -1).shape)
    assert (got[1], tuple(got[2])) == (x.size(-1), tuple(x.size()))


def test_attribute_reads_and_other_methods_stay(classic):
    source = "import torch\n\ndef area(img, q):\n    return img.size[0] * q.qsize() + len(img.size)\n"
    assert "return img.size[0] * q.qsize() + len(img.size)\n" in converted(classic, source)
