"""A small in-memory knowledge base for the engine's tests.

Records follow DESIGN.md's shape.  They are test data: chosen to exercise the
engine's rules (renames, transforms, dropped/unsupported/added params, version
ranges, both families, caveats), not a statement about MindSpore.
"""
from __future__ import annotations

from typing import Any, Optional

from kb.analysis.catalog import MemoryKB


def target(api: Optional[str], relation: str, family: str = "classic", params=(), since=None, until=None,
           auto=None, sig=None, note=None) -> dict[str, Any]:
    return {
        "family": family, "api": api, "relation": relation, "auto": auto, "params": list(params),
        "ms_versions": {"since": since, "until": until}, "ms_signature": sig, "note": note,
        "provenance": [], "checks": [],
    }


def param(torch=None, ms=None, kind="same", torch_default=None, ms_default=None, transform=None, note=None):
    return {"torch": torch, "ms": ms if ms is not None else (torch if kind in ("same",) else None),
            "kind": kind, "torch_default": torch_default, "ms_default": ms_default,
            "transform": transform, "note": note}


def record(torch: str, targets, kind="function", sig=None, advice=None, caveats=()) -> dict[str, Any]:
    return {"torch": torch, "kind": kind, "namespace": torch.rsplit(".", 1)[0], "source": "curated",
            "torch_signature": sig, "advice": advice, "targets": list(targets), "caveats": list(caveats)}


def caveat(id: str, title: str, severity: str, applies_to, since=None, until=None) -> dict[str, Any]:
    return {"id": id, "title": title, "body": "Body text for the test caveat.", "severity": severity,
            "topic": "test", "applies_to": list(applies_to), "ms_versions": {"since": since, "until": until},
            "torch_versions": {"since": None, "until": None}, "provenance": [], "claims": []}


def consistent(torch: str, api: str, kind="function", mint: Optional[str] = None, **kw) -> dict[str, Any]:
    targets = [target(api, "consistent")]
    if mint:
        targets.append(target(mint, "consistent", "mint"))
    return record(torch, targets, kind=kind, **kw)


RECORDS = [
    record("torch.nn.Linear", [
        target("mindspore.nn.Dense", "param_names_differ", params=[
            param("in_features", "in_channels", "renamed"),
            param("out_features", "out_channels", "renamed"),
            param("bias", "has_bias", "renamed", "True", "True"),
            param("device", None, "dropped"),
            param("dtype", None, "unsupported", "None"),
        ], sig="(in_channels, out_channels, weight_init=None, bias_init=None, has_bias=True, activation=None)"),
        target("mindspore.mint.nn.Linear", "consistent", "mint"),
    ], kind="class", sig="(in_features, out_features, bias=True, device=None, dtype=None)",
        caveats=[caveat("linear-init", "Default weight initialization differs", "warning",
                        ["torch.nn.Linear", "mindspore.nn.Dense"])]),
    record("torch.nn.Dropout", [
        target("mindspore.nn.Dropout", "param_semantics_differ", until="2.0", params=[
            param("p", "keep_prob", "transformed", "0.5", "0.5", "1 - v"),
            param("inplace", None, "dropped"),
        ], sig="(keep_prob=0.5, dtype=mstype.float32)"),
        target("mindspore.nn.Dropout", "consistent", since="2.0", params=[
            param("p", "p", "same", "0.5", "0.5"), param("inplace", None, "dropped")],
            sig="(keep_prob=None, p=None, dtype=mstype.float32)"),
        target("mindspore.mint.nn.Dropout", "consistent", "mint"),
    ], kind="class", sig="(p=0.5, inplace=False)",
        caveats=[caveat("dropout-p-vs-keep-prob", "keep_prob is 1 - p", "error", ["torch.nn.Dropout"],
                        until="2.0")]),
    record("torch.nn.Conv2d", [
        target("mindspore.nn.Conv2d", "param_names_differ", params=[
            param("in_channels"), param("out_channels"), param("kernel_size"), param("stride"),
            param("padding", "padding", "same", "0", "0"),
            param("padding", "pad_mode", "added", "0", "'same'", "'pad'"),
            param("dilation"), param("groups", "group", "renamed", "1", "1"),
            param("bias", "has_bias", "renamed", "True", "False"),
            param("padding_mode", None, "unsupported", "'zeros'", note="only zero padding"),
        ], sig="(in_channels, out_channels, kernel_size, stride=1, pad_mode='same', padding=0, dilation=1, "
               "group=1, has_bias=False)"),
    ], kind="class", sig="(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, "
                         "bias=True, padding_mode='zeros', device=None, dtype=None)"),
    record("torch.nn.BatchNorm2d", [
        target("mindspore.nn.BatchNorm2d", "param_semantics_differ", params=[
            param("num_features"), param("eps", "eps", "same", "1e-05", "1e-05"),
            param("momentum", "momentum", "transformed", "0.1", "0.9", "1 - v"),
            param("affine"),
        ], sig="(num_features, eps=1e-05, momentum=0.9, affine=True)"),
    ], kind="class", sig="(num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)"),
    record("torch.nn.LayerNorm", [
        target("mindspore.nn.LayerNorm", "param_names_differ", params=[
            param("normalized_shape"), param("eps", "epsilon", "renamed", "1e-05", "1e-07"),
            param("elementwise_affine", None, "unsupported", "True"),
        ], sig="(normalized_shape, begin_norm_axis=-1, begin_params_axis=-1, epsilon=1e-07)"),
    ], kind="class", sig="(normalized_shape, eps=1e-05, elementwise_affine=True, bias=True)"),
    record("torch.nn.GELU", [
        target("mindspore.nn.GELU", "defaults_differ", params=[
            param("approximate", "approximate", "transformed", "'none'", "True", "v == 'tanh'")],
            sig="(approximate=True)"),
    ], kind="class", sig="(approximate='none')"),
    record("torch.nn.Embedding", [
        target("mindspore.nn.Embedding", "param_names_differ", params=[
            param("num_embeddings", "vocab_size", "renamed"), param("embedding_dim", "embedding_size", "renamed"),
            param("padding_idx"),
        ], sig="(vocab_size, embedding_size, use_one_hot=False, embedding_table='normal', dtype=None, "
               "padding_idx=None)"),
    ], kind="class", sig="(num_embeddings, embedding_dim, padding_idx=None)"),
    record("torch.nn.Bilinear", [
        target("mindspore.nn.BiDense", "param_names_differ", params=[param("in1_features", "in1_channels", "renamed")]),
    ], kind="class"),  # no torch signature recorded: no adapter can take its parameters
    consistent("torch.nn.ReLU", "mindspore.nn.ReLU", kind="class", mint="mindspore.mint.nn.ReLU", sig="()"),
    consistent("torch.nn.Flatten", "mindspore.nn.Flatten", kind="class", sig="(start_dim=1, end_dim=-1)"),
    consistent("torch.nn.MaxPool2d", "mindspore.nn.MaxPool2d", kind="class"),
    consistent("torch.nn.CrossEntropyLoss", "mindspore.nn.CrossEntropyLoss", kind="class"),
    consistent("torch.nn.MultiheadAttention", "mindspore.nn.MultiheadAttention", kind="class"),
    record("torch.nn.Sequential", [target("mindspore.nn.SequentialCell", "renamed"),
                                   target("mindspore.nn.SequentialCell", "renamed", "mint")], kind="class"),
    record("torch.nn.Module", [target("mindspore.nn.Cell", "renamed"),
                               target("mindspore.nn.Cell", "renamed", "mint")], kind="class"),
    record("torch.nn.Module.forward", [target("mindspore.nn.Cell.construct", "renamed"),
                                       target("mindspore.nn.Cell.construct", "renamed", "mint")], kind="method"),
    record("torch.nn.Module.parameters", [target("mindspore.nn.Cell.trainable_params", "renamed")],
           kind="method", sig="(recurse=True)"),
    record("torch.nn.Module.train", [target("mindspore.nn.Cell.set_train", "renamed")], kind="method",
           sig="(mode=True)"),
    record("torch.nn.Module.eval", [target("mindspore.nn.Cell.set_train", "param_names_differ", params=[
        param(None, "mode", "added", None, "True", "False")])], kind="method", sig="()"),
    record("torch.nn.Module.register_forward_hook", [
        target(None, "no_equivalent")], kind="method", advice="Use a Cell hook or wrap the cell. Details."),
    consistent("torch.nn.functional.relu", "mindspore.ops.relu", mint="mindspore.mint.nn.functional.relu",
               sig="(input, inplace=False)"),
    record("torch.nn.functional.softmax", [
        target("mindspore.ops.softmax", "param_names_differ", params=[
            param("input"), param("dim", "axis", "renamed")], sig="(input, axis=-1)"),
    ], sig="(input, dim=None)"),
    record("torch.nn.functional.dropout", [
        target("mindspore.ops.dropout", "context_change", note="The training flag comes from the cell. More.")],
        sig="(input, p=0.5, training=True, inplace=False)"),
    record("torch.nn.init.xavier_uniform_", [
        target(None, "no_equivalent")], advice="Pass weight_init=XavierUniform() when building the layer."),
    record("torch.optim.SGD", [
        target("mindspore.nn.SGD", "param_names_differ", params=[
            param("params"), param("lr", "learning_rate", "renamed"), param("momentum", "momentum", "same", "0", "0.0"),
        ], sig="(params, learning_rate=0.1, momentum=0.0)"),
    ], kind="class", sig="(params, lr=0.001, momentum=0)"),
    consistent("torch.optim.Adam", "mindspore.nn.Adam", kind="class"),
    record("torch.optim.Optimizer.step", [target(None, "no_equivalent")], kind="method",
           advice="Call the optimizer with the gradients: optimizer(grads)."),
    record("torch.optim.Optimizer.zero_grad", [target(None, "no_equivalent")], kind="method",
           advice="MindSpore does not accumulate gradients; delete the call."),
    record("torch.optim.lr_scheduler.StepLR", [
        target("mindspore.nn.piecewise_constant_lr", "context_change", note="Build the schedule as a list.")],
        kind="class"),
    record("torch.optim.lr_scheduler.LRScheduler.step", [target(None, "no_equivalent")], kind="method",
           advice="The learning-rate list is consumed by the optimizer."),
    consistent("torch.Tensor", "mindspore.Tensor", kind="class", mint="mindspore.Tensor"),
    consistent("torch.Tensor.view", "mindspore.Tensor.view", kind="method"),
    consistent("torch.Tensor.split", "mindspore.Tensor.split", kind="method"),
    record("torch.Tensor.size", [target("mindspore.Tensor.shape", "context_change",
                                        note="shape is an attribute, not a method.")], kind="method"),
    record("torch.Tensor.masked_fill", [target("mindspore.Tensor.masked_fill", "consistent")], kind="method"),
    record("torch.Tensor.transpose", [target("mindspore.Tensor.swapaxes", "renamed")], kind="method"),
    consistent("torch.cat", "mindspore.ops.cat", mint="mindspore.mint.cat", sig="(tensors, dim=0)"),
    consistent("torch.matmul", "mindspore.ops.matmul", mint="mindspore.mint.matmul"),
    consistent("torch.topk", "mindspore.ops.topk"),
    consistent("torch.zeros", "mindspore.ops.zeros", mint="mindspore.mint.zeros"),
    consistent("torch.randn", "mindspore.ops.randn", mint="mindspore.mint.randn"),
    consistent("torch.float32", "mindspore.float32", kind="dtype", mint="mindspore.float32"),
    record("torch.no_grad", [target(None, "no_equivalent")], kind="class",
           advice="Gradients are computed functionally in MindSpore; drop the context manager."),
    record("torch.device", [target(None, "no_equivalent")], kind="class",
           advice="Set the device with mindspore.set_device()."),
    record("torch.manual_seed", [target("mindspore.set_seed", "renamed")], sig="(seed)"),
    record("torch.new_api", [target("mindspore.ops.new_api", "consistent", since="2.11")]),
]


def make_kb() -> MemoryKB:
    return MemoryKB(RECORDS, aliases={"torch.nn.modules.linear.Linear": "torch.nn.Linear"})
