"""Every caveat topic of the seed pages (../shared/seeds) is in the bundled knowledge base.

Each row names a torch API a migrator would look up for that topic and a word the
attached caveats must talk about: if a curator deletes or detaches the caveat, this fails.
"""
from __future__ import annotations

import pytest

SEED_TOPICS = [
    ("Module -> Cell / forward -> construct", "torch.nn.Module", "construct"),
    ("train vs inference default mode", "torch.nn.Module.train", "set_train"),
    ("Conv2d bias default", "torch.nn.Conv2d", "has_bias"),
    ("Conv2d pad_mode/padding", "torch.nn.Conv2d", "pad_mode"),
    ("odd 'same' padding side", "torch.nn.Conv2d", "bottom"),
    ("ReLU inplace", "torch.nn.ReLU", "inplace"),
    ("Linear -> Dense", "torch.nn.Linear", "Dense"),
    ("Sequential -> SequentialCell", "torch.nn.Sequential", "SequentialCell"),
    ("BatchNorm momentum", "torch.nn.BatchNorm2d", "momentum"),
    ("BatchNorm use_batch_statistics", "torch.nn.BatchNorm2d", "use_batch_statistics"),
    ("Dropout p vs keep_prob", "torch.nn.Dropout", "keep_prob"),
    ("TopK sorted", "torch.topk", "sorted"),
    ("default weight init by version", "torch.nn.Linear", "HeUniform"),
    ("nn.init -> initializer, lazy init", "torch.nn.init.xavier_uniform_", "initializer"),
    ("calculate_gain missing", "torch.nn.init.calculate_gain", "calculate_gain"),
    ("Tensor/Parameter/Buffer/Variable", "torch.nn.Parameter", "Parameter"),
    ("named_children", "torch.nn.Module.named_children", "cells_and_names"),
    ("add_module", "torch.nn.Module.add_module", "insert_child_to_cell"),
    ("device placement .to", "torch.Tensor.to", "device"),
    ("CUDA_VISIBLE_DEVICES / set_device", "torch.cuda.set_device", "set_device"),
    ("synchronize", "torch.cuda.synchronize", "synchronize"),
    (".cpu().numpy()", "torch.Tensor.numpy", "asnumpy"),
    ("tensor creation randn", "torch.randn", "randn"),
    ("training loop backward", "torch.Tensor.backward", "value_and_grad"),
    ("optimizer.step -> optimizer(grads)", "torch.optim.Optimizer.step", "grads"),
    ("zero_grad not needed", "torch.optim.Optimizer.zero_grad", "grad"),
    ("no_grad", "torch.no_grad", "no_grad"),
    ("retain_graph", "torch.autograd.backward", "retain_graph"),
    ("autograd.grad vs mindspore.grad, has_aux", "torch.autograd.grad", "has_aux"),
    ("lr -> learning_rate", "torch.optim.SGD", "learning_rate"),
    ("param groups", "torch.optim.RMSprop", "params"),  # Adam/AdamW/SGD now map to torch-style experimental.optim
    ("unsupported optimizers", "torch.optim.LBFGS", "LBFGS"),
    ("optimizer state save/load", "torch.optim.Optimizer.state_dict", "state"),
    ("LR schedulers", "torch.optim.lr_scheduler.StepLR", "scheduler"),
    ("LambdaLR", "torch.optim.lr_scheduler.LambdaLR", "LambdaLR"),
    ("random seeds", "torch.manual_seed", "set_seed"),
    ("Generator", "torch.Generator", "Generator"),
    ("transpose vs permute", "torch.transpose", "permut"),
    ("distributed init", "torch.distributed.init_process_group", "init"),
    ("DDP", "torch.nn.parallel.DistributedDataParallel", "parallel"),
    ("determinism", "torch.use_deterministic_algorithms", "determinis"),
    ("graph mode / jit", "torch.compile", "GRAPH_MODE"),
    ("checkpoint save", "torch.save", "save_checkpoint"),
    ("weight-name conversion", "torch.nn.Module.load_state_dict", "moving_mean"),
    ("DataLoader -> mindspore.dataset", "torch.utils.data.DataLoader", "GeneratorDataset"),
    ("mixed precision", "torch.autocast", "auto_mixed_precision"),
]


@pytest.mark.parametrize("topic, api, word", SEED_TOPICS, ids=[t[0] for t in SEED_TOPICS])
def test_seed_topic_has_caveat(real_kb, topic, api, word):
    rec = real_kb.mapping(api)
    assert rec is not None, f"{topic}: no entry for {api}"
    text = " ".join(
        [c["title"] + " " + c["body"] for c in rec["caveats"]]
        + [(t.get("note") or "") for t in rec["targets"]] + [rec.get("advice") or ""]
        + [f"{t.get('api')}" for t in rec["targets"]]
    )
    assert rec["caveats"], f"{topic}: {api} has no caveat"
    assert word.lower() in text.lower(), f"{topic}: nothing about {word!r} on {api}"


def test_every_caveat_has_provenance_and_range_shape(real_kb):
    rows = real_kb.conn.execute("SELECT id, provenance FROM caveats").fetchall()
    assert len(rows) >= 60
    import json

    for r in rows:
        provs = json.loads(r["provenance"])
        assert provs and all(p["ref"] for p in provs), r["id"]


def test_seed_001_claims_are_marked_as_checked(real_kb):
    """001 is unverified: a caveat citing it must rest on something else too (a check or an official page)."""
    import json

    rows = real_kb.conn.execute("SELECT id, provenance FROM caveats WHERE provenance LIKE '%001_5f72322255266329%'")
    n = 0
    for r in rows:
        n += 1
        others = [p for p in json.loads(r["provenance"]) if "001_5f72322255266329" not in p["ref"]]
        assert others, f"{r['id']} rests on seed 001 alone"
    assert n >= 5  # 001's claims (TopK, BN, Dropout, tooling, determinism...) were examined
