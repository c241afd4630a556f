"""Applying msmap's fixes from the window: Quick Fix (Ctrl+.), "Fix All" and "msmap: Migrate this file"."""
from __future__ import annotations

import ast

import pytest

from tests.e2e.conftest import COPIES, WORKSPACE_FILES
from tests.e2e.workbench import wait_equal

TRAIN = (WORKSPACE_FILES / "train.py").read_text()


@pytest.fixture
def copy_of_train(workbench, code_server, request):
    """The workspace's copy of train.py for this test (see ``COPIES``), open in the editor."""
    path = code_server.workspace / COPIES[request.node.name]
    assert path.read_text() == TRAIN
    workbench.open_file(path.name)
    workbench.page.locator(".squiggly-warning").first.wait_for()  # the server has analysed it
    yield path
    workbench.clear_notifications()
    workbench.close_all_editors()


def saved(workbench, path, wanted: str) -> str:
    """Save the editor and return the file once it holds ``wanted`` (or fail showing it)."""
    workbench.save()
    return wait_equal(f"{path.name} on disk", path.read_text, wanted, workbench.page)


def test_quick_fix_applies_msmaps_fix_and_the_file_parses(workbench, expected, copy_of_train):
    title, after = expected.quick_fix(TRAIN, "torch.nn.Dropout")
    assert "nn.Dropout(p=0.25)" in after  # positional 0.25 would be keep_prob in MindSpore
    titles = workbench.quick_fix_titles(10, 25)
    assert titles[0] == title, titles  # the fix of the API under the cursor comes first
    workbench.quick_fix(10, 25, title)
    ast.parse(saved(workbench, copy_of_train, after))


def test_fix_all_from_the_command_palette(workbench, expected, copy_of_train):
    after = expected.fix_all(TRAIN)
    assert after != TRAIN
    workbench.run_command("Fix All")
    ast.parse(saved(workbench, copy_of_train, after))


def test_migrate_this_file_from_the_command_palette(workbench, expected, copy_of_train):
    after = expected.fix_all(TRAIN)
    workbench.run_command("msmap: Migrate this file")
    workbench.notification(f"msmap: applied {expected.fix_all_count(TRAIN)} edits to {copy_of_train.name}")
    ast.parse(saved(workbench, copy_of_train, after))
