"""A layer held in an attribute answers to its MindSpore parameter names (rules/layer_parameters.py):
``self.emb.weight`` of an Embedding, ``self.bn.running_mean`` of a BatchNorm, ``self.fc.in_features``."""
from __future__ import annotations

import pytest

from kb.analysis.convert import convert_source
from tests.analysis.executed import run_without_torch

TIED = """\
import torch
import torch.nn as nn


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.norm = nn.LayerNorm(4)
        self.out = nn.Linear(4, 10, bias=False)
        self.out.weight = self.emb.weight  # weight tying
        nn.init.normal_(self.emb.weight, std=0.02)

    def forward(self, x):
        return self.out(self.norm(self.emb(x)))

    def sizes(self):
        return tuple(self.emb.weight.shape), tuple(self.norm.weight.shape), self.out.in_features
"""


@pytest.mark.parametrize("family", ["classic", "mint"])
def test_tied_weights_and_layer_attributes_use_the_mindspore_names(family, request, tmp_path):
    text = convert_source(request.getfixturevalue(family), TIED).text
    assert "# msmap:" not in text and "torch" not in text, text
    done = run_without_torch(tmp_path, text, """
        import numpy as np, converted
        net = converted.Tied()
        shared = [p for p in net.get_parameters() if tuple(p.shape) == (10, 4)]
        print(len(shared), net.sizes())
        print(net(converted.ms.Tensor(np.array([[1, 2, 3]], np.int32))).shape)
    """)
    assert done.returncode == 0, done.stderr[-2000:]
    first, second = done.stdout.splitlines()[-2:]
    assert first == "1 ((10, 4), (4,), 4)"  # one (10, 4) parameter: the output layer holds the embedding's
    assert second.replace(" ", "") in ("(1,3,10)", "[1,3,10]")


def test_an_attribute_whose_classes_disagree_is_left_and_one_they_agree_on_is_renamed(classic):
    src = TIED.replace("        self.norm = nn.LayerNorm(4)\n",
                       "        self.norm = nn.LayerNorm(4) if True else nn.Embedding(4, 4)\n")
    text = convert_source(classic, src).text
    assert "self.norm.weight.shape" in text  # gamma or embedding_table: not known, left
    assert "self.emb.embedding_table" in text
    agreeing = convert_source(classic, src.replace("nn.Embedding(4, 4)", "nn.BatchNorm1d(4)")).text
    assert "self.norm.gamma.shape" in agreeing  # LayerNorm and BatchNorm1d both call it gamma
