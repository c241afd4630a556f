"""msmap verify ends with everything it started (issue 28): killed outright (SIGKILL) or asked to
stop (SIGTERM), it leaves no framework process running the model and no work folder behind."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kb.verify.lifetime import OWNER, PREFIX, sweep
from tests.conftest import KBDATA, ROOT

psutil = pytest.importorskip("psutil")
pytest.importorskip("torch")

SPINNING_MODEL = """\
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(2, 2)

    def forward(self, x):
        open({marker!r}, "w").close()
        while True:  # a model that never returns
            pass
"""


@pytest.fixture(scope="module")
def weights_kb(tmp_path_factory) -> dict[str, str]:
    """The small test data plus the weight rules verify needs, built once."""
    base = tmp_path_factory.mktemp("kbdata")
    data = base / "data"
    shutil.copytree(KBDATA, data)
    shutil.copy(ROOT / "data" / "curated" / "weights.yaml", data / "curated")
    db = base / "kb.sqlite"
    done = subprocess.run([sys.executable, "-m", "kb", "build", "--db", str(db)], capture_output=True, text=True,
                          env={**os.environ, "MSMAP_DATA": str(data)}, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return {"MSMAP_DATA": str(data), "MSMAP_DB": str(db)}


def start_spinning_verify(tmp_path: Path, kb_env: dict[str, str]) -> tuple[subprocess.Popen, Path]:
    marker = tmp_path / "forward-started"
    model = tmp_path / "net.py"
    model.write_text(SPINNING_MODEL.format(marker=str(marker)))
    env = {**os.environ, **kb_env, "TMPDIR": str(tmp_path)}
    env.pop("MSMAP_DEBUG", None)
    proc = subprocess.Popen([sys.executable, "-m", "kb", "verify", f"{model}:Net()", f"{model}:Net()",
                             "--input", "1,2", "--timeout", "120"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 90
    while not marker.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the torch side never reached forward"
        time.sleep(0.1)
    return proc, marker


def children_of(proc: subprocess.Popen) -> list:
    return psutil.Process(proc.pid).children(recursive=True)


def gone(processes: list, within: float = 10) -> bool:
    _, alive = psutil.wait_procs(processes, timeout=within)
    return not alive


def work_folders(tmp_path: Path) -> list[Path]:
    return sorted(tmp_path.glob(PREFIX + "*"))


def test_sigkill_of_verify_ends_both_framework_processes(tmp_path, weights_kb):
    proc, _ = start_spinning_verify(tmp_path, weights_kb)
    kids = children_of(proc)
    assert len(kids) >= 2 and work_folders(tmp_path)
    proc.kill()
    proc.wait()
    try:
        assert gone(kids), [k.pid for k in kids if k.is_running()]
    finally:
        for k in kids:
            if k.is_running():
                k.kill()
    # the folder a SIGKILL left behind goes with the next run (its owner is gone)
    left = work_folders(tmp_path)
    assert len(left) == 1 and sweep(tmp_path) == left and not work_folders(tmp_path)


def test_sigterm_of_verify_ends_its_processes_and_removes_its_folder(tmp_path, weights_kb):
    proc, _ = start_spinning_verify(tmp_path, weights_kb)
    kids = children_of(proc)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err, err
    assert gone(kids, within=5)
    assert not work_folders(tmp_path)


def test_sweep_keeps_folders_of_live_owners_and_foreign_ones(tmp_path):
    live = tmp_path / (PREFIX + "live")
    live.mkdir()
    (live / OWNER).write_text(str(os.getppid()))
    unmarked = tmp_path / (PREFIX + "unmarked")
    unmarked.mkdir()
    dead = tmp_path / (PREFIX + "dead")
    dead.mkdir()
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (dead / OWNER).write_text(child.stdout.strip())
    assert sweep(tmp_path) == [dead]
    assert live.is_dir() and unmarked.is_dir() and not dead.exists()
