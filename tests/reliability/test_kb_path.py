"""The knowledge-base path (--db, MSMAP_DB) is never a device, a FIFO or a symlink msmap replaces: a
size-0 path is "empty" only when it is a regular file (issue 28: MSMAP_DB=/dev/null)."""
from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from tests.reliability.conftest import msmap, one_line_error


def device(path: Path) -> Path:
    """A character device like /dev/null (1, 3), made where a test may break it."""
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    return path


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")
def test_msmap_db_naming_a_device_is_refused(env, tmp_path):
    node = device(tmp_path / "null")
    done = msmap({**env, "MSMAP_DB": str(node)}, "lookup", "nn.Linear")
    one_line_error(done, 2, str(node), "character device", "not a regular file")
    assert stat.S_ISCHR(os.lstat(node).st_mode)


@pytest.mark.parametrize("command", [["lookup", "nn.ReLU"], ["build"], ["build", "--force"]])
def test_db_naming_a_fifo_is_refused(env, tmp_path, command):
    fifo = tmp_path / "kb-fifo"
    os.mkfifo(fifo)
    done = msmap(env, *command, "--db", str(fifo), timeout=30)
    one_line_error(done, 2, str(fifo), "FIFO", "never replaces it")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".kb-")] == []


def test_a_symlink_to_a_device_is_refused_too(env, tmp_path):
    os.symlink("/dev/null", tmp_path / "kb.link")
    done = msmap({**env, "MSMAP_DB": str(tmp_path / "kb.link")}, "stats")
    one_line_error(done, 2, "character device")
    assert os.readlink(tmp_path / "kb.link") == "/dev/null"


def test_an_empty_regular_file_is_still_built_into(env, tmp_path):
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    assert msmap({**env, "MSMAP_DB": str(empty)}, "lookup", "nn.Linear").returncode == 0
    assert empty.stat().st_size > 0


def test_a_read_only_foreign_path_is_not_rebuilt(env, tmp_path):
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    empty.chmod(0o444)
    one_line_error(msmap({**env, "MSMAP_DB": str(empty)}, "stats"), 2, "read-only")
    assert empty.stat().st_size == 0


def test_a_path_with_uri_characters_is_that_path(env, tmp_path):
    """'?', '#' and '%' in the path stay part of the name (the SQLite URI is percent-encoded): no
    'not a usable database', no stray file named after the part before the '?'."""
    folder = tmp_path / "q?x#y%z"
    folder.mkdir()
    db = folder / "kb.sqlite"
    shutil.copy2(env["MSMAP_DB"], db)
    assert msmap({**env, "MSMAP_DB": str(db)}, "lookup", "nn.Linear").returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("q")) == ["q?x#y%z"]
