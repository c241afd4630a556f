"""Golden end-to-end tests on the real knowledge base (data/).

Three small complete training scripts live in tests/fixtures/; their converted
text and their scan rows are checked in under tests/fixtures/expected/.  After a
deliberate change (engine or data), regenerate them with

    MSMAP_REGEN=1 python -m pytest tests/analysis/test_golden.py

and review the diff like any other change.
"""
from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest

from kb.analysis import Engine, EngineSettings
from kb.analysis.convert import convert_source
from kb.analysis.leftovers import left_by_convert
from kb.analysis.project import use_row

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
EXPECTED = FIXTURES / "expected"
CASES = [
    pytest.param("mnist_cnn", "classic", id="mnist-cnn"),
    pytest.param("transformer_block", "classic", id="transformer-block"),
    pytest.param("train_loop", "classic", id="train-loop"),
    pytest.param("transformer_block", "mint", id="transformer-block-mint"),
]
REGEN = bool(os.environ.get("MSMAP_REGEN"))


def _check(path: Path, actual: bytes) -> None:
    if REGEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(actual)
    assert path.exists(), f"{path} is missing: run MSMAP_REGEN=1 python -m pytest {__file__}"
    assert actual.decode() == path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def engines(real_kb):
    return {family: Engine(real_kb, EngineSettings(family=family)) for family in ("classic", "mint")}


def _suffix(family: str) -> str:
    return "" if family == "classic" else f".{family}"


@pytest.mark.parametrize("name, family", CASES)
def test_convert_golden(engines, name, family):
    engine = engines[family]
    source = (FIXTURES / f"{name}.py").read_bytes()
    result = convert_source(engine, source)
    ast.parse(result.source)
    assert result.converted > 0
    assert convert_source(engine, result.source).source == result.source
    _check(EXPECTED / f"{name}{_suffix(family)}.converted.py", result.source)


def test_the_goldens_also_show_what_is_left_for_a_human(engines):
    """At least one golden keeps a use for a human, so the marker text is pinned too (mnist-cnn's TensorDataset)."""
    lefts = {f"{name}/{family}": convert_source(engines[family], (FIXTURES / f"{name}.py").read_bytes()).left
             for name, family in (case.values for case in CASES)}
    assert any(lefts.values()), lefts


@pytest.mark.parametrize("name, family", CASES)
def test_scan_golden(engines, name, family):
    source = (FIXTURES / f"{name}.py").read_bytes()
    analysis = engines[family].analyze(source)
    left = left_by_convert(analysis)
    rows = [use_row(u, id(u) in left) for u in analysis.uses if u.counts]
    _check(EXPECTED / f"{name}{_suffix(family)}.scan.json", (json.dumps(rows, indent=1) + "\n").encode())
