"""--in-place asks git once per repository whether the files are committed, and fails closed: when git
cannot answer, the file counts as changed (issue 28)."""
from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.reliability.conftest import TORCH_SOURCE, msmap

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="needs git")


def git_env(env: dict, tmp_path: Path) -> dict:
    """No user or system git configuration (a global safe.directory=* would hide the failure)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {**env, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": str(home / "none")}


def repository(folder: Path, env: dict, names: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(TORCH_SOURCE)
    for command in (["init", "-q"], ["add", "-A"], ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x"]):
        subprocess.run([GIT, *command], cwd=folder, env=env, check=True, capture_output=True)
    return folder


def test_a_file_named_like_pathspec_magic_is_that_file(env, tmp_path):
    env = git_env(env, tmp_path)
    repo = repository(tmp_path / "repo", env, [":colon.py", "*.py", "clean.py"])
    (repo / ":colon.py").write_text(TORCH_SOURCE + "edited = True\n")
    done = msmap(env, "convert", ":colon.py", "*.py", "--in-place", cwd=repo)
    assert done.returncode == 1 and ":colon.py: uncommitted changes" in done.stderr, done.stderr
    assert "*.py: uncommitted" not in done.stderr
    assert (repo / ":colon.py").read_text() == TORCH_SOURCE + "edited = True\n"
    assert (repo / "*.py").read_text() == TORCH_SOURCE  # nothing is written when one file is refused


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the repository to another user")
def test_when_git_cannot_answer_the_file_counts_as_changed(env, tmp_path):
    env = git_env(env, tmp_path)
    repo = repository(tmp_path / "repo", env, ["model.py"])
    (repo / "model.py").write_text(TORCH_SOURCE + "edited = True\n")
    nobody = pwd.getpwnam("nobody")
    for folder, _, files in os.walk(repo):
        os.chown(folder, nobody.pw_uid, nobody.pw_gid)
        for name in files:
            os.chown(os.path.join(folder, name), nobody.pw_uid, nobody.pw_gid)
    done = msmap(env, "convert", str(repo / "model.py"), "--in-place")
    assert done.returncode == 1 and "model.py: git status failed" in done.stderr, done.stderr
    assert "dubious ownership" in done.stderr
    assert (repo / "model.py").read_text() == TORCH_SOURCE + "edited = True\n"


def test_without_git_a_work_tree_is_not_trusted(env, tmp_path):
    env = git_env(env, tmp_path)
    repo = repository(tmp_path / "repo", env, ["model.py"])
    (tmp_path / "empty").mkdir()
    done = msmap({**env, "PATH": str(tmp_path / "empty")}, "convert", str(repo / "model.py"), "--in-place")
    assert done.returncode == 1 and "git is not installed" in done.stderr
    assert (repo / "model.py").read_text() == TORCH_SOURCE


def test_one_git_status_per_repository(env, tmp_path):
    env = git_env(env, tmp_path)
    first = repository(tmp_path / "one", env, [f"pkg{d}/m{f}.py" for d in range(3) for f in range(10)])
    second = repository(tmp_path / "two", env, ["a.py", "b.py"])
    (second / "b.py").write_text(TORCH_SOURCE + "edited = True\n")
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "calls"}\nexec {GIT} "$@"\n')
    wrapper.chmod(0o755)
    env = {**env, "PATH": f"{wrapper.parent}{os.pathsep}{env['PATH']}"}
    done = msmap(env, "convert", str(first), str(second), "--in-place")
    assert done.returncode == 1 and "b.py: uncommitted changes" in done.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    assert len(calls) == 2 and all(" status " in call for call in calls), calls
    assert msmap(env, "convert", str(first), "--in-place").returncode == 0  # all committed: converted
    assert (first / "pkg0" / "m0.py").read_text() != TORCH_SOURCE


def test_git_variables_of_the_shell_do_not_point_git_elsewhere(env, tmp_path):
    env = git_env(env, tmp_path)
    dirty = repository(tmp_path / "dirty", env, ["model.py"])
    (dirty / "model.py").write_text(TORCH_SOURCE + "edited = True\n")
    clean = repository(tmp_path / "clean", env, ["other.py"])
    elsewhere = {**env, "GIT_DIR": str(clean / ".git"), "GIT_WORK_TREE": str(clean)}
    done = msmap(elsewhere, "convert", str(dirty / "model.py"), "--in-place")
    assert done.returncode == 1 and "model.py: uncommitted changes" in done.stderr, done.stderr


def test_a_folder_linked_into_a_work_tree_is_in_it(env, tmp_path):
    env = git_env(env, tmp_path)
    repo = repository(tmp_path / "repo", env, ["pkg/model.py"])
    (repo / "pkg" / "model.py").write_text(TORCH_SOURCE + "edited = True\n")
    os.symlink(repo / "pkg", tmp_path / "link")
    done = msmap(env, "convert", str(tmp_path / "link"), "--in-place")
    assert done.returncode == 1 and "model.py: uncommitted changes" in done.stderr, done.stderr
    assert (repo / "pkg" / "model.py").read_text() == TORCH_SOURCE + "edited = True\n"


def test_a_git_error_for_many_files_is_said_once():
    from kb.worktree import CHANGED, report_lines

    refused = {Path("a.py"): CHANGED, Path("b.py"): "git status failed: fatal: x",
               Path("c.py"): "git status failed: fatal: x"}
    assert report_lines(refused) == ["  a.py: uncommitted changes\n", "  2 files: git status failed: fatal: x\n",
                                     "    b.py\n", "    c.py\n"]
