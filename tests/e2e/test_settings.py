"""Changing msmap's settings changes what the window shows, without reloading it."""
from __future__ import annotations

import pytest

from tests.e2e.conftest import WORKSPACE_FILES
from tests.e2e.expected import SQUIGGLE_CLASSES
from tests.e2e.test_editor import counts, is_api_token, listed, module_names
from tests.e2e.workbench import wait_equal

TRAIN = (WORKSPACE_FILES / "train.py").read_text()


@pytest.fixture
def train(workbench, code_server, expected):
    """train.py open with the default settings; the page is marked, to tell a reload apart."""
    workbench.open_file("train.py")
    wait_equal("the default problem counts", workbench.problem_counts, counts(expected.findings(TRAIN)),
               workbench.page)
    workbench.page.evaluate("() => { window.msmapNotReloaded = true; }")
    yield workbench
    workbench.set_user_settings(code_server.settings(), code_server.settings_file)
    wait_equal("the default problem counts again", workbench.problem_counts, counts(expected.findings(TRAIN)),
               workbench.page)
    workbench.close_panel()
    workbench.close_all_editors()


def not_reloaded(workbench) -> bool:
    return workbench.page.evaluate("() => window.msmapNotReloaded === true")


def test_severity_setting_changes_the_squiggles(train, code_server, expected):
    findings = expected.findings(TRAIN, severity={"guess": "information"})
    guesses = [f for f in findings if f.message.startswith("possibly ")]
    assert guesses and {f.severity for f in guesses} == {"information"}
    train.set_user_settings(code_server.settings(**{"msmap.severity.guess": "information"}),
                            code_server.settings_file)
    wait_equal("problem counts with guesses as information", train.problem_counts, counts(findings), train.page)
    # Shown whole now (a hint is three dots), each guessed method call is underlined from the method's
    # name to its end: `to` in `model.to(...)`, not `model.to`.
    modules = module_names(TRAIN)
    shown = wait_equal("squiggles with guesses as information",
                       lambda: {(s.line, s.start, s.end, s.severity) for s in train.squiggles()},
                       {(f.line, f.column, f.end_column, SQUIGGLE_CLASSES[f.severity]) for f in findings}, train.page)
    assert shown
    wrong = [(s.line, s.text) for s in train.squiggles() if s.severity == "info"
             and not any(is_api_token(s.text, f.torch_name, modules) for f in findings
                         if (f.line, f.column) == (s.line, s.start))]
    assert not wrong, f"squiggles that do not cover an API's token: {wrong}"
    assert not_reloaded(train)


def test_family_and_device_settings_change_the_problems(train, code_server, expected):
    default = listed(expected.findings(TRAIN))
    mint_cpu = listed(expected.findings(TRAIN, targetFamily="mint", device="CPU"))
    assert mint_cpu != default
    assert any("mindspore.mint." in p.message for p in mint_cpu)
    train.set_user_settings(code_server.settings(**{"msmap.targetFamily": "mint", "msmap.device": "CPU"}),
                            code_server.settings_file)
    wait_equal("the Problems panel for mint on CPU", train.problems, mint_cpu, train.page)
    train.close_panel()
    card = train.hover(10, 25)
    assert card.index("mindspore.mint.nn.Dropout") < card.index("mindspore.nn.Dropout")  # the chosen family first
    assert not_reloaded(train)
