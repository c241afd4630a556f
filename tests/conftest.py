"""Shared fixtures: a tiny fixed data set (tests/kbdata) and the real bundled data."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KBDATA = ROOT / "tests" / "kbdata"


@pytest.fixture
def small_data(tmp_path: Path) -> Path:
    """A private copy of tests/kbdata that a test may break."""
    dst = tmp_path / "data"
    shutil.copytree(KBDATA, dst)
    return dst


@pytest.fixture
def small_kb(small_data: Path, tmp_path: Path):
    from kb.query import KB

    return KB.open(db=tmp_path / "kb.sqlite", data=small_data)


@pytest.fixture(scope="session")
def real_kb():
    """The knowledge base built from the bundled data/: the one msmap itself uses (the cache), built
    at most once for the whole run and shared by the pytest-xdist workers (a lock orders them; the
    first builds, the others find it fresh) and by the tests that run ``msmap`` without MSMAP_DB."""
    import fcntl

    from kb import paths
    from kb.query import KB, ensure_db

    db = paths.db_path(ROOT / "data") if not os.environ.get("MSMAP_DB") else None
    lock_file = (db or Path(os.environ["MSMAP_DB"])).with_suffix(".tests-lock")
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        built = ensure_db(data=ROOT / "data", db=db)
    return KB(built)


@pytest.fixture(scope="session", autouse=True)
def kept_probe_workers():
    """Converted code run next to torch (kb.probes.calls.execute) goes to one kept torch worker and one kept
    MindSpore worker per test process, shared by every test file (kb.probes.runner.keep_workers): importing
    torch or MindSpore costs seconds of CPU each time, and dozens of files run a batch or two each."""
    from kb.probes import runner

    runner.keep_workers(True)
    yield
    runner.keep_workers(False)


def run_msmap(*args: str, data: Path | None = None, db: Path | None = None, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if data is not None:
        env["MSMAP_DATA"] = str(data)
    if db is not None:
        env["MSMAP_DB"] = str(db)
    env.pop("MSMAP_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "kb", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=kw.pop("timeout", 120), **kw)


def pytest_collection_modifyitems(config, items):
    """With MSMAP_NO_SKIP=1 (set by scripts/test.sh, so CI) no test may skip for a missing tool.

    A few tests skip when mindspore, torch, datasette or nvim is absent, which is right on a
    developer's partial install but would hide a missing install step in CI: there, the skip
    markers are removed and such a test fails instead.
    """
    if os.environ.get("MSMAP_NO_SKIP") != "1":
        return
    for item in items:
        for node in item.listchain():  # the function, its class and its module
            node.own_markers = [m for m in node.own_markers if m.name != "skipif"]
