from mindspore import mint, nn


class MLP(nn.Cell):
    """mint where 2.10 has CPU kernels (Linear, PReLU, softmax); classic LayerNorm and BatchNorm1d."""

    def __init__(self):
        super().__init__()
        self.fc1 = mint.nn.Linear(8, 16)
        self.norm = nn.LayerNorm((16,))
        self.act = mint.nn.PReLU(16)
        self.bn = nn.BatchNorm1d(16)
        self.fc2 = mint.nn.Linear(16, 4)

    def construct(self, x):
        return mint.nn.functional.softmax(self.fc2(self.bn(self.act(self.norm(self.fc1(x))))), dim=-1)
