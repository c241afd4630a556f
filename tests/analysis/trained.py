"""Training cases run next to torch (issue 29's project idioms): each case is a small torch script with a ``Net`` and a
``run(model, batches, log, *args, path)`` (``path``: a file it may save to); torch runs it here, the text converted in
each family runs in one child per module where importing torch fails, from torch's initial weights (given by
position: both sides register parameters in the same order) and the same batches. The logs and the trained
parameters must agree.
"""
from __future__ import annotations

import json
import runpy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from tests.analysis.executed import run_without_torch
from tests.analysis.roundtrip import converted

CHILD = '''
import importlib, json, sys, warnings
import numpy as np
import mindspore as ms
warnings.simplefilter("ignore")
out = {}
for case in json.loads(sys.argv[1] if len(sys.argv) > 1 else %r):
    module = importlib.import_module(case["module"])
    data = np.load(case["data"])
    net = module.Net()
    for i, (_, p) in enumerate(net.parameters_and_names()):
        p.set_data(ms.Tensor(data["p%%d" %% i]))
    batches = [tuple(ms.Tensor(data["b%%d_%%d" %% (i, j)]) for j in range(case["arrays"]))
               for i in range(case["steps"])]
    log = []
    try:
        module.run(net, batches, log, *case["args"])
        out[case["module"]] = {"log": log, "params": [p.asnumpy().tolist() for _, p in net.parameters_and_names()]}
    except Exception as exc:
        out[case["module"]] = {"error": "%%s: %%s" %% (type(exc).__name__, exc)}
print(json.dumps(out))
'''

Cases = dict[str, tuple[str, Callable[[Any], list], list]]  # name -> (source, batches from a generator, run's args)


def train_both_sides(cases: Cases, engines: dict[str, Any], folder: Path) -> dict:
    """Every case converted with each family's engine, run by torch here and by MindSpore in one child: {(case,
    family): (converted text, torch's log and parameters, MindSpore's result)}."""
    runs, torch_side, texts = [], {}, {}
    for name, (source, make, args) in cases.items():
        module = name.replace("-", "_")
        (folder / f"{module}_torch.py").write_text(source)
        reference = runpy.run_path(str(folder / f"{module}_torch.py"))
        torch.manual_seed(0)
        model = reference["Net"]()
        batches = make(np.random.default_rng(len(name)))
        data = {f"p{i}": p.detach().numpy().copy() for i, p in enumerate(model.parameters())}
        data |= {f"b{i}_{j}": a for i, b in enumerate(batches) for j, a in enumerate(b)}
        np.savez(folder / f"{module}.npz", **data)
        log: list = []
        reference["run"](model, [tuple(torch.from_numpy(a) for a in b) for b in batches], log, *args,
                         str(folder / f"{module}.torch-ckpt"))
        torch_side[name] = (log, [p.detach().numpy() for p in model.parameters()])
        for family, engine in engines.items():
            text = converted(engine, source)
            texts[(name, family)] = text
            (folder / f"{module}_{family}.py").write_text(text)
            runs.append({"module": f"{module}_{family}", "data": str(folder / f"{module}.npz"),
                         "arrays": len(batches[0]), "steps": len(batches),
                         "args": args + [str(folder / f"{module}_{family}.ckpt")]})
    done = run_without_torch(folder, "", CHILD % json.dumps(runs))
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    return {(name, family): (texts[(name, family)], torch_side[name], got[f"{name.replace('-', '_')}_{family}"])
            for name in cases for family in engines}


def trains_like_torch(ran: dict, name: str, family: str, rtol: float = 1e-5, atol: float = 1e-6) -> str:
    """The case converted with no note and no torch import, ran, and logged and trained as torch did."""
    text, (log, params), result = ran[(name, family)]
    assert "# msmap:" not in text and "import torch" not in text and "from torch" not in text, text
    assert "error" not in result, result["error"]
    assert result["log"] == pytest.approx(log, rel=1e-5, abs=1e-7)
    for got, want in zip(result["params"], params, strict=True):
        np.testing.assert_allclose(np.array(got, np.float32), want, rtol=rtol, atol=atol)
    return text
