"""Odd file names and line endings in what convert and scan print (issue 28): the diff is a patch
git applies whatever the names hold, a CR-only file stays CR-only, and SARIF URIs are valid URIs."""
from __future__ import annotations

import json
import shutil
import subprocess
from urllib.parse import unquote_to_bytes, urlsplit

import pytest

from tests.reliability.conftest import TORCH_SOURCE, msmap

NAMES = ["new\nline.py", "tab\tand space.py", 'quote"back\\slash.py', "caf\u00e9.py", "no newline.py"]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_diff_is_a_patch_git_applies(env, tmp_path):
    for name in NAMES:
        (tmp_path / name).write_text(TORCH_SOURCE.rstrip("\n") if name == "no newline.py" else TORCH_SOURCE)
    done = msmap(env, "convert", ".", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert '--- "a/new\\nline.py"' in done.stdout and "\\ No newline at end of file" in done.stdout
    (tmp_path / "patch.diff").write_text(done.stdout)
    applied = subprocess.run(["git", "apply", "-v", "patch.diff"], cwd=tmp_path, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr
    for name in NAMES:
        assert (tmp_path / name).read_text() != TORCH_SOURCE.rstrip("\n"), name  # each file was patched


def test_a_cr_only_file_stays_cr_only(env, tmp_path):
    source = tmp_path / "mac.py"
    text = "import torch\r\rclass Net(torch.nn.Module):\r    def forward(self, x):\r        return torch.relu(x)\r"
    source.write_bytes(text.encode())
    done = msmap(env, "convert", str(source), "--in-place", "--force")
    assert done.returncode == 0, done.stdout + done.stderr
    data = source.read_bytes()
    assert data != text.encode() and b"\n" not in data and b"pass" not in data
    assert data.count(b"\r") >= text.count("\r")
    assert compile(data, "mac.py", "exec")


def test_a_lone_cr_among_lf_lines_gains_no_pass(env, tmp_path):
    source = tmp_path / "mixed.py"
    source.write_bytes(b"import torch\rx = torch.zeros(3)\nlayer = torch.nn.Linear(2, 3)\n")
    done = msmap(env, "convert", str(source), "--in-place", "--force")
    assert done.returncode == 0, done.stdout + done.stderr
    data = source.read_bytes()
    assert b"pass" not in data and b"\r" not in data and compile(data, "mixed.py", "exec")


def test_sarif_uris_are_percent_encoded(env, tmp_path):
    names = ["with space.py", "new\nline.py", "per%cent#hash.py", ":colon.py"]
    for name in names:
        (tmp_path / name).write_text(TORCH_SOURCE)
    (tmp_path / b"bad\xff.py".decode("utf-8", "surrogateescape")).write_text(TORCH_SOURCE)
    done = msmap(env, "scan", ".", "--format", "sarif", cwd=tmp_path)
    uris = {result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for result in json.loads(done.stdout)["runs"][0]["results"]}
    assert uris == {"with%20space.py", "new%0Aline.py", "per%25cent%23hash.py", "%3Acolon.py", "bad%FF.py"}
    for uri in uris:
        assert urlsplit(uri).scheme == "" and unquote_to_bytes(uri)  # a relative reference, not a scheme
