"""The twin of torchnets.Odd; ``flaw`` names what this one gets wrong."""
import mindspore as ms
from mindspore import nn


class Odd(nn.Cell):
    def __init__(self, flaw=None):
        super().__init__()
        self.fc = nn.Dense(3, 2)
        self.flaw = flaw

    def construct(self, x):
        y = self.fc(x)
        special = ms.Tensor([float("inf"), float("-inf"), float("nan"), 1.0], ms.float32)
        if self.flaw == "inf_to_zero":
            special = ms.Tensor([0.0, float("-inf"), float("nan"), 1.0], ms.float32)
        out = {"n": (2, True), "none": None, "act": "relu", "scale": 1.5, "special": special, "y": y}  # reordered
        if self.flaw == "renamed_key":
            out["logits"] = out.pop("y")
        return out
