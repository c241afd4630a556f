"""msmap weights --out: refused up front when msmap may not write it (the input, a name MindSpore would
change, a symlink), and a failed write leaves no temporary file (issue 28)."""
from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from kb.errors import MsmapError
from kb.weights.output import save
from tests.reliability.conftest import msmap, one_line_error

CHECKPOINT = b"PK\x03\x04 not really a checkpoint"


@pytest.fixture
def checkpoint(tmp_path) -> Path:
    path = tmp_path / "model.pth"
    path.write_bytes(CHECKPOINT)
    return path


def test_out_equal_to_the_input_is_refused(env, tmp_path):
    ckpt = tmp_path / "x.ckpt"
    ckpt.write_bytes(CHECKPOINT)
    one_line_error(msmap(env, "weights", str(ckpt), "--out", str(ckpt)), 2, "--out", "is the input")
    alias = tmp_path / "alias.ckpt"
    os.link(ckpt, alias)  # the same file under another name
    one_line_error(msmap(env, "weights", str(ckpt), "--out", str(alias)), 2, "is the input")
    assert ckpt.read_bytes() == CHECKPOINT


def test_out_with_another_suffix_is_refused_before_any_work(env, tmp_path, checkpoint):
    done = msmap(env, "weights", str(checkpoint), "--out", str(tmp_path / "notes.txt"))
    one_line_error(done, 2, "notes.txt", "ends in .ckpt", "notes.ckpt")
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix in (".txt", ".ckpt")) == []


def test_out_through_a_symlink_is_refused(env, tmp_path, checkpoint):
    target = tmp_path / "elsewhere" / "real.ckpt"
    target.parent.mkdir()
    target.write_bytes(b"keep")
    os.symlink(target, tmp_path / "link.ckpt")
    one_line_error(msmap(env, "weights", str(checkpoint), "--out", str(tmp_path / "link.ckpt")), 2, "symlink")
    assert target.read_bytes() == b"keep" and (tmp_path / "link.ckpt").is_symlink()


@pytest.mark.parametrize("existing", [False, True])
def test_a_full_disk_leaves_nothing_behind(tmp_path, existing):
    out = tmp_path / "model.ckpt"
    if existing:
        out.write_bytes(b"old weights")

    def write(path: str) -> None:  # as mindspore.save_checkpoint does: its own NAME.tmp, then the failure
        Path(path).with_suffix(".tmp").write_bytes(b"")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(MsmapError, match="No space left on device"):
        save(out, write)
    assert sorted(p.name for p in tmp_path.iterdir()) == (["model.ckpt"] if existing else [])
    assert not existing or out.read_bytes() == b"old weights"


def test_a_replaced_checkpoint_keeps_its_mode(tmp_path):
    out = tmp_path / "model.ckpt"
    out.write_bytes(b"old")
    out.chmod(0o640)
    save(out, lambda path: Path(path).write_bytes(b"new"))
    assert out.read_bytes() == b"new" and (out.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.ckpt"]
