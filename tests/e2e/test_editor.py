"""Opening a torch training file: the Problems panel, the squiggles and the hovers a user sees."""
from __future__ import annotations

import ast
import re

import pytest

from tests.e2e.conftest import WORKSPACE_FILES
from tests.e2e.expected import SQUIGGLE_CLASSES, Finding
from tests.e2e.workbench import Problem, wait_equal

TRAIN = (WORKSPACE_FILES / "train.py").read_text()


@pytest.fixture
def train(workbench):
    workbench.open_file("train.py")
    yield workbench
    workbench.close_panel()
    workbench.close_all_editors()


def listed(findings: list[Finding]) -> list[Problem]:
    """The Problems panel's rows for ``findings`` (hints are not listed there)."""
    return sorted(Problem(f.line, f.column, f.severity, f.message) for f in findings if f.severity != "hint")


def counts(findings: list[Finding]) -> tuple[int, int, int]:
    return tuple(sum(f.severity == s for f in findings) for s in ("error", "warning", "information"))


def module_names(text: str) -> set[str]:
    """Names the file binds to modules with ``import`` (``torch``, ``nn``, ``F``)."""
    names = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            names.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def covered(text: str, finding: Finding) -> str:
    assert finding.line == finding.end_line, finding
    return text.splitlines()[finding.line - 1][finding.column - 1:finding.end_column - 1]


def is_api_token(token: str, torch_name: str, modules: set[str]) -> bool:
    """The API's name as written: its last part is the API's, and anything before it starts at a
    module (``nn.Dropout``, ``torch.optim.SGD``), never at a variable holding an object (``model.to``)."""
    parts = token.split(".")
    if parts[-1] != torch_name.rsplit(".", 1)[-1]:
        return False
    return len(parts) == 1 or parts[0] in modules


def test_problems_panel_lists_msmaps_findings(train, expected):
    findings = expected.findings(TRAIN)
    assert {"error", "warning", "information"} & {f.severity for f in findings}, "the file must raise findings"
    wait_equal("the status bar's problem counts", train.problem_counts, counts(findings), train.page)
    rows = wait_equal("the Problems panel's rows", train.problems, listed(findings), train.page)
    dropout = [r for r in rows if r.message.startswith("torch.nn.Dropout")]
    assert [(r.line, r.column, r.severity) for r in dropout] == [(10, 21, "warning")]


def test_each_squiggle_covers_the_api_token(train, expected):
    findings = expected.findings(TRAIN)
    modules = module_names(TRAIN)
    wrong = [(f.torch_name, covered(TRAIN, f)) for f in findings
             if not is_api_token(covered(TRAIN, f), f.torch_name, modules)]
    assert not wrong, f"ranges that are not the API's token: {wrong}"

    # What the window underlines is those ranges. VS Code draws a hint as three dots at its start,
    # whatever its length: for hints only the start is on screen.
    def on_screen() -> set[tuple]:
        return {(s.line, s.start, s.end if s.severity != "hint" else None, s.severity) for s in train.squiggles()}

    wanted = {(f.line, f.column, f.end_column if f.severity != "hint" else None, SQUIGGLE_CLASSES[f.severity])
              for f in findings}
    wait_equal("squiggles at msmap's ranges", on_screen, wanted, train.page)
    # (x.view(...) converts to itself and gets no hint; x.size(0) becomes x.shape[0] and gets one)
    size = next(s for s in train.squiggles() if s.line == 16 and s.severity == "hint")
    assert (size.start, TRAIN.splitlines()[15][size.start - 1:size.start + 3]) == (22, "size")


CAVEAT_LINE = re.compile(r"^(?:⛔|⚠️|ℹ️) (?:error|warning|info) — (.+?)(?: \(mindspore [^)]*\))?: ", re.MULTILINE)


def test_hover_shows_the_mapping_and_only_that_apis_caveats(train, code_server):
    from kb.query import KB

    card = train.hover(10, 25)  # the "o" of nn.Dropout
    assert "torch.nn.Dropout" in card
    assert re.search(r"MindSpore \(classic\): mindspore\.nn\.Dropout\b", card)
    assert "Parameters → mindspore.nn.Dropout" in card
    shown = CAVEAT_LINE.findall(card)
    caveats = {c["title"]: c for c in KB.open(db=code_server.db).mapping("torch.nn.Dropout")["caveats"]}
    assert shown and set(shown) <= set(caveats), (shown, sorted(caveats))
    # Each caveat shown is about Dropout: it names it, in its title or its text.
    unrelated = [t for t in shown if "dropout" not in (t + caveats[t]["body"]).lower()]
    assert not unrelated, f"caveats on the nn.Dropout hover that are not about Dropout: {unrelated}"


def test_a_broken_file_still_gets_hovers(workbench):
    broken = (WORKSPACE_FILES / "broken.py").read_text()
    with pytest.raises(SyntaxError):
        ast.parse(broken)
    workbench.open_file("broken.py")
    try:
        linear = workbench.hover(7, 22)  # nn.Linear(16, 2   <- the call is never closed
        assert "torch.nn.Linear" in linear and "mindspore.nn.Dense" in linear
        relu = workbench.hover(8, 23)
        assert "torch.nn.ReLU" in relu and "mindspore.nn.ReLU" in relu
    finally:
        workbench.close_all_editors()
