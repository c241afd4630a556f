"""Inputs for the rewrite probes' generated calls where a parameter's name alone does not say them.

``kb.probes.generate`` keys recipes by parameter name (``dim=1``, ``kernel_size=3``); an API whose
inputs must fit each other (``bmm``'s batched matrices, a loss's class-index target, an embedding's
integer input) gets its own entry here: ``tensors`` (a parameter passed a tensor of this spec, merged
over the input variant's), ``literals`` (a parameter passed this value) or, for a layer, ``inputs``
(the tensors it is applied to).
"""
from __future__ import annotations

from typing import Any

INDEX_TARGET = {"shape": [3], "dtype": "int64", "range": [0, 3]}
ONES = {"shape": [3], "range": [1.0, 1.0]}
PROBS = {"shape": [3, 4], "range": [0.05, 0.95]}

RECIPES: dict[str, dict[str, Any]] = {
    "torch.arange": {"literals": {"start": 0, "end": 5}},
    "torch.linspace": {"literals": {"start": 0.0, "end": 1.0, "steps": 5}},
    "torch.logspace": {"literals": {"start": 0.0, "end": 1.0, "steps": 5}},
    "torch.reshape": {"literals": {"shape": [4, -1]}},
    "torch.Tensor.reshape": {"literals": {"shape": [4, -1]}},
    "torch.broadcast_to": {"literals": {"size": [2, 2, 3, 4], "shape": [2, 2, 3, 4]}},
    "torch.Tensor.broadcast_to": {"literals": {"size": [2, 2, 3, 4], "shape": [2, 2, 3, 4]}},
    "torch.bmm": {"tensors": {"input": {"shape": [2, 2, 3]}, "mat2": {"shape": [2, 3, 4]}}},
    "torch.Tensor.bmm": {"tensors": {"input": {"shape": [2, 2, 3]}, "mat2": {"shape": [2, 3, 4]}}},
    "torch.baddbmm": {"tensors": {"input": {"shape": [2, 2, 4]}, "batch1": {"shape": [2, 2, 3]},
                                  "batch2": {"shape": [2, 3, 4]}}},
    "torch.outer": {"tensors": {"input": {"shape": [3]}, "vec2": {"shape": [4]}}},
    "torch.Tensor.outer": {"tensors": {"input": {"shape": [3]}, "vec2": {"shape": [4]}}},
    "torch.ger": {"tensors": {"input": {"shape": [3]}, "vec2": {"shape": [4]}}},
    "torch.nn.functional.batch_norm": {"tensors": {"input": {"shape": [2, 3, 4]}, "running_mean": {"shape": [3]},
                                                   "running_var": {"shape": [3], "range": [0.5, 2.0]}}},
    "torch.nn.functional.instance_norm": {"tensors": {"input": {"shape": [2, 3, 4]}}},
    "torch.dot": {"tensors": {"input": {"shape": [3]}, "tensor": {"shape": [3]}}},
    "torch.vdot": {"tensors": {"input": {"shape": [3]}, "other": {"shape": [3]}}},
    "torch.Tensor.dot": {"tensors": {"input": {"shape": [3]}, "tensor": {"shape": [3]}}},
    "torch.addmm": {"tensors": {"input": {"shape": [2, 4]}, "mat1": {"shape": [2, 3]}, "mat2": {"shape": [3, 4]}}},
    "torch.Tensor.addmm": {"tensors": {"input": {"shape": [2, 4]}, "mat1": {"shape": [2, 3]},
                                       "mat2": {"shape": [3, 4]}}},
    "torch.addmv": {"tensors": {"input": {"shape": [2]}, "mat": {"shape": [2, 3]}, "vec": {"shape": [3]}}},
    "torch.nn.functional.nll_loss": {"tensors": {"input": {"shape": [3, 4]}, "target": INDEX_TARGET}},
    "torch.nn.functional.cross_entropy": {"tensors": {"input": {"shape": [3, 4]}, "target": INDEX_TARGET}},
    "torch.nn.functional.binary_cross_entropy": {"tensors": {"input": PROBS,
                                                             "target": {"shape": [3, 4], "range": [0.0, 1.0]}}},
    "torch.nn.functional.prelu": {"tensors": {"input": {"shape": [2, 3, 4]}, "weight": {"shape": [3]}}},
    "torch.nn.functional.embedding": {"tensors": {"input": {"shape": [2, 3], "dtype": "int64", "range": [0, 4]},
                                                  "weight": {"shape": [5, 4]}}},
    "torch.nn.functional.one_hot": {"tensors": {"input": {"shape": [2, 3], "dtype": "int64", "range": [0, 2]}}},
    "torch.Tensor.masked_fill": {"literals": {"value": 2.0}},
    "torch.nn.Embedding": {"inputs": [{"x": {"shape": [2, 3], "dtype": "int64", "range": [0, 9]}}]},
    "torch.nn.EmbeddingBag": {"inputs": [{"x": {"shape": [2, 3], "dtype": "int64", "range": [0, 9]}}]},
    "torch.nn.NLLLoss": {"inputs": [{"x": {"shape": [3, 4]}, "y": INDEX_TARGET}]},
    "torch.nn.CrossEntropyLoss": {"inputs": [{"x": {"shape": [3, 4]}, "y": INDEX_TARGET}]},
    "torch.nn.MultiMarginLoss": {"inputs": [{"x": {"shape": [3, 4]}, "y": INDEX_TARGET}]},
    "torch.nn.MarginRankingLoss": {"inputs": [{"x": {"shape": [3]}, "y": {"shape": [3]}, "t": ONES}]},
    "torch.nn.CosineEmbeddingLoss": {"inputs": [{"x": {"shape": [3, 4]}, "y": {"shape": [3, 4]}, "t": ONES}]},
    "torch.nn.HingeEmbeddingLoss": {"inputs": [{"x": {"shape": [3]}, "y": ONES}]},
    "torch.nn.TripletMarginLoss": {"inputs": [{"x": {"shape": [3, 4]}, "y": {"shape": [3, 4]},
                                               "z": {"shape": [3, 4]}}]},
    "torch.nn.PReLU": {"inputs": [{"x": {"shape": [2, 1, 4]}}]},
}


def recipe(torch_name: str) -> dict[str, Any]:
    return RECIPES.get(torch_name, {})
