"""Converted models run with torch's state in a child without torch: the converted text of each family saved as
``converted_<family>.py``, torch's state_dict and inputs saved beside it, and a script run there whose prologue
reads them (``state``, ``rules``, ``data``) and whose last line prints JSON (``results``)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from tests.analysis.executed import run_without_torch

PROLOGUE = """
import json

import mindspore as ms
import numpy as np

from kb.weights import map_weights
from kb.weights.convert import fill_buffers, ms_buffers_of, ms_params_of

data = np.load({data!r})
state = {{k[2:]: data[k] for k in data.files if k.startswith("s:")}}
rules = json.load(open({rules!r}))
results = {{}}
"""


def run_with_torch_state(texts: dict[str, str], state: dict[str, np.ndarray], arrays: dict[str, np.ndarray],
                         body: str, folder: Path, real_kb: Any) -> dict:
    """``body`` (after ``PROLOGUE``, ``{families}`` filled) run beside the converted ``texts``; its JSON."""
    for family, text in texts.items():
        (folder / f"converted_{family}.py").write_text(text)
    np.savez(folder / "data.npz", **arrays, **{"s:" + k: v for k, v in state.items()})
    (folder / "rules.json").write_text(json.dumps(real_kb.weight_rules()))
    script = (PROLOGUE + body + "\nprint(json.dumps(results))\n").format(
        data=str(folder / "data.npz"), rules=str(folder / "rules.json"), families=tuple(texts))
    done = run_without_torch(folder, next(iter(texts.values())), script)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().split("\n")[-1])
