"""Layers and functions whose MindSpore defaults differ from torch's (issue 25/26). Where MindSpore's own API runs,
the rewrite writes torch's default explicitly when the call leaves it out (``torch.linalg.cross`` -> ``dim=-1``,
``torch.linalg.diagonal`` -> ``dim1=-2, dim2=-1``, ``torch.rot90`` -> ``k`` and ``dims``, which ops.rot90 requires).
The instance norms cannot go that way on the CPU: classic ``nn.InstanceNorm1d/2d/3d`` have no CPU kernel with any
``affine`` (kernel probes in data/probes/defs/kernels_norms.yaml) and mint has none, so MsInstanceNorm, a Cell
with torch's defaults and parameter names, is written into the file. Every case is torch code written here,
converted with ``--device CPU`` in both families and run next to torch (layers with torch's weights loaded)."""
from __future__ import annotations

import numpy as np
import pytest

from kb.analysis.convert import convert_source
from kb.probes.calls import Case
from tests.analysis.executed import assert_converted_and_matching, convert_and_run, run_without_torch
from tests.analysis.roundtrip import converted

STYLE_NET = '''import torch
import torch.nn as nn


class StyleBlock(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.norm = nn.InstanceNorm2d(channels, affine=True)
        self.plain = nn.InstanceNorm2d(channels)

    def forward(self, x):
        return self.plain(torch.relu(self.norm(self.conv(x)))) + x


def make():
    return StyleBlock()
'''

LAYERS = [
    ("instancenorm2d-default", "nn.InstanceNorm2d(3)", {"x": [2, 3, 5, 4]}),
    ("instancenorm2d-affine", "nn.InstanceNorm2d(3, affine=True, eps=1e-3)", {"x": [2, 3, 4, 4]}),
    ("instancenorm1d-unbatched", "nn.InstanceNorm1d(4, affine=True)", {"x": [4, 6]}),
    ("instancenorm1d-positional", "nn.InstanceNorm1d(4, 1e-4, 0.3, True)", {"x": [2, 4, 6]}),
    ("instancenorm3d-weight-only", "nn.InstanceNorm3d(2, affine=True, bias=False)", {"x": [1, 2, 3, 3, 4]}),
]
CALLS = [
    ("cross-default-dim", "torch.linalg.cross(a, b)", {"a": [3, 3], "b": [3, 3]}),
    ("diagonal-default-dims", "torch.linalg.diagonal(m)", {"m": [3, 2, 4]}),
    ("rot90-default", "torch.rot90(x)", {"x": [2, 3, 4]}),
    ("rot90-k-only", "torch.rot90(x, 3)", {"x": [2, 3, 4]}),
]


def _source(expression: str, inputs: dict, layer: bool) -> str:
    header = "import torch\nimport torch.nn as nn\n\n\n"
    if layer:
        return f"{header}def make():\n    return {expression}\n"
    return f"{header}def run({', '.join(inputs)}):\n    return {expression}\n"


@pytest.fixture(scope="module")
def executed(real_kb, tmp_path_factory):
    return convert_and_run(real_kb, tmp_path_factory, lambda family: [
        Case(id=f"{family}/{cid}", source=_source(expr, inputs, True), inputs=inputs, layer=True)
        for cid, expr, inputs in LAYERS] + [
        Case(id=f"{family}/{cid}", source=_source(expr, inputs, False), inputs=inputs)
        for cid, expr, inputs in CALLS] + [
        Case(id=f"{family}/style-block", source=STYLE_NET, inputs={"x": [2, 4, 5, 5]}, layer=True)])


@pytest.mark.parametrize("family", ["classic", "mint"])
@pytest.mark.parametrize("cid", [c[0] for c in LAYERS + CALLS] + ["style-block"])
def test_converts_and_matches_torch(executed, family, cid):
    assert_converted_and_matching(executed[f"{family}/{cid}"], cid)


@pytest.mark.parametrize("family", ["classic", "mint"])
def test_torchs_defaults_are_written_where_mindspore_differs(request, family):
    engine = request.getfixturevalue(family)
    text = converted(engine, _source("torch.linalg.cross(a, b), torch.linalg.diagonal(m), torch.rot90(m)",
                                     {"a": 0, "b": 0, "m": 0}, False))
    assert "ms.ops.cross(a, b, dim=-1)" in text
    assert "ms.ops.diagonal(m, dim1=-2, dim2=-1)" in text
    assert "ms.ops.rot90(m, 1, (0, 1))" in text


def test_an_instance_norm_keeps_torchs_defaults_and_parameter_names(classic):
    text = converted(classic, STYLE_NET)
    assert "self.norm = MsInstanceNorm(channels, affine=True, spatial=2)" in text
    assert "self.plain = MsInstanceNorm(channels, spatial=2)" in text  # affine=False, torch's default


def test_running_statistics_are_left_for_a_human(classic):
    source = "import torch.nn as nn\n\nnorm = nn.InstanceNorm2d(8, track_running_stats=True)\n"
    result = convert_source(classic, source)
    assert "nn.InstanceNorm2d(8, track_running_stats=True)  # msmap:" in result.text
    assert "MsInstanceNorm" not in result.text


def test_the_block_loads_torchs_weights_by_name_and_runs_in_graph_mode(classic, tmp_path):
    import torch

    namespace: dict = {}
    exec(STYLE_NET, namespace)
    torch.manual_seed(0)
    block = namespace["make"]()
    with torch.no_grad():
        block.norm.weight.uniform_(0.5, 1.5)
        block.norm.bias.uniform_(-0.5, 0.5)
    x = np.linspace(-1, 1, 2 * 4 * 5 * 5, dtype=np.float32).reshape(2, 4, 5, 5)
    want = block(torch.from_numpy(x)).detach().numpy()
    state = {k: v.detach().numpy().tolist() for k, v in block.state_dict().items()}
    done = run_without_torch(tmp_path, converted(classic, STYLE_NET), f"""
        import numpy as np
        import mindspore as ms
        import converted
        block = converted.make()
        state = {state!r}
        names = sorted(p.name for p in block.get_parameters())
        for p in block.get_parameters():
            p.set_data(ms.Tensor(np.array(state[p.name], np.float32)))
        x = ms.Tensor(np.array({x.tolist()}, np.float32))
        eager = block(x).asnumpy()
        ms.set_context(mode=ms.GRAPH_MODE)
        graph = block(x).asnumpy()
        print(names)
        print(eager.tolist())
        print(graph.tolist())
    """)
    assert done.returncode == 0, done.stderr[-3000:]
    names, eager, graph = done.stdout.strip().split("\n")[-3:]
    assert eval(names) == sorted(state)  # conv.weight, conv.bias, norm.weight, norm.bias: torch's names
    np.testing.assert_allclose(np.array(eval(eager)), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.array(eval(graph)), want, rtol=1e-5, atol=1e-5)


def test_a_lookup_by_name_lists_only_classes_a_reference_can_name(classic):
    # MsInstanceNorm is written by a template at a call: a reference has no class to name, so a lookup by name
    # lists the batch norms and raises KeyError for an instance norm, as it did before instance norms converted
    source = ("import torch.nn as nn\n\n\ndef norm_layer(kind, dims, width):\n"
              "    return getattr(nn, '{}Norm{}d'.format(kind, dims))(width)\n")
    text = converted(classic, source)
    assert "# msmap:" not in text and "InstanceNorm" not in text and '"BatchNorm2d":' in text
