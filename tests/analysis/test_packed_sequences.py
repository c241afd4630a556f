"""Packed sequences around an RNN (kb/analysis/packedsequences.py and the records' templates): the fix
beside its no-op neighbours, and the LSTM arguments MindSpore refuses, on snippets written for the test."""
from __future__ import annotations

import pytest

from tests.analysis.test_conversion_rules import classic, converted  # noqa: F401  (classic: the bundled-KB engine without a device; mint_cpu: conftest)

PACKED = ("import torch.nn as nn\nfrom torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence\n\n"
          "class Tagger(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
          "        self.rnn = nn.GRU(4, 3, batch_first=True)\n\n"
          "    def forward(self, x, lengths):\n"
          "        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)\n"
          "        out, h = self.rnn(packed)\n        plain, _ = self.rnn(x)\n"
          "        y, _ = pad_packed_sequence(out, batch_first=True, total_length=9)\n        return y, plain\n")


@pytest.mark.parametrize("family", ["classic", "mint"])
def test_the_rnn_takes_the_padded_batch_and_the_lengths(request, family):
    out = converted(request.getfixturevalue("classic" if family == "classic" else "mint_cpu"), PACKED)
    assert "packed = ms_pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)" in out
    assert "out, h = ms_run_packed(self.rnn, packed)" in out
    assert "y, _ = ms_pad_packed_sequence(out, batch_first=True, total_length=9)" in out
    assert "output, state = rnn(data.swapaxes(0, 1) if turned else data, hx, seq_length=lengths)" in out
    for name in ("ms_pack_padded_sequence", "ms_run_packed", "ms_pad_packed_sequence"):
        assert out.count(f"def {name}(") == 1
    assert "import torch" not in out and "from torch" not in out and "# msmap:" not in out


def test_an_rnn_call_on_a_plain_tensor_is_left_as_it_is(classic):
    out = converted(classic, PACKED)
    assert "plain, _ = self.rnn(x)" in out


def test_a_packed_name_in_another_function_is_not_a_packed_value(classic):
    src = ("import torch.nn as nn\nfrom torch.nn.utils.rnn import pack_padded_sequence\n\n"
           "def pack(x, n):\n    packed = pack_padded_sequence(x, n)\n    return packed\n\n"
           "def run(rnn, packed):\n    return rnn(packed)\n")
    out = converted(classic, src)
    assert "return rnn(packed)" in out and "ms_run_packed(" not in out.split("def run")[1]


@pytest.mark.parametrize("layer", ["LSTM", "GRU", "RNN"])
def test_rnn_layers_take_an_int_dropout_and_torchs_device_and_dtype(classic, layer):
    out = converted(classic, f"import torch.nn as nn\nr = nn.{layer}(4, 3, dropout=0, device=None)\n"
                             f"make = nn.{layer}\n")
    assert f"r = ms.nn.{layer}(4, 3, dropout=0.0)" in out  # int dropout is refused by MindSpore; device goes
    assert "dropout=float(dropout)" in out and "if dtype is not None:" in out  # the adapter for later calls


def test_an_rnn_called_by_position_gets_keywords_past_its_sizes(classic):
    """MindSpore's RNN reads ``*args`` in another order (nonlinearity is keyword-only there): a layer whose
    MindSpore order is not recorded keeps only torch's required arguments by position (the rewrite probe
    found the positional call crashing with 'multiple values for argument has_bias')."""
    out = converted(classic, "import torch.nn as nn\nr = nn.RNN(3, 4, 1, 'tanh', True)\n")
    assert "ms.nn.RNN(3, 4, num_layers=1, nonlinearity='tanh', has_bias=True)" in out
