"""convert writes only what the user named as output, never through a symlink that leaves it,
keeps the tree as it was, and never half-converts a run because one file cannot be written."""
from __future__ import annotations

import os
import stat
from pathlib import Path

from tests.reliability.conftest import TORCH_SOURCE, msmap, one_line_error

CONVERTED = "import mindspore as ms\n"


def tree(tmp_path: Path) -> Path:
    """src/ with an executable script, a hidden folder, an empty folder and symlinks in and out."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.py").write_text(TORCH_SOURCE)
    src = tmp_path / "src"
    (src / ".config").mkdir(parents=True)
    (src / ".config" / "settings.py").write_text(TORCH_SOURCE)
    (src / ".config" / "token").write_text("hidden\n")
    (src / "empty").mkdir()
    (src / "run.py").write_text("#!/usr/bin/env python\n" + TORCH_SOURCE)
    (src / "run.py").chmod(0o755)
    (src / "data.bin").write_bytes(b"\x00\x01")
    (src / "data.bin").chmod(0o600)
    os.symlink("../outside/victim.py", src / "escape.py")
    os.symlink("../outside", src / "outdir")
    os.symlink("run.py", src / "alias.py")
    return src


def test_in_place_never_writes_through_a_symlink_out_of_the_tree(env, tmp_path):
    src = tree(tmp_path)
    done = msmap(env, "convert", str(src), "--in-place", "--force")
    assert (tmp_path / "outside" / "victim.py").read_text() == TORCH_SOURCE
    assert "escape.py: left unchanged: is a symlink" in done.stdout
    assert (src / "run.py").read_text().startswith("#!/usr/bin/env python\n" + CONVERTED)
    assert (src / "escape.py").is_symlink() and (src / "alias.py").is_symlink()


def test_out_keeps_modes_symlinks_hidden_and_empty_folders(env, tmp_path):
    src = tree(tmp_path)
    done = msmap(env, "convert", str(src), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stdout + done.stderr
    copy = tmp_path / "out" / "src"
    assert stat.S_IMODE((copy / "run.py").stat().st_mode) == 0o755
    assert (copy / "run.py").read_text().startswith("#!/usr/bin/env python\n" + CONVERTED)
    assert stat.S_IMODE((copy / "data.bin").stat().st_mode) == 0o600
    assert os.readlink(copy / "escape.py") == "../outside/victim.py"
    assert os.readlink(copy / "outdir") == "../outside" and os.readlink(copy / "alias.py") == "run.py"
    assert (copy / ".config" / "token").read_text() == "hidden\n"
    assert (copy / ".config" / "settings.py").read_text() == TORCH_SOURCE  # copied as it is
    assert (copy / "empty").is_dir()
    assert (tmp_path / "outside" / "victim.py").read_text() == TORCH_SOURCE
    again = msmap(env, "convert", str(src), "--out", str(tmp_path / "out"))  # a second run: same tree,
    assert again.returncode == 0 and (tmp_path / "outside" / "victim.py").read_text() == TORCH_SOURCE
    assert sorted(p.name for p in copy.iterdir()) == sorted(p.name for p in src.iterdir())  # nothing nested


def test_out_inside_the_input_is_refused(env, tmp_path):
    src = tree(tmp_path)
    before = sorted(p.name for p in src.iterdir())
    one_line_error(msmap(env, "convert", str(src), "--out", str(src / "migrated")), 2, "--out", "overlaps")
    assert sorted(p.name for p in src.iterdir()) == before


def test_out_equal_to_the_inputs_parent_is_refused(env, tmp_path):
    src = tree(tmp_path)
    one_line_error(msmap(env, "convert", str(src), "--out", str(tmp_path)), 2, "--out", "replace the originals")
    assert (src / "run.py").read_text() == "#!/usr/bin/env python\n" + TORCH_SOURCE
    single = msmap(env, "convert", str(src / "run.py"), "--out", str(src))
    one_line_error(single, 2, "--out")
    assert (src / "run.py").read_text() == "#!/usr/bin/env python\n" + TORCH_SOURCE


def test_a_crlf_file_gets_crlf_lines(env, tmp_path):
    source = tmp_path / "win.py"
    source.write_bytes(TORCH_SOURCE.replace("\n", "\r\n").encode())
    assert msmap(env, "convert", str(source), "--in-place", "--force").returncode == 0
    data = source.read_bytes()
    assert data.startswith(CONVERTED.replace("\n", "\r\n").encode())
    assert data.count(b"\n") == data.count(b"\r\n")


def test_a_read_only_file_is_reported_and_the_others_are_converted(env, tmp_path, unprivileged):
    files = [tmp_path / f"m{i:02}.py" for i in range(20)]
    for path in files:
        path.write_text(TORCH_SOURCE)
    files[2].chmod(0o444)
    done = msmap(env, "convert", str(tmp_path), "--in-place", "--force", prefix=unprivileged)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "m02.py: left unchanged: read-only" in done.stdout
    assert files[2].read_text() == TORCH_SOURCE
    assert all(p.read_text().startswith(CONVERTED) for p in files if p != files[2])
    assert stat.S_IMODE(files[2].stat().st_mode) == 0o444


def test_out_where_a_folder_should_be_is_a_fifo(env, tmp_path):
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "model.py").write_text(TORCH_SOURCE)
    (src / "pkg" / "notes.txt").write_text("notes\n")
    (src / "train.py").write_text(TORCH_SOURCE)
    (tmp_path / "out" / "src").mkdir(parents=True)
    os.mkfifo(tmp_path / "out" / "src" / "pkg")
    done = msmap(env, "convert", str(src), "--out", str(tmp_path / "out"))
    assert done.returncode == 1 and "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert "pkg exists and is not a folder" in done.stdout
    assert stat.S_ISFIFO(os.lstat(tmp_path / "out" / "src" / "pkg").st_mode)
    assert (tmp_path / "out" / "src" / "train.py").read_text() != TORCH_SOURCE
