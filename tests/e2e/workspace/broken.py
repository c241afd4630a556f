import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 2
        self.act = nn.ReLU()

    def forward(self, x) -> 
        return self.act(self.fc(x))
