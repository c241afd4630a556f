"""Inputs for the rewrite probes' generated calls where a parameter's name alone does not say them.

``kb.probes.generate`` keys recipes by parameter name (``dim=1``, ``kernel_size=3``); an API whose
inputs must fit each other (``bmm``'s batched matrices, a loss's class-index target, an embedding's
integer input) gets its own entry here: ``tensors`` (a parameter passed a tensor of this spec, merged
over the input variant's; for ``*name`` one spec for two tensors or a list of specs), ``literals`` (a
parameter passed this value; for ``*name`` a list of values), ``sources`` (a parameter passed this source
text: ``torch.float32``) or, for a layer, ``inputs`` (the tensors it is applied to). ``params`` replaces
the recorded signature by the one a user calls, ``kind`` the kind of call, and ``then`` is read from the
call's result (``.eps``).
"""
from __future__ import annotations

from typing import Any

INDEX_TARGET = {"shape": [3], "dtype": "int64", "range": [0, 3]}
ONES = {"shape": [3], "range": [1.0, 1.0]}
PROBS = {"shape": [3, 4], "range": [0.05, 0.95]}
INDEX_VECTOR = {"shape": [2], "dtype": "int64", "range": [0, 2]}  # indices into dim 1 of a [2, 3, 4] input
COUNTS = {"shape": [6], "dtype": "int64", "range": [0, 4]}

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
    # shapes and sizes that fit the [2, 3, 4] input (``x.view(6, 4)``, ``x.expand(2, 3, 4)`` of a [3, 1])
    "torch.Tensor.view": {"literals": {"shape": [6, 4]}},
    "torch.Tensor.expand": {"tensors": {"input": {"shape": [3, 1]}}, "literals": {"size": [2, 3, 4]}},
    "torch.Tensor.repeat": {"literals": {"repeats": [2, 1, 2]}},
    "torch.Tensor.resize": {"literals": {"sizes": [4, 6]}},
    "torch.Tensor.sum_to_size": {"literals": {"size": [3, 1]}},
    "torch.Tensor.roll": {"literals": {"dims": 1}},
    "torch.Tensor.unfold": {"literals": {"size": 2, "step": 1}},
    "torch.hsplit": {"literals": {"indices_or_sections": 3}},
    # index vectors in range of dim 1 (size 3), sources that fit them
    "torch.index_select": {"tensors": {"index": INDEX_VECTOR}},
    "torch.Tensor.index_select": {"tensors": {"index": INDEX_VECTOR}},
    "torch.index_add": {"tensors": {"index": INDEX_VECTOR, "source": {"shape": [2, 2, 4]}}},
    "torch.Tensor.index_add": {"tensors": {"index": INDEX_VECTOR, "source": {"shape": [2, 2, 4]}}},
    "torch.Tensor.index_add_": {"tensors": {"index": INDEX_VECTOR, "source": {"shape": [2, 2, 4]}}},
    "torch.Tensor.index_fill": {"tensors": {"index": INDEX_VECTOR}},
    "torch.Tensor.index_fill_": {"tensors": {"index": INDEX_VECTOR}},
    "torch.Tensor.index_copy_": {"tensors": {"index": {**INDEX_VECTOR, "shape": [1]}, "tensor": {"shape": [2, 1, 4]}}},
    "torch.Tensor.put_": {"tensors": {"index": {"shape": [2], "dtype": "int64", "range": [0, 11]},
                                      "source": {"shape": [2]}}},
    "torch.Tensor.masked_scatter_": {"tensors": {"source": {"shape": [2, 3, 4]}}},
    "torch.select": {"literals": {"index": 1}},
    "torch.Tensor.select": {"literals": {"index": 1}},
    "torch.select_scatter": {"literals": {"index": 1}, "tensors": {"src": {"shape": [2, 4]}}},
    "torch.Tensor.select_scatter": {"literals": {"index": 1}, "tensors": {"src": {"shape": [2, 4]}}},
    "torch.diagonal_scatter": {"tensors": {"src": {"shape": [4, 2]}}},
    "torch.Tensor.diagonal_scatter": {"tensors": {"src": {"shape": [4, 2]}}},
    "torch.bincount": {"tensors": {"input": COUNTS}},
    "torch.Tensor.bincount": {"tensors": {"input": COUNTS}},
    # matrix products: the receiver (``input``) fits the product
    "torch.addbmm": {"tensors": {"input": {"shape": [2, 4]}}},
    "torch.Tensor.addbmm": {"tensors": {"input": {"shape": [2, 4]}}},
    "torch.Tensor.baddbmm": {"tensors": {"input": {"shape": [2, 2, 4]}}},
    "torch.Tensor.addmm_": {"tensors": {"input": {"shape": [2, 4]}}},
    "torch.addr": {"tensors": {"input": {"shape": [2, 3]}}},
    "torch.Tensor.addr": {"tensors": {"input": {"shape": [2, 3]}}},
    "torch.Tensor.addmv": {"tensors": {"input": {"shape": [2]}}},
    "torch.Tensor.dot": {"tensors": {"input": {"shape": [3]}, "other": {"shape": [3]}}},
    "torch.Tensor.ger": {"tensors": {"input": {"shape": [3]}, "vec2": {"shape": [4]}}},
    "torch.combinations": {"tensors": {"input": {"shape": [4]}}},
    "torch.vander": {"tensors": {"x": {"shape": [3]}}},
    "torch.linalg.vander": {"tensors": {"x": {"shape": [3]}}},
    # the multivariate log-gamma is defined for x > (p - 1) / 2 (p = 2: above 0.5, strictly)
    "torch.mvlgamma": {"tensors": {"input": {"range": [1.1, 3.0]}}},
    "torch.Tensor.mvlgamma": {"tensors": {"input": {"range": [1.1, 3.0]}}},
    "torch.prelu": {"tensors": {"input": {"shape": [2, 3, 4]}, "weight": {"shape": [3]}}},
    "torch.Tensor.item": {"tensors": {"input": {"shape": [1]}}},
    "torch.Tensor.log_softmax": {"params": [["dim", "POSITIONAL_OR_KEYWORD", None]]},
    # several tensors: ``torch.einsum(equation, *operands)`` (recorded as ``*args``), 1-D grids
    "torch.einsum": {"params": [["equation", "POSITIONAL_ONLY", None], ["operands", "VAR_POSITIONAL", None]],
                     "literals": {"equation": "bij,bjk->bik"},
                     "tensors": {"operands": [{"shape": [2, 3, 4]}, {"shape": [2, 4, 5]}]}},
    "torch.meshgrid": {"tensors": {"tensors": {"shape": [3]}}},
    "torch.cartesian_prod": {"tensors": {"tensors": {"shape": [3]}}},
    "torch.block_diag": {"tensors": {"tensors": {"shape": [2, 3]}}},
    # channels that split into groups; fold's columns fit its output and kernel
    "torch.channel_shuffle": {"tensors": {"input": {"shape": [2, 4, 3, 3]}}, "literals": {"groups": 2}},
    "torch.nn.functional.channel_shuffle": {"tensors": {"input": {"shape": [2, 4, 3, 3]}},
                                            "literals": {"groups": 2}},
    "torch.nn.ChannelShuffle": {"literals": {"groups": 2}, "inputs": [{"x": {"shape": [2, 4, 3, 3]}}]},
    "torch.nn.functional.fold": {"tensors": {"input": {"shape": [2, 12, 9]}},
                                 "literals": {"output_size": [4, 4], "kernel_size": 2}},
    "torch.nn.Fold": {"literals": {"output_size": [4, 4], "kernel_size": 2}, "inputs": [{"x": {"shape": [2, 12, 9]}}]},
    "torch.nn.functional.conv_transpose2d": {"tensors": {"input": {"shape": [2, 3, 6, 6]},
                                                         "weight": {"shape": [3, 4, 3, 3]}}},
    "torch.conv_transpose2d": {"tensors": {"input": {"shape": [2, 3, 6, 6]}, "weight": {"shape": [3, 4, 3, 3]}}},
    # unpooling: indices as a max pool gives them, one plane per channel (no two values to one place)
    "torch.nn.MaxUnpool1d": {"inputs": [{"x": {"shape": [1, 2, 1]},
                                         "i": {"shape": [1, 2, 1], "dtype": "int64", "range": [0, 2]}}]},
    "torch.nn.MaxUnpool2d": {"inputs": [{"x": {"shape": [1, 2, 1, 1]},
                                         "i": {"shape": [1, 2, 1, 1], "dtype": "int64", "range": [0, 8]}}]},
    "torch.nn.MaxUnpool3d": {"inputs": [{"x": {"shape": [1, 2, 1, 1, 1]},
                                         "i": {"shape": [1, 2, 1, 1, 1], "dtype": "int64", "range": [0, 26]}}]},
    # attention: query, key and value of one size; the layers' sizes split into heads
    "torch.nn.functional.scaled_dot_product_attention": {"tensors": {"query": {"shape": [2, 3, 4]},
                                                                     "key": {"shape": [2, 5, 4]},
                                                                     "value": {"shape": [2, 5, 4]}}},
    "torch.nn.MultiheadAttention": {"literals": {"embed_dim": 4, "num_heads": 2},
                                    "inputs": [{"q": {"shape": [3, 2, 4]}, "k": {"shape": [5, 2, 4]},
                                                "v": {"shape": [5, 2, 4]}}]},
    "torch.nn.TransformerEncoderLayer": {"literals": {"d_model": 4, "nhead": 2},
                                         "inputs": [{"x": {"shape": [3, 2, 4]}}]},
    "torch.nn.TransformerDecoderLayer": {"literals": {"d_model": 4, "nhead": 2},
                                         "inputs": [{"x": {"shape": [3, 2, 4]}, "m": {"shape": [5, 2, 4]}}]},
    # layers applied to more than one tensor
    "torch.nn.CosineSimilarity": {"inputs": [{"x": {"shape": [3, 4]}, "y": {"shape": [3, 4]}}]},
    "torch.nn.GaussianNLLLoss": {"inputs": [{"x": {"shape": [3, 4]}, "y": {"shape": [3, 4]},
                                             "v": {"shape": [3, 4], "range": [0.5, 2.0]}}]},
    "torch.nn.TripletMarginWithDistanceLoss": {"inputs": [{"x": {"shape": [3, 4]}, "y": {"shape": [3, 4]},
                                                           "z": {"shape": [3, 4]}}]},
    "torch.nn.functional.cosine_embedding_loss": {"tensors": {"input1": {"shape": [3, 4]}, "input2": {"shape": [3, 4]},
                                                              "target": ONES}},
    "torch.nn.functional.multi_margin_loss": {"tensors": {"input": {"shape": [3, 4]}, "target": INDEX_TARGET}},
    "torch.nn.functional.grid_sample": {"tensors": {"input": {"shape": [1, 2, 4, 4]},
                                                    "grid": {"shape": [1, 3, 3, 2], "range": [-1.0, 1.0]}}},
    "torch.nn.functional.affine_grid": {"tensors": {"theta": {"shape": [2, 2, 3]}}, "literals": {"size": [2, 3, 4, 4]}},
    "torch.multinomial": {"tensors": {"input": {"shape": [2, 3], "range": [0.1, 1.0]}},
                          "literals": {"num_samples": 2}},
    # not layers: torch.finfo(torch.float32).eps, as code reads a dtype's limits
    "torch.finfo": {"kind": "function", "params": [["type", "POSITIONAL_ONLY", None]],
                    "sources": {"type": "torch.float32"}, "then": ".eps"},
    "torch.iinfo": {"kind": "function", "params": [["type", "POSITIONAL_ONLY", None]],
                    "sources": {"type": "torch.int32"}, "then": ".max"},
}


def recipe(torch_name: str) -> dict[str, Any]:
    return RECIPES.get(torch_name, {})
