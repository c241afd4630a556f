"""A convolution's padding that arrives in a variable (``padding=padding``) gets the whole transform, so
an int, a (h, w) pair, a list and torch's 'same' all give torch's output (data/curated/nn_layers.yaml);
it was passed through as it was, and a pair crashed in MindSpore ('pad size must be int')."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.analysis.roundtrip import converted

SOURCE = ("import torch.nn as nn\n\n\ndef layer(padding, transposed=False):\n"
          "    if transposed:\n        return nn.ConvTranspose2d(2, 3, 3, padding=padding)\n"
          "    return nn.Conv2d(2, 3, 3, padding=padding)\n")


@pytest.mark.parametrize("padding", [1, (1, 2), [0, 1], "same"])
def test_a_padding_in_a_variable_gives_torch_s_output(classic, padding):
    import mindspore as ms

    text = converted(classic, SOURCE)
    assert "import torch" not in text
    scope: dict = {}
    exec(text, scope)
    torch.manual_seed(0)
    x = np.random.default_rng(0).standard_normal((1, 2, 7, 9)).astype(np.float32)
    for transposed in ([False] if padding == "same" else [False, True]):  # ConvTranspose2d takes no strings
        mine = scope["layer"](padding, transposed)
        theirs = (torch.nn.ConvTranspose2d if transposed else torch.nn.Conv2d)(2, 3, 3, padding=padding)
        mine.weight.set_data(ms.Tensor(theirs.weight.detach().numpy()))
        mine.bias.set_data(ms.Tensor(theirs.bias.detach().numpy()))
        expected = theirs(torch.from_numpy(x)).detach().numpy()
        got = mine(ms.Tensor(x)).asnumpy()
        assert got.shape == expected.shape, (padding, transposed)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
