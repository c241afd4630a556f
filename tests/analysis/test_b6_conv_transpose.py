"""Transposed convolutions of one and three dimensions (held-out batch 6: denoiser's demucs builds
``nn.ConvTranspose1d(hidden, chout, kernel_size, stride)``; issue 26: transposed convolution with ``output_padding``).

Probed on mindspore 2.10 CPU (data/curated/nn_layers.yaml, caveat conv-transpose-values-proven): the classic
``nn.Conv1dTranspose`` matches torch at every stride, padding, dilation, groups and bias, and has no
``output_padding``; ``nn.Conv3dTranspose`` matches with dilation 1, ``output_padding`` included; ``nn.Conv2dTranspose``
differs with ``output_padding``. mint has neither layer, so both families take the classic one. Each layer is
converted and run next to torch with torch's weights (the classic 1-d kernel gains its size-1 axis through
kb.weights.map_weights); the values no probe proved keep a marker that says why."""
from __future__ import annotations

import pytest

from kb.probes.calls import Case, snippet
from tests.analysis.executed import FAMILIES, assert_converted_and_matching, convert_and_run
from tests.analysis.roundtrip import converted

# (id, layer as written, input shape)
LAYERS = [
    ("1d-positional-stride", "nn.ConvTranspose1d(6, 4, 8, 4)", [2, 6, 5]),
    ("1d-stride-padding", "nn.ConvTranspose1d(4, 6, 4, stride=2, padding=1)", [2, 4, 9]),
    ("1d-dilation-groups-no-bias", "nn.ConvTranspose1d(4, 6, 3, stride=3, padding=2, dilation=2, groups=2, bias=False)",
     [2, 4, 9]),
    ("1d-keywords", "nn.ConvTranspose1d(in_channels=4, out_channels=4, kernel_size=5, padding=2)", [1, 4, 7]),
    ("3d-output-padding", "nn.ConvTranspose3d(4, 6, 3, stride=2, padding=1, output_padding=1)", [1, 4, 3, 4, 5]),
    ("3d-groups-no-bias", "nn.ConvTranspose3d(4, 6, 2, stride=2, groups=2, bias=False)", [1, 4, 3, 4, 5]),
]


@pytest.fixture(scope="module")
def executed(real_kb, tmp_path_factory):
    return convert_and_run(real_kb, tmp_path_factory, lambda family: [
        Case(id=f"{family}/{cid}", source=snippet(layer, ["x"], True), inputs={"x": shape}, layer=True)
        for cid, layer, shape in LAYERS])


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("cid, layer, shape", LAYERS, ids=[c[0] for c in LAYERS])
def test_the_converted_layer_gives_torch_s_values(executed, family, cid, layer, shape):
    case = executed[f"{family}/{cid}"]
    assert ("Conv1dTranspose(" if "1d" in layer else "Conv3dTranspose(") in case.converted, case.converted
    assert "pad_mode='pad'" in case.converted and "has_bias" in case.converted, case.converted
    assert_converted_and_matching(case, cid)


@pytest.mark.parametrize("layer, why", [
    ("nn.ConvTranspose1d(4, 6, 3, stride=2, output_padding=1)", "output_padding"),  # Conv1dTranspose has none
    ("nn.ConvTranspose3d(4, 6, 3, dilation=2)", "dilation"),  # Conv3dTranspose raises ValueError
    ("nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1)", "output_padding"),  # other values
    ("nn.ConvTranspose1d(4, 6, 3, padding_mode='circular')", "padding_mode"),
])
def test_values_no_probe_proved_keep_their_marker(classic, mint, layer, why):
    for engine in (classic, mint):
        out = converted(engine, f"import torch.nn as nn\n\n\ndef make():\n    return {layer}\n")
        marked = [line for line in out.splitlines() if "# msmap:" in line and "def make" not in line]
        assert marked and why in marked[0], out
