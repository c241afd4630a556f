"""Real model files through the conversion harness (benchmarks/bench_models.py), a fast subset.

Each case must get at least as far as it does today: the first failing stage and the stage where
the converted model stops running.  The floors are what the converter reaches now; raise them as
it improves (the full corpus: ``python benchmarks/bench_models.py``).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_models

# (case, family) -> (first failing stage at least, ran to at least), measured 2026-11-26
FLOORS = {
    ("tv_squeezenet", "classic"): ("PASS", "PASS"),
    ("tv_squeezenet", "mint"): ("PASS", "PASS"),
    ("timm_mlp", "classic"): ("PASS", "PASS"),
    ("timm_mlp", "mint"): ("PASS", "PASS"),
    ("warmup_emnist_train", "classic"): ("PASS", "PASS"),  # a training script: the train stage
    ("warmup_emnist_train", "mint"): ("PASS", "PASS"),
}


@pytest.fixture(scope="module")
def rows(real_kb):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MSMAP_DB", str(real_kb.path))
        cases = bench_models.load_cases(sorted({case for case, _ in FLOORS}))
        return {(r["case"], r["family"]): r for r in bench_models.run(cases, ["classic", "mint"], jobs=1)}


@pytest.mark.parametrize("key", sorted(FLOORS), ids=lambda k: f"{k[0]}-{k[1]}")
def test_case_reaches_at_least_todays_stage(rows, key):
    row = rows[key]
    first, ran = FLOORS[key]
    order = bench_models.STAGES
    assert order.index(row["stage"]) >= order.index(first), (row["stage"], row["error"], row["where"])
    assert order.index(row["ran_to"]) >= order.index(ran), row["stop"]


def test_a_case_that_passes_matched_torch_and_left_nothing(rows):
    row = rows[("tv_squeezenet", "classic")]
    assert row["stage"] == "PASS"
    assert row["markers"] == 0 and row["torch_refs"] == 0
    assert row["max_abs_diff"] <= 1e-3
    assert row["randomised"] > 0  # constant-initialised tensors were randomised on the torch side


def test_converted_code_that_imports_torch_stops_at_import(tmp_path):
    """The import stage runs where torch cannot be imported, so torch left behind cannot pass."""
    package = tmp_path / "out" / "corpus_leftover"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "model.py").write_text("import numpy\nimport torch.nn as nn\n")
    args = {"work": str(tmp_path), "out": str(tmp_path / "out"), "package": "corpus_leftover",
            "module": "model", "family": "classic", "build": "model = None"}
    result = bench_models.run_child("ms", args, timeout=120)
    assert result["crash"] is None
    (step,) = result["steps"]
    assert step["stage"] == "import" and not step["ok"]
    assert "torch-free check" in step["error"]
    assert step["where"] == {"file": "model.py", "line": 2, "code": "import torch.nn as nn"}


@pytest.mark.parametrize("source, refs, markers", [
    ("import torch\nx = torch.zeros(2)\n", [(1, "import torch"), (2, "torch.zeros")], 0),
    ("from torch import nn as tnn\ny = tnn.Linear(2, 3)  # msmap: check this\n",
     [(1, "from torch import ..."), (2, "tnn.Linear")], 1),
    ("import mindspore as ms\nx = ms.ops.zeros(2)\ntorch_like = 1\n", [], 0),
])
def test_torch_left_finds_references_and_markers(source, refs, markers):
    found, marks = bench_models.torch_left(source)
    assert found == refs
    assert len(marks) == markers
