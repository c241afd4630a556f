"""Conversion rules found on whole projects (nanoGPT, a UNet package, an LSTM tagger), each fix beside
its no-op neighbour, on snippets written for the test (bundled KB)."""
from __future__ import annotations

import pytest

from tests.analysis.test_conversion_rules import classic, converted  # noqa: F401  (classic: the bundled-KB engine fixture)

MARK = "# msmap: if this is a tensor"

GPT_HEAD = "import torch\nimport torch.nn as nn\nfrom typing import cast\n\nclass G(nn.Module):\n"


@pytest.mark.parametrize("body, fixed, kept", [
    pytest.param("    def forward(self, idx):\n        e = cast(nn.Embedding, self.t.wte)(idx)\n"
                 "        x = e + 1\n        return x.softmax(dim=1)\n", "x.softmax(axis=1)", None, id="cast-of-a-container-layer"),
    pytest.param("    def forward(self, idx):\n        x = self.t.h(idx)\n        return x.softmax(dim=1)\n",
                 "x.softmax(axis=1)", None, id="container-layer-given-a-tensor"),
    pytest.param("    def forward(self, idx):\n        x = self.cfg.get('k')\n        return x.softmax(dim=1)\n",
                 None, "x.softmax(dim=1)", id="container-call-without-a-tensor"),
    pytest.param("    def forward(self, idx):\n        x = cast(int, self.cfg.n)\n        return x.softmax(dim=1)\n",
                 None, "x.softmax(dim=1)", id="cast-of-a-non-tensor"),
])
def test_container_layers_and_cast(classic, body, fixed, kept):
    out = converted(classic, GPT_HEAD + body)
    if fixed:
        assert fixed in out and MARK not in out
    if kept:
        assert f"else {kept})" in out and MARK not in out  # tested at run time


@pytest.mark.parametrize("src, fixed, kept", [
    pytest.param("import torch\n\ndef sample(n):\n    t = torch.zeros(2, n)\n    x = t.unsqueeze(0)\n"
                 "    while x.size(1) < n:\n        x = torch.cat((x, t), dim=1)\n    return x\n",
                 "x.shape[1] < n", None, id="torch-results-without-tensor-parameters"),
    pytest.param("import torch\n\ndef sample(model, n):\n    x = model(n)\n    return x.softmax(dim=1)\n",
                 None, "x.softmax(dim=1)", id="a-call-is-no-tensor-without-tensor-parameters"),
])
def test_functions_without_tensor_parameters(classic, src, fixed, kept):
    out = converted(classic, src)
    if fixed:
        assert fixed in out and MARK not in out
    if kept:
        assert f"else {kept})" in out and MARK not in out  # tested at run time

