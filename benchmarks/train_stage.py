"""The ``train`` stage of bench_models.py: a case's own training code, run for a few steps on both sides.

A case with a ``train`` entry in its case.json names batches (input specs, one list per batch, as
``inputs``) and one line of code run after the forward check, in the case module's namespace, with
``model`` (the model whose weights came from torch), ``loader`` (a DataLoader stand-in over the
batches: iterable, ``len()``, ``.dataset``) and ``history`` (an ``io.StringIO`` the code may write
its log to). The torch side runs it from the randomised state the forward check used; the
MindSpore side from the same weights. The stage passes when every trained MindSpore parameter
holds the trained torch value (mapped with kb.weights.map_weights; rtol 1e-4, atol 1e-5) and the
numbers the code logged to ``history`` agree.
"""
from __future__ import annotations

import io
import re

RTOL, ATOL = 1e-4, 1e-5
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", re.IGNORECASE)


class Loader:
    """What a training loop takes from a DataLoader: the batches in order, their count, a dataset size."""

    def __init__(self, batches: list) -> None:
        self.batches = batches
        self.dataset = range(sum(len(batch[0]) for batch in batches))

    def __iter__(self):
        return iter(self.batches)

    def __len__(self) -> int:
        return len(self.batches)


def save_batches(case: dict, path, make_inputs) -> None:
    import numpy as np

    arrays = {}
    for i, specs in enumerate(case["train"]["batches"]):
        for j, a in enumerate(make_inputs(specs, seed=100 + i)):
            arrays[f"b{i}_{j}"] = a
    np.savez(path, **arrays)


def _batches(path, to_tensor) -> list:
    import numpy as np

    data = np.load(path)
    count = 1 + max(int(k[1:].split("_")[0]) for k in data.files)
    return [tuple(to_tensor(data[f"b{i}_{j}"]) for j in range(sum(k.startswith(f"b{i}_") for k in data.files)))
            for i in range(count)]


def run(ns: dict, model, args: dict, to_tensor) -> str:
    """Run the case's training code; the history it wrote."""
    history = io.StringIO()
    ns.update(model=model, loader=Loader(_batches(args["batches"], to_tensor)), history=history)
    exec(args["train"], ns)
    return history.getvalue()


def check(net, trained_state: dict, family: str, history: str, torch_history: str) -> str | None:
    """The first difference between the trained MindSpore model (and its log) and torch's, or None."""
    import numpy as np
    from kb.weights import map_weights

    params = {p.name: p for p in net.get_parameters()}
    wm = map_weights(trained_state, {n: (tuple(p.shape), str(p.dtype)) for n, p in params.items()}, family=family)
    for name, p in params.items():
        if name not in wm.values:
            return f"{name}: no trained torch value maps to it"
        got, want = p.asnumpy(), wm.values[name]
        if not np.allclose(got, want, rtol=RTOL, atol=ATOL):
            diff = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
            return f"{name} after training: values differ (max abs diff {diff:.3g})"
    got_numbers, want_numbers = NUMBER.findall(history), NUMBER.findall(torch_history)
    if len(got_numbers) != len(want_numbers):
        return f"the training log has {len(got_numbers)} numbers, torch's has {len(want_numbers)}"
    for g, w in zip(got_numbers, want_numbers):
        if not np.isclose(float(g), float(w), rtol=1e-3, atol=ATOL):  # logged with %g: 6 digits
            return f"the training log says {g} where torch's says {w}"
    return None
