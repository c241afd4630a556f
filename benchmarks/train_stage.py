"""The ``train`` stage of bench_models.py: a case's own training code, run for a few steps on both sides.

A case with a ``train`` entry in its case.json names batches (input specs, one list per batch, as
``inputs``) and one line of code run after the forward check, in the case module's namespace, with
``model`` (the model whose weights came from torch), ``loader`` (a DataLoader stand-in over the
batches: iterable, ``len()``, ``.dataset``) and ``history`` (an ``io.StringIO`` the code may write
its log to). The torch side runs it from the randomised state the forward check used; the
MindSpore side from the same weights. The stage passes when every trained MindSpore parameter
holds the trained torch value (mapped with kb.weights.map_weights) and the numbers the code logged
to ``history`` agree.

"The trained torch value" is only as exact as float32 training is: a weight whose gradient is
rounding noise (a dead ReLU unit) still moves by about the learning rate per Adam step, in a
direction rounding picks. So torch also trains a float64 copy from the same state on the same
batches, and a parameter agrees when it is within rtol 1e-4 / atol 1e-5 of torch's float32 value,
or, where torch's own float32 run is farther than that from its float64 run, within NOISE_FACTOR
times that distance (max over the parameter). A wrong update rule moves parameters by the learning
rate everywhere, far beyond that floor; the logged losses must agree to the printed digits either
way. Where the float64 run fails (code that builds float32 tensors itself), the plain tolerance is
the only one.
"""
from __future__ import annotations

import io
import re

RTOL, ATOL = 1e-4, 1e-5
NOISE_FACTOR = 10  # MindSpore may be this many times farther from torch float32 than torch float64 is
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


def run_float64(ns: dict, model, args: dict) -> dict | None:
    """torch only: the training code run again on a float64 copy of ``model`` (same state, batches cast
    to float64); its trained state as numpy arrays, or None when the code does not run in float64."""
    import copy

    import torch

    twin = copy.deepcopy(model).double()

    def to_tensor(a):
        t = torch.from_numpy(a)
        return t.double() if t.is_floating_point() else t

    try:
        run(dict(ns), twin, args, to_tensor)
    except Exception:  # noqa: BLE001 - the float32 check alone then
        return None
    return {k: v.detach().cpu().numpy() for k, v in twin.state_dict().items()}


def check(net, trained_state: dict, family: str, history: str, torch_history: str,
          trained64: dict | None = None) -> str | None:
    """The first difference between the trained MindSpore model (and its log) and torch's, or None."""
    import numpy as np
    from kb.weights import map_weights

    params = {p.name: p for p in net.get_parameters()}
    shapes = {n: (tuple(p.shape), str(p.dtype)) for n, p in params.items()}
    wm = map_weights(trained_state, shapes, family=family)
    floor = map_weights(trained64, shapes, family=family).values if trained64 else {}
    for name, p in params.items():
        if name not in wm.values:
            return f"{name}: no trained torch value maps to it"
        got, want = p.asnumpy().astype(np.float64), wm.values[name].astype(np.float64)
        if np.allclose(got, want, rtol=RTOL, atol=ATOL):
            continue
        diff = float(np.max(np.abs(got - want)))
        noise = float(np.max(np.abs(want - floor[name].astype(np.float64)))) if name in floor else 0.0
        if diff <= NOISE_FACTOR * noise:
            continue
        return (f"{name} after training: values differ (max abs diff {diff:.3g}; torch float32 vs float64: "
                f"{noise:.3g})")
    got_numbers, want_numbers = NUMBER.findall(history), NUMBER.findall(torch_history)
    if len(got_numbers) != len(want_numbers):
        return f"the training log has {len(got_numbers)} numbers, torch's has {len(want_numbers)}"
    for g, w in zip(got_numbers, want_numbers):
        if not np.isclose(float(g), float(w), rtol=1e-3, atol=ATOL):  # logged with %g: 6 digits
            return f"the training log says {g} where torch's says {w}"
    return None
