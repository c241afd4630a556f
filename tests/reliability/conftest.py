"""Hostile inputs for every command: each test runs ``msmap`` as a user would (a subprocess) on
the small test data set, and checks the outcome a user sees (exit code, one clear line, files)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import KBDATA, ROOT


@pytest.fixture(scope="session")
def built_db(tmp_path_factory) -> Path:
    """A knowledge base built once from tests/kbdata (copy it before breaking it)."""
    db = tmp_path_factory.mktemp("reliability") / "kb.sqlite"
    done = subprocess.run([sys.executable, "-m", "kb", "build", "--db", str(db)], capture_output=True, text=True,
                          env={**os.environ, "MSMAP_DATA": str(KBDATA)}, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return db


@pytest.fixture
def env(built_db, tmp_path) -> dict:
    """Environment for a run: the small data, a private copy of its DB and a private cache."""
    db = tmp_path / "kb.sqlite"
    shutil.copy2(built_db, db)
    return {**os.environ, "MSMAP_DATA": str(KBDATA), "MSMAP_DB": str(db),
            "XDG_CACHE_HOME": str(tmp_path / "cache"), "MSMAP_NO_COLOR": "1"}


def msmap(env: dict, *args: str, prefix: list[str] = (), cwd: Path | str = ROOT,
          timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``msmap ARGS`` (behind ``prefix``, e.g. ``unprivileged``)."""
    env = {k: v for k, v in env.items() if k != "MSMAP_DEBUG"}
    return subprocess.run([*prefix, sys.executable, "-m", "kb", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=timeout)


def one_line_error(done: subprocess.CompletedProcess, code: int, *words: str) -> str:
    """The run failed with ``code`` and said why on one line, naming ``words``; no traceback."""
    assert done.returncode == code, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("msmap")]
    assert lines, done.stderr
    for word in words:
        assert word in lines[-1], (word, lines[-1])
    return lines[-1]


@pytest.fixture(scope="session")
def unprivileged() -> list[str]:
    """A command prefix that runs msmap without root's power to ignore permission bits (CI runs
    the tests as root): read-only and unreadable files then behave as they do for a user."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.fail("running as root: these tests need setpriv (util-linux) to drop CAP_DAC_OVERRIDE")
    drop = "-dac_override,-dac_read_search"
    return [setpriv, "--bounding-set", drop, "--inh-caps", drop]


TORCH_SOURCE = "import torch\n\nlayer = torch.nn.Linear(2, 3)\n"


@pytest.fixture(scope="module")
def lsp_env(tmp_path_factory) -> dict[str, str]:
    """The language server's environment (tests/lsp/data as its knowledge base), once per module."""
    from tests.reliability.test_lsp_protocol import lsp_env_for

    return lsp_env_for(tmp_path_factory)


@pytest.fixture
def raw(lsp_env, tmp_path):
    """A language server on pipes, initialized, with ``abuse.py`` open (``RawClient``)."""
    from tests.reliability.test_lsp_protocol import RawClient

    client = RawClient(lsp_env, tmp_path / "server.log")
    client.initialize()
    yield client
    client.close()
