"""ModuleList and ModuleDict filled after they are given to their owner (data/curated/module.yaml helpers):
the converted parameters carry torch's names (``blocks.0.weight``), so torch's checkpoints load, and the
model runs in PyNative and GRAPH_MODE."""
from __future__ import annotations

from tests.analysis.executed import run_without_torch
from tests.analysis.roundtrip import converted

SOURCE = '''\
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, depth=2):
        super().__init__()
        self.blocks = nn.ModuleList([])
        for _ in range(depth):
            self.blocks.append(nn.Linear(4, 4))
        self.blocks.extend([nn.Linear(4, 4)])
        self.heads = nn.ModuleDict()
        self.heads["out"] = nn.Linear(4, 2)
        self.stem = nn.ModuleList([nn.Linear(4, 4)])

    def forward(self, x):
        x = self.stem[0](x)
        for block in self.blocks:
            x = block(x)
        return self.heads["out"](x)
'''


def test_parameter_names_are_torch_s_and_the_model_runs_compiled(classic, tmp_path):
    text = converted(classic, SOURCE)
    assert "ms_ModuleList([])" in text and "ms_ModuleDict()" in text
    done = run_without_torch(tmp_path, text, """
        import numpy as np
        import mindspore as ms
        import converted
        net = converted.Net()
        print(sorted(p.name for p in net.get_parameters()))
        x = ms.Tensor(np.ones((3, 4), np.float32))
        print(net(x).shape)
        ms.set_context(mode=ms.GRAPH_MODE)
        print(net(x).shape)
    """)
    assert done.returncode == 0, done.stderr
    names, eager, graph = done.stdout.strip().split("\n")[-3:]
    namespace: dict = {}
    exec(SOURCE.replace("import torch.nn as nn", "import torch.nn as nn\nimport torch"), namespace)
    torch_names = sorted(namespace["Net"]().state_dict())
    # the classic Linear (Dense) names its parameters weight/bias as torch does
    assert eval(names) == torch_names
    assert eager == graph == "(3, 2)"


def test_a_list_built_with_its_cells_is_unchanged_in_meaning(classic):
    text = converted(classic, "import torch.nn as nn\n\nlayers = nn.ModuleList([nn.ReLU(), nn.Tanh()])\n")
    assert "ms_ModuleList([ms.nn.ReLU(), ms.nn.Tanh()])" in text
