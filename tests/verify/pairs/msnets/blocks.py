from mindspore import nn


def conv3x3(cin, cout):
    return nn.Conv2d(cin, cout, 3, pad_mode="pad", padding=1, has_bias=True)
