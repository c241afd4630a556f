"""Conversion cases run next to torch: each converted per family (``msmap convert --device CPU``) and executed in
one batch of isolated subprocesses (kb.probes.calls)."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
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


def one_case_per_family(real_kb: Any, tmp_path_factory: Any, cid: str, **case: Any) -> dict[str, Case]:
    """One case (``Case`` fields) converted and run in each family: {"<family>/<cid>": case}."""
    return convert_and_run(real_kb, tmp_path_factory, lambda family: [Case(id=f"{family}/{cid}", **case)])


def assert_converted_and_matching(case: Case, what: str) -> None:
    """The case converted with no use left for a human, and ran with torch's result."""
    assert case.automatic, f"{what} left for a human: {case.why_left()}"
    assert case.result == "pass", f"{what} -> {case.converted!r}: {case.result}: {case.detail}"


BLOCK_TORCH = "import sys\nfor _name in ('torch', 'torchvision', 'timm'):\n    sys.modules[_name] = None\n"


def run_without_torch(folder: Path, text: str, script: str) -> subprocess.CompletedProcess:
    """``text`` saved as ``converted.py`` in ``folder`` and ``script`` run beside it in a child where importing
    torch (torchvision, timm) fails, as a converted project runs on a machine without them."""
    (folder / "converted.py").write_text(text)
    program = BLOCK_TORCH + f"sys.path.insert(0, {str(folder)!r})\n" + textwrap.dedent(script)
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)


def converted_line(engine: Any, head: str, params: str, call: str) -> str:
    """The line ``return <call>`` becomes when ``head`` and a ``def run(<params>):`` returning it are converted with
    ``engine`` (a marker, when no proof covers the call)."""
    from tests.analysis.roundtrip import converted

    lines = converted(engine, head + f"def run({params}):\n    return {call}\n").splitlines()
    return lines[next(i for i, line in enumerate(lines) if line.startswith("def run(")) + 1]  # (annotations change)


def assert_modes_match(done: subprocess.CompletedProcess, expected: list, rtol: float, atol: float) -> None:
    """The child (``run_without_torch``) printed, as its last line, JSON {"<family>/<mode>": [outputs]} for every
    family in PyNative and GRAPH_MODE, each output equal to torch's (``expected``)."""
    import json

    import numpy as np

    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().split("\n")[-1])
    assert sorted(found) == sorted(f"{f}/{m}" for f in FAMILIES for m in ("pynative", "graph"))
    for run, outputs in found.items():
        for i, (got, want) in enumerate(zip(outputs, expected, strict=True)):
            np.testing.assert_allclose(np.array(got), want, rtol=rtol, atol=atol, err_msg=f"{run} output {i}")
