"""A real editor: Neovim's built-in LSP client drives `msmap lsp` (hover, quick-fix, fix-all, write)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.lsp.conftest import ROOT
from tests.standin_text import without_definition

NVIM = shutil.which("nvim")
SCRIPT = ROOT / "tests" / "lsp" / "neovim_client.lua"
CONFIG = ROOT / "tests" / "lsp" / "neovim_config.lua"  # the snippet docs/lsp.md shows

SOURCE = """\
import torch
import torch.nn as nn

layer = nn.Linear(3, 4, bias=False)
act = torch.nn.functional.relu(layer)
with torch.no_grad():
    pass
head = nn.Linear(4, 2)
"""

# The quick-fix converts the first layer, fix-all the second; then `nn` is unused and goes, and `torch`, still
# used by what is left (relu has no CPU kernel in the fixture, no_grad no equivalent), becomes a stand-in
# (its class and reasons table, cut out here, are written above it).
EXPECTED = """\
import mindspore as ms


torch = MsUnconverted("torch")

layer = ms.nn.Dense(3, 4, has_bias=False)
act = torch.nn.functional.relu(layer)
with torch.no_grad():
    pass
head = ms.nn.Dense(4, 2)
"""


@pytest.mark.skipif(NVIM is None, reason="nvim is not installed")
def test_neovim_hover_quick_fix_and_fix_all(fixed_env, tmp_path):
    source, out = tmp_path / "model.py", tmp_path / "results.json"
    source.write_text(SOURCE)
    env = dict(fixed_env, MSMAP_NVIM_FILE=str(source), MSMAP_NVIM_OUT=str(out), MSMAP_NVIM_PYTHON=sys.executable, MSMAP_NVIM_CONFIG=str(CONFIG),
               MSMAP_NVIM_ROOT=str(ROOT), HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path))
    subprocess.run([NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {SCRIPT}"],
                   env=env, cwd=ROOT, timeout=120, stdin=subprocess.DEVNULL, capture_output=True, check=False)
    results = json.loads(out.read_text())
    assert results.get("error") is None, results
    assert results["steps"] == ["attached", "diagnostics", "hover", "quickfix", "fix_all_count", "written"]
    assert [(d["lnum"], d["col"], d["message"]) for d in results["diagnostics"]] == [
        (3, 8, "torch.nn.Linear → mindspore.nn.Dense"),
        (4, 6, "torch.nn.functional.relu → mindspore.ops.relu: no kernel on the configured device: "
               "mindspore.ops.relu did not run there in a probe"),
        (4, 6, "mindspore.ops.relu has no CPU kernel (probe on mindspore 2.10.0)"),
        (5, 5, "torch.no_grad: no MindSpore equivalent: Remove the context manager"),
        (7, 7, "torch.nn.Linear → mindspore.nn.Dense"),
    ]
    assert results["hover"].startswith("**torch.nn.Linear** · class · torch.nn\n\n"
                                       "**MindSpore (classic):** `mindspore.nn.Dense`")
    assert results["quickfix"] == "Replace nn.Linear with ms.nn.Dense"
    assert results["fix_all_count"] == 1
    assert without_definition(source.read_text()) == EXPECTED


def test_docs_show_the_tested_snippet():
    assert CONFIG.read_text() in (ROOT / "docs" / "lsp.md").read_text()
