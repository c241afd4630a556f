from mindspore import Parameter, Tensor, nn, ops

from .blocks import conv3x3


class CNN(nn.Cell):
    def __init__(self, classes=5, eps=1e-5, extra=False):
        super().__init__()
        if extra:  # a parameter torch's model does not have
            self.scale = Parameter(Tensor([1.0]), name="scale")
        self.conv = conv3x3(3, 8)
        self.bn = nn.BatchNorm2d(8, eps=eps, momentum=0.9)
        self.conv1d = nn.Conv1d(8, 6, 3, has_bias=True, pad_mode="valid")
        self.head = nn.Dense(6, classes)

    def construct(self, x):
        y = ops.relu(self.bn(self.conv(x)))
        y = self.conv1d(y.mean(axis=2))
        return self.head(y.mean(axis=2)), y
