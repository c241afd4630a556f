from mindspore import ops

from .cnn import CNN


class Broken(CNN):
    def construct(self, x):
        y = ops.relu(self.bn(self.conv(x)))
        return y.reshape(7, -1, 5)  # the bug the crash test expects to be pointed at
