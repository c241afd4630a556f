"""Conversion cases run next to torch: each converted per family (``msmap convert --device CPU``) and executed in
one batch of isolated subprocesses (kb.probes.calls)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kb.probes.calls import Case, convert_cases, execute

FAMILIES = ("classic", "mint")


def convert_and_run(real_kb: Any, tmp_path_factory: Any, cases_of: Callable[[str], list[Case]]) -> dict[str, Case]:
    """``cases_of(family)`` converted and run: {case id: case} (ids should start with the family)."""
    cases: dict[str, Case] = {}
    for family in FAMILIES:
        batch = cases_of(family)
        convert_cases(batch, tmp_path_factory.mktemp(family), family, real_kb.path, device="CPU")
        cases.update({c.id: c for c in batch})
    execute(list(cases.values()))
    return cases


def assert_converted_and_matching(case: Case, what: str) -> None:
    """The case converted with no use left for a human, and ran with torch's result."""
    assert case.automatic, f"{what} left for a human: {case.why_left()}"
    assert case.result == "pass", f"{what} -> {case.converted!r}: {case.result}: {case.detail}"
