"""What scan and convert read: regular files only, none too large, and a file or folder that
cannot be read is reported while the run goes on (exit 1)."""
from __future__ import annotations

import json
import os

import pytest

from tests.reliability.conftest import TORCH_SOURCE, msmap


def project(folder):
    (folder / "pkg").mkdir(parents=True)
    (folder / "pkg" / "model.py").write_text(TORCH_SOURCE)
    (folder / "train.py").write_text(TORCH_SOURCE)
    return folder


def errors(done) -> dict[str, str]:
    return {os.path.basename(f["path"]): f["error"] for f in json.loads(done.stdout)["files"] if f.get("error")}


@pytest.mark.parametrize("command", ["scan", "convert"])
def test_a_fifo_is_skipped_not_waited_on(env, tmp_path, command):
    project(tmp_path)
    os.mkfifo(tmp_path / "pipe.py")
    os.mkfifo(tmp_path / "notes.txt")
    done = msmap(env, command, str(tmp_path), *(["--format", "json"] if command == "scan" else []), timeout=60)
    assert done.returncode == 1, done.stderr
    assert "pipe.py" in done.stdout + done.stderr and "FIFO" in done.stdout + done.stderr


def test_convert_out_skips_a_fifo_among_other_files(env, tmp_path):
    source = project(tmp_path / "src")
    os.mkfifo(source / "notes.txt")
    done = msmap(env, "convert", str(source), "--out", str(tmp_path / "out"), timeout=60)
    assert "notes.txt: skipped: not a regular file" in done.stdout
    assert (tmp_path / "out" / "src" / "train.py").read_text().startswith("import mindspore as ms\n")
    assert not (tmp_path / "out" / "src" / "notes.txt").exists()


def test_a_device_is_skipped(env):
    done = msmap(env, "scan", "/dev/zero", "--format", "json", timeout=60)
    assert done.returncode == 1
    assert "character device" in errors(done)["zero"]


def test_a_file_over_the_size_limit_is_skipped_and_reported(env, tmp_path):
    project(tmp_path)
    (tmp_path / "big.py").write_text(TORCH_SOURCE + '"""\n' + "x = 1\n" * 300_000 + '"""\n')  # 1.8 MB, one string
    done = msmap(env, "scan", str(tmp_path), "--format", "json", "--max-file-size", "1")
    assert done.returncode == 1
    found = errors(done)
    assert list(found) == ["big.py"] and "larger than the 1 MB limit" in found["big.py"]
    assert msmap(env, "scan", str(tmp_path), "--format", "json").returncode == 0  # default limit: 10 MB


def test_an_unreadable_file_and_folder_are_reported_and_the_run_goes_on(env, tmp_path, unprivileged):
    root = project(tmp_path / "src")
    (root / "secret.py").write_text(TORCH_SOURCE)
    (root / "locked").mkdir()
    (root / "locked" / "inner.py").write_text(TORCH_SOURCE)
    (root / "secret.py").chmod(0)
    (root / "locked").chmod(0)
    try:
        done = msmap(env, "scan", str(root), "--format", "json", prefix=unprivileged)
        assert done.returncode == 1, done.stderr
        found = errors(done)
        assert "permission denied" in found["secret.py"] and "permission denied" in found["locked"]
        uses = [f for f in json.loads(done.stdout)["files"] if f.get("uses")]
        assert sorted(os.path.basename(f["path"]) for f in uses) == ["model.py", "train.py"]
        converted = msmap(env, "convert", str(root), "--out", str(tmp_path / "out"), prefix=unprivileged)
        assert converted.returncode == 1 and "secret.py" in converted.stdout
        assert (tmp_path / "out" / "src" / "train.py").read_text().startswith("import mindspore as ms\n")
    finally:
        (root / "locked").chmod(0o755)
