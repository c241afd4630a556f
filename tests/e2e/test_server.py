"""The language server's life as the user sees it: a crash, a restart, its log, and "Look up API"."""
from __future__ import annotations

import os
import re
import signal

import pytest

from tests.e2e.conftest import WORKSPACE_FILES
from tests.e2e.test_editor import counts
from tests.e2e.workbench import wait_equal, wait_for

TRAIN = (WORKSPACE_FILES / "train.py").read_text()
# "2026-11-25 09:30:01.123 [error] ..." : one entry of a log output channel
LOG_ENTRY = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \[(\w+)\] ", re.MULTILINE)


@pytest.fixture
def train(workbench, code_server, expected):
    workbench.open_file("train.py")
    wait_equal("msmap's problem counts", workbench.problem_counts, counts(expected.findings(TRAIN)), workbench.page)
    yield workbench
    workbench.clear_notifications()
    workbench.close_panel()
    workbench.close_all_editors()


def one_server(code_server, page, other_than: int = 0) -> int:
    """The pid of the one running msmap server (a new one, if ``other_than`` is given)."""
    pids = wait_for("one msmap server process",
                    lambda: [p for p in code_server.server_pids() if p != other_than], page)
    assert len(pids) == 1, pids
    return pids[0]


def msmap_log(workbench) -> str:
    workbench.run_command("msmap: Show output")
    return wait_for("the msmap output channel", lambda: "Starting" in (text := workbench.output_text()) and text,
                    workbench.page)


def test_a_crash_is_reported_with_its_logs_and_the_server_restarts(train, code_server, expected):
    old = one_server(code_server, train.page)
    os.kill(old, signal.SIGKILL)
    toast = train.notification("msmap: the language server stopped unexpectedly")
    new = one_server(code_server, train.page, other_than=old)
    assert new != old
    toast.get_by_role("button", name="Show logs").click()
    log = wait_for("the crash in the log", lambda: "SIGKILL" in (text := train.output_text()) and text, train.page)
    assert "stopped unexpectedly" in log
    # The new server serves the open file.
    wait_equal("msmap's problem counts after the restart", train.problem_counts, counts(expected.findings(TRAIN)),
               train.page)
    assert "mindspore.nn.Dropout" in train.hover(10, 25)


def test_restart_server_is_not_reported_as_a_crash(train, code_server):
    old = one_server(code_server, train.page)
    train.clear_notifications()
    toasts = train.page.locator(".notifications-toasts .notification-toast")
    toasts.first.wait_for(state="detached")
    train.run_command("msmap: Restart server")
    one_server(code_server, train.page, other_than=old)
    log = wait_for("the restart in the log", lambda: (text := msmap_log(train)).count("The language server is running")
                   >= 2 and text, train.page)
    entries = LOG_ENTRY.split(log)[1:]
    errors = [text.strip() for level, text in zip(entries[::2], entries[1::2]) if level == "error"]
    assert not errors, errors
    assert not toasts.count(), toasts.all_inner_texts()


def test_the_log_has_no_blank_lines_or_cancel_warnings(train):
    train.hover(10, 25)
    train.hover(11, 24)
    log = msmap_log(train)
    lines = log.splitlines()
    assert any("lsp.server" in line for line in lines), log  # the server's own stderr is there
    assert "" not in [line.strip() for line in lines[:-1]], log
    assert "Cancel notification for unknown message id" not in log


def test_look_up_api_ranks_the_exact_name_first(train):
    train.run_command("msmap: Look up API…")
    box = train.page.locator(".quick-input-widget input")
    box.wait_for()
    box.fill("Dropout")
    first = train.page.locator(".quick-input-list .monaco-list-row").first
    wait_equal("the first result", lambda: (first.get_attribute("aria-label") or "").split(",")[0],
               "torch.nn.Dropout", train.page)
    train.page.keyboard.press("Enter")
    card = train.page.locator(".tab.active", has_text="torch.nn.Dropout")
    card.wait_for()
    card.click(button="middle")  # the preview keeps the keyboard: close its tab with the mouse
    card.wait_for(state="detached")
