"""One decision for every write (kb/safepaths.py): regular files only, never through a symlink, never
the input, owner and mode kept, hard links never split silently, and root treated like the file's
owner for read-only (issue 28).  These run as root where CI does: that is the point."""
from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path

import pytest

from kb.safepaths import why_not_writable, write_file
from tests.reliability.conftest import TORCH_SOURCE, msmap

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="root's own power over permission bits is what is tested")


def torch_file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(TORCH_SOURCE)
    return path


@root_only
def test_in_place_as_root_refuses_a_read_only_file_in_a_read_only_folder(env, tmp_path):
    locked = tmp_path / "locked"
    source = torch_file(locked / "model.py")
    source.chmod(0o444)
    locked.chmod(0o555)
    try:
        done = msmap(env, "convert", str(locked), "--in-place", "--force")
    finally:
        locked.chmod(0o755)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "model.py: left unchanged: read-only" in done.stdout
    assert source.read_text() == TORCH_SOURCE and stat.S_IMODE(source.stat().st_mode) == 0o444


@root_only
def test_in_place_as_root_refuses_a_writable_file_in_a_read_only_folder(env, tmp_path):
    locked = tmp_path / "locked"
    source = torch_file(locked / "model.py")
    locked.chmod(0o555)
    try:
        done = msmap(env, "convert", str(source), "--in-place", "--force")
    finally:
        locked.chmod(0o755)
    assert done.returncode == 1 and "its folder" in done.stdout and "is read-only" in done.stdout
    assert source.read_text() == TORCH_SOURCE


@root_only
def test_in_place_keeps_owner_group_and_mode(env, tmp_path):
    nobody = pwd.getpwnam("nobody")
    source = torch_file(tmp_path / "shared" / "model.py")
    os.chown(source, nobody.pw_uid, nobody.pw_gid)
    source.chmod(0o640)
    done = msmap(env, "convert", str(source), "--in-place", "--force")
    assert done.returncode == 0, done.stdout + done.stderr
    info = source.stat()
    assert source.read_text() != TORCH_SOURCE
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (nobody.pw_uid, nobody.pw_gid, 0o640)


def test_in_place_refuses_to_split_a_hard_link(env, tmp_path):
    source = torch_file(tmp_path / "src" / "model.py")
    twin = tmp_path / "backup.py"
    os.link(source, twin)
    done = msmap(env, "convert", str(source), "--in-place", "--force")
    assert done.returncode == 1 and "model.py: left unchanged: has 2 hard links" in done.stdout
    assert source.read_text() == twin.read_text() == TORCH_SOURCE
    assert os.stat(source).st_ino == os.stat(twin).st_ino


def test_out_never_writes_over_the_input_through_a_hard_link(env, tmp_path):
    source = torch_file(tmp_path / "src" / "model.py")
    copy = tmp_path / "out" / "src" / "model.py"
    copy.parent.mkdir(parents=True)
    os.link(source, copy)  # e.g. a tree copied with cp -al
    done = msmap(env, "convert", str(tmp_path / "src"), "--out", str(tmp_path / "out"))
    assert done.returncode == 1 and "is the input" in done.stdout
    assert source.read_text() == TORCH_SOURCE


def test_the_decision_itself(tmp_path):
    regular = tmp_path / "file.py"
    regular.write_text("x = 1\n")
    os.mkfifo(tmp_path / "fifo")
    os.symlink("file.py", tmp_path / "link.py")
    assert why_not_writable(tmp_path / "new.py") is None
    assert why_not_writable(regular) is None
    assert "is the input" in why_not_writable(regular, inputs=[tmp_path / "link.py"])
    assert "is a FIFO" in why_not_writable(tmp_path / "fifo")
    assert "is a character device" in why_not_writable(Path("/dev/null"))
    assert "is a symlink" in why_not_writable(tmp_path / "link.py")
    assert "is a folder" in why_not_writable(tmp_path)
    assert write_file(tmp_path / "link.py", b"y = 2\n") is not None and regular.read_text() == "x = 1\n"
    assert (tmp_path / "link.py").is_symlink()


def test_a_full_disk_leaves_the_file_and_no_temporary_file(env, tmp_path):
    """RLIMIT_FSIZE stands in for a full disk: the write fails part-way (EFBIG, as ENOSPC would)."""
    source = tmp_path / "model.py"
    source.write_text(TORCH_SOURCE * 200)  # 9 KB: more than the limit below
    done = msmap(env, "convert", str(source), "--in-place", "--force", prefix=["prlimit", "--fsize=4096"])
    assert done.returncode == 1 and "model.py: left unchanged: cannot write: File too large" in done.stdout
    assert source.read_text() == TORCH_SOURCE * 200
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "kb.sqlite" and p.name != "cache") == ["model.py"]


def test_a_file_whose_owner_cannot_be_kept_is_not_rewritten(tmp_path, monkeypatch):
    """As a user who may write another user's file but not give a file away: not rewritten (the
    replacement would belong to the user), and no temporary file left."""
    target = tmp_path / "model.py"
    target.write_text("x = 1\n")
    info = target.stat()
    monkeypatch.setattr(os, "lstat", lambda path, _real=os.lstat: _owned_by_someone_else(_real(path), path, target))

    def refuse(fd, uid, gid):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "fchown", refuse)
    problem = write_file(target, b"y = 2\n")
    assert problem == f"cannot keep its owner ({info.st_uid + 1}:{info.st_gid}): not rewritten"
    assert target.read_text() == "x = 1\n" and sorted(p.name for p in tmp_path.iterdir()) == ["model.py"]


def _owned_by_someone_else(info: os.stat_result, path, target: Path) -> os.stat_result:
    if Path(path) != target:
        return info
    fields = list(info)
    fields[stat.ST_UID] += 1
    return os.stat_result(fields)


def test_a_second_out_run_over_read_only_copies_has_nothing_to_refuse(env, tmp_path, unprivileged):
    """(A copy that must change and is read-only is refused: the decision itself, above.)"""
    source = torch_file(tmp_path / "src" / "model.py")
    (tmp_path / "src" / "notes.txt").write_text("vendored\n")
    for path in (source, tmp_path / "src" / "notes.txt"):
        path.chmod(0o444)  # the copies keep the mode: read-only too
    for _ in range(2):
        done = msmap(env, "convert", str(tmp_path / "src"), "--out", str(tmp_path / "out"), prefix=unprivileged)
        assert done.returncode == 0 and "not written" not in done.stdout, done.stdout
