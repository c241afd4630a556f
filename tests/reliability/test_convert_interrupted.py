"""A ``convert --in-place`` killed with ``kill -9`` (issue 15): it cannot remove the temporary file
it was writing (``.NAME.XXXXXXXX.tmp`` beside the file), so the next run over the same tree removes
it and says so; a temporary file another run is writing right now (locked) is kept."""
from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import ROOT
from tests.reliability.conftest import TORCH_SOURCE, msmap

CONVERTED = "import mindspore as ms\n"
WRITER = """
import sys
from pathlib import Path
from kb.paths import write_atomically
write_atomically(Path(sys.argv[1]), Path(sys.argv[2]))  # streams from a FIFO nobody writes: blocks
"""


def temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*.tmp"))


def killed_while_writing(target: Path, tmp_path: Path) -> None:
    """A real msmap write (``kb.paths.write_atomically``) killed with SIGKILL half-way."""
    fifo = tmp_path / f"never-written-{target.name}"
    os.mkfifo(fifo)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(target), str(fifo)], cwd=ROOT)
    deadline = time.monotonic() + 30
    while not temporaries(target.parent) and time.monotonic() < deadline:
        time.sleep(0.02)
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=30)
    assert temporaries(target.parent), "the writer never started its temporary file"


def test_next_run_removes_what_a_killed_run_left(env, tmp_path):
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "model.py").write_text(TORCH_SOURCE)
    (src / "pkg" / "layers.py").write_text(TORCH_SOURCE)
    killed_while_writing(src / "model.py", tmp_path)
    killed_while_writing(src / "pkg" / "layers.py", tmp_path)
    left = [*(src).glob(".model.py.*.tmp"), *(src / "pkg").glob(".layers.py.*.tmp")]
    assert len(left) == 2 and (src / "model.py").read_text() == TORCH_SOURCE  # the original is intact
    done = msmap(env, "convert", str(src), "--in-place", "--force")
    assert done.returncode == 0, done.stdout + done.stderr
    assert temporaries(src) == []
    for stale in left:
        assert f"{stale}: removed a temporary file left by an interrupted msmap run" in done.stdout
    assert (src / "model.py").read_text().startswith(CONVERTED)
    assert (src / "pkg" / "layers.py").read_text().startswith(CONVERTED)


def test_a_temporary_file_being_written_is_kept(env, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "model.py").write_text(TORCH_SOURCE)
    busy = src / ".model.py.abcd1234.tmp"  # as another msmap run writing model.py has it
    with open(busy, "wb") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        done = msmap(env, "convert", str(src), "--in-place", "--force")
        assert busy.exists() and "removed a temporary file" not in done.stdout
    assert (src / "model.py").read_text().startswith(CONVERTED)


def test_files_that_only_look_alike_are_kept(env, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "model.py").write_text(TORCH_SOURCE)
    mine = [src / "notes.tmp", src / ".model.py.tmp", src / ".model.py.ABCDEFGH.tmp", src / "model.py.abcd1234.tmp"]
    for path in mine:
        path.write_text("user data\n")
    os.symlink("notes.tmp", src / ".model.py.zzzz9999.tmp")
    done = msmap(env, "convert", str(src), "--in-place", "--force")
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(p.read_text() == "user data\n" for p in mine) and (src / ".model.py.zzzz9999.tmp").is_symlink()


def test_out_run_cleans_its_own_folder(env, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "model.py").write_text(TORCH_SOURCE)
    out = tmp_path / "out"
    assert msmap(env, "convert", str(src), "--out", str(out)).returncode == 0
    killed_while_writing(out / "src" / "model.py", tmp_path)
    done = msmap(env, "convert", str(src), "--out", str(out))
    assert done.returncode == 0 and temporaries(out) == []
    assert "removed a temporary file left by an interrupted msmap run" in done.stdout


def test_ctrl_c_during_convert_out_says_so_once_and_leaves_no_temporary_file(env, tmp_path):
    """Ctrl-C reaches the whole process group (the workers too): one line, no traceback, nothing
    half-written in the output (issue 28)."""
    src = tmp_path / "src"
    src.mkdir()
    for i in range(40):
        (src / f"m{i:02}.py").write_text(TORCH_SOURCE * 40)
    out = tmp_path / "out"
    run = subprocess.Popen([sys.executable, "-m", "kb", "convert", str(src), "--out", str(out), "-j", "2"],
                           cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    deadline = time.monotonic() + 60
    while not (out / "src").exists() and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)  # until the first file is being written
    os.killpg(run.pid, signal.SIGINT)
    _, stderr = run.communicate(timeout=60)
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    if run.returncode != 0:  # (a run that ended first is fine too)
        assert run.returncode == 130 and stderr.strip().splitlines()[-1] == "msmap: interrupted", stderr
    assert temporaries(out) == []
    assert all(p.read_text() != "" for p in (out / "src").glob("*.py"))
