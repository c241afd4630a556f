"""msmap convert: diff by default, --out, --in-place (git-guarded), idempotent, parse-safe."""
from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

from kb.cli import main
from kb.commands import convert as convert_command

SOURCE = (
    "import torch\nimport torch.nn as nn\n\nclass Net(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n    def forward(self, x):\n"
    "        return self.fc(x)\n\nwith torch.profiler.profile():\n    y = Net()(torch.zeros(1, 4))\n"
)


@pytest.fixture(scope="module")
def db(real_kb) -> Path:
    return real_kb.path


@pytest.fixture(autouse=True)
def no_git(monkeypatch):
    """The tests never run git: the work-tree check is replaced by a stub (clean)."""
    monkeypatch.setattr(convert_command, "git_dirty", lambda files, roots: {})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "model.py").write_text(SOURCE)
    (root / "pkg" / "broken.py").write_text("import torch\nx = torch.cat([a, b]\n")
    (root / "pkg" / "README.md").write_text("# torch.nn.Linear stays here\n")
    (root / "pkg" / "data.bin").write_bytes(b"\x00\x01torch")
    return root


def convert(capsys, db, *args: str) -> tuple[int, str, str]:
    code = main(["convert", "--db", str(db), *args])
    out, err = capsys.readouterr()
    return code, out, err


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_default_prints_diff_and_writes_nothing(capsys, db, project):
    before = snapshot(project)
    code, out, err = convert(capsys, db, str(project))
    assert snapshot(project) == before
    assert code == 1  # broken.py does not parse
    assert out.startswith("--- a/") and "+class Net(ms.nn.Cell):" in out and "+import mindspore as ms" in out
    assert "broken.py: left unchanged: syntax error" in err
    assert "torch uses found:" in err and "rate:" in err


def test_diff_flag_is_the_default(capsys, db, project):
    assert convert(capsys, db, str(project / "pkg" / "model.py"))[1] == \
        convert(capsys, db, "--diff", str(project / "pkg" / "model.py"))[1]


def test_out_writes_converted_and_copies_the_rest(capsys, db, project, tmp_path):
    out_dir = tmp_path / "out"
    code, out, _ = convert(capsys, db, "--out", str(out_dir), str(project))
    written = out_dir / "proj" / "pkg"
    converted = (written / "model.py").read_text()
    ast.parse(converted)
    assert "class Net(ms.nn.Cell):" in converted and "def construct(self, x):" in converted
    assert "# msmap:" in converted and "(see: msmap lookup torch.profiler.profile)" in converted
    assert (written / "broken.py").read_bytes() == (project / "pkg" / "broken.py").read_bytes()
    assert (written / "README.md").read_bytes() == (project / "pkg" / "README.md").read_bytes()
    assert (written / "data.bin").read_bytes() == b"\x00\x01torch"
    assert (project / "pkg" / "model.py").read_text() == SOURCE
    assert code == 1 and "left for a human:" in out


def test_in_place_twice_equals_once(capsys, db, project):
    path = project / "pkg" / "model.py"
    convert(capsys, db, "--in-place", str(path))
    once = path.read_text()
    assert once != SOURCE
    code, out, _ = convert(capsys, db, "--in-place", str(path))
    assert code == 0 and path.read_text() == once and "0 changed" in out
    ast.parse(once)


def _args(db: Path, *argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    convert_command.add_arguments(parser)
    return parser.parse_args(["--db", str(db), *argv])


def all_changed(files, roots):
    return dict.fromkeys(files, "uncommitted changes")


def test_in_place_refuses_files_with_uncommitted_changes(capsys, db, project):
    path = project / "pkg" / "model.py"
    code = convert_command.run(_args(db, "--in-place", str(path)), dirty=all_changed)
    _, err = capsys.readouterr()
    assert code == 1 and "uncommitted changes" in err and str(path) in err
    assert path.read_text() == SOURCE


def test_force_overrides_the_guard(capsys, db, project):
    path = project / "pkg" / "model.py"
    code = convert_command.run(_args(db, "--in-place", "--force", str(path)), dirty=all_changed)
    capsys.readouterr()
    assert code == 0 and path.read_text() != SOURCE


def test_in_place_leaves_non_python_files_alone(capsys, db, project):
    before = (project / "pkg" / "README.md").read_bytes()
    convert(capsys, db, "--in-place", str(project))
    assert (project / "pkg" / "README.md").read_bytes() == before
    assert (project / "pkg" / "broken.py").read_text() == "import torch\nx = torch.cat([a, b]\n"


def test_bom_is_kept(capsys, db, tmp_path):
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbf" + SOURCE.encode())
    convert(capsys, db, "--in-place", str(path))
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and b"ms.nn.Cell" in data


def test_out_and_in_place_are_exclusive(capsys, db, project):
    with pytest.raises(SystemExit) as exc:
        convert(capsys, db, "--out", "x", "--in-place", str(project))
    assert exc.value.code == 2


def test_exclude_applies_to_copies_too(capsys, db, project, tmp_path):
    out_dir = tmp_path / "out"
    convert(capsys, db, "--out", str(out_dir), "--exclude", "*.md", "--exclude", "broken.py", str(project))
    written = out_dir / "proj" / "pkg"
    assert (written / "model.py").exists() and (written / "data.bin").exists()
    assert not (written / "README.md").exists() and not (written / "broken.py").exists()
