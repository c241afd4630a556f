"""Small torch models for the weights/verify tests (each has a MindSpore twin in msnets/)."""
import torch
from torch import nn


class CNN(nn.Module):
    def __init__(self, classes=5):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv1d = nn.Conv1d(8, 6, 3)
        self.head = nn.Linear(6, classes)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))  # (N, 8, H, W)
        y = self.conv1d(y.mean(dim=2))  # (N, 6, W - 2)
        return self.head(y.mean(dim=2)), y


class Tagger(nn.Module):
    def __init__(self, vocab=50, dim=8, hidden=6, tags=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, tags)

    def forward(self, tokens):
        h, _ = self.lstm(self.emb(tokens))
        return {"tags": self.out(h), "mask": None}


class TiedLM(nn.Module):
    def __init__(self, vocab=40, dim=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, tokens):
        return self.head(self.norm(self.emb(tokens)))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.norm = nn.LayerNorm(16)
        self.act = nn.PReLU(16)
        self.bn = nn.BatchNorm1d(16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return torch.softmax(self.fc2(self.bn(self.act(self.norm(self.fc1(x))))), dim=-1)


class Odd(nn.Module):
    """Outputs of every kind verify compares (issue 28): a dict, inf and NaN, plain values, None."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        y = self.fc(x)
        special = torch.tensor([float("inf"), float("-inf"), float("nan"), 1.0])
        return {"y": y, "special": special, "scale": 1.5, "act": "relu", "none": None, "n": (2, True)}
