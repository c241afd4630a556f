"""`msmap docs` as CI and the lead use it: write, --check, stale files, the README block."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kb import cli
from kb.docs import cliref, generate

README = f"""# msmap

Prose the lead owns.

## CLI reference

{cliref.START}
old text
{cliref.END}

## After
"""


@pytest.fixture
def env(small_data, tmp_path, monkeypatch):
    monkeypatch.setenv("MSMAP_DATA", str(small_data))
    monkeypatch.setenv("MSMAP_DB", str(tmp_path / "kb.sqlite"))
    readme = tmp_path / "README.md"
    readme.write_text(README)
    return {"out": tmp_path / "docs", "readme": readme}


def docs(env, *extra: str) -> int:
    return cli.main(["docs", "--out", str(env["out"]), "--readme", str(env["readme"]), *extra])


def test_write_then_check_is_clean(env, capsys):
    assert docs(env) == 0
    out = capsys.readouterr().out
    assert "11 files (11 written, 0 removed, 0 unchanged)" in out and "CLI reference updated" in out
    assert docs(env, "--check") == 0
    assert "11 generated files up to date" in capsys.readouterr().out


def test_check_lists_changed_missing_and_stale_files_then_docs_repairs_them(env, capsys):
    assert docs(env) == 0
    out: Path = env["out"]
    (out / "api" / "torch.nn.Linear.md").write_text("edited by hand\n")
    (out / "tables" / "torch.Tensor.md").unlink()
    (out / "api" / "torch.nn.Gone.md").write_text("from an entry that no longer exists\n")
    capsys.readouterr()
    assert docs(env, "--check") == 1
    lines = capsys.readouterr().out.splitlines()
    assert sorted(lines[:3]) == sorted([f"{out.resolve() / 'api/torch.nn.Linear.md'}: differs",
                                        f"{out.resolve() / 'tables/torch.Tensor.md'}: missing",
                                        f"{out.resolve() / 'api/torch.nn.Gone.md'}: stale"])
    assert lines[3] == "3 file(s) out of date; run 'msmap docs' to regenerate"
    assert docs(env) == 0
    assert "(2 written, 1 removed, 9 unchanged)" in capsys.readouterr().out
    assert not (out / "api" / "torch.nn.Gone.md").exists()
    assert docs(env, "--check") == 0


def test_check_reports_json(env, capsys):
    assert docs(env) == 0
    (env["out"] / "index.md").write_text("stale\n")
    capsys.readouterr()
    assert docs(env, "--check", "--json") == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and [p["status"] for p in report["problems"]] == ["differs"]


def test_unchanged_files_are_not_rewritten_and_foreign_files_are_kept(env, capsys):
    assert docs(env) == 0
    out: Path = env["out"]
    (out / "editors.md").write_text("written by another engineer\n")
    (out / "api" / "notes.txt").write_text("not a generated page\n")
    old = 1_000_000_000
    for path in out.rglob("*"):
        os.utime(path, (old, old))
    capsys.readouterr()
    assert docs(env) == 0
    assert "(0 written, 0 removed, 11 unchanged)" in capsys.readouterr().out
    assert all(p.stat().st_mtime == old for p in out.rglob("*") if p.is_file())
    assert (out / "editors.md").read_text() == "written by another engineer\n"
    assert (out / "api" / "notes.txt").exists()


def test_output_is_deterministic(small_data, tmp_path):
    from kb.query import KB

    first = generate(KB.open(db=tmp_path / "a.sqlite", data=small_data))
    second = generate(KB.open(db=tmp_path / "b.sqlite", data=small_data))
    assert first == second


def test_readme_block_is_replaced_and_prose_kept(env):
    assert docs(env) == 0
    text = env["readme"].read_text()
    assert text.startswith("# msmap\n\nProse the lead owns.\n\n## CLI reference\n\n" + cliref.START + "\n")
    assert text.endswith(cliref.END + "\n\n## After\n")
    assert "old text" not in text and "### `msmap docs`" in text


def test_check_notices_a_stale_readme_block(env, capsys):
    assert docs(env) == 0
    env["readme"].write_text(env["readme"].read_text().replace("usage: msmap docs", "usage: msmap doc"))
    capsys.readouterr()
    assert docs(env, "--check") == 1
    assert f"{env['readme'].resolve()}: CLI reference differs" in capsys.readouterr().out


@pytest.mark.parametrize("text", ["# no markers\n", f"{cliref.END}\n{cliref.START}\n",
                                  f"{cliref.START}\n{cliref.START}\n{cliref.END}\n"])
def test_bad_readme_markers_are_reported_not_crashed_on(env, capsys, text):
    env["readme"].write_text(text)
    assert docs(env) == 1
    err = capsys.readouterr().err
    assert "cannot place the CLI reference" in err and cliref.START in err and "--no-readme" in err
    assert (env["out"] / "index.md").exists(), "the docs are still written"
    assert env["readme"].read_text() == text
    assert docs(env, "--check") == 1
    assert docs(env, "--no-readme") == 0


def test_missing_readme_is_reported(env, capsys):
    env["readme"].unlink()
    assert docs(env) == 1
    assert "no such file" in capsys.readouterr().err


@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_every_command_is_in_the_cli_reference_with_help(name):
    module, summary = cli.COMMANDS[name]
    helps = cliref.help_texts()
    assert f"msmap {name}" in helps, f"{module} is missing, so 'msmap {name}' has no help"
    text = helps[f"msmap {name}"]
    assert text.startswith(f"usage: msmap {name}") and summary in text
    assert "-h, --help" in text
    assert f"### `msmap {name}`" in cliref.block()
    assert all(len(line) <= int(cliref.COLUMNS) for line in text.splitlines())
