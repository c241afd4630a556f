"""Held-out batch 6's conversion cases (tests/analysis/test_b6_*.py): each converted per family with ``msmap
convert --device CPU`` and run next to torch (tests/analysis/executed.py)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kb.probes.calls import Case
from tests.analysis.executed import assert_converted_and_matching, convert_and_run


def cases_fixture(cases: dict[str, dict[str, Any]]) -> Callable:
    """A module fixture: ``cases`` ({id: Case fields}) converted and run in both families, by ``<family>/<id>``."""

    @pytest.fixture(scope="module")
    def executed(real_kb, tmp_path_factory):
        return convert_and_run(real_kb, tmp_path_factory, lambda family: [
            Case(id=f"{family}/{cid}", **fields) for cid, fields in cases.items()])

    return executed


def assert_runs_as_torch(case: Case, *helpers: str) -> None:
    """Converted with nothing left for a human, torch's values and dtypes, and each named helper written."""
    assert_converted_and_matching(case, case.id)
    for helper in helpers:
        assert f"def {helper}(" in case.converted, f"{case.id}: no {helper}"
