"""msmap docs writes only into a folder it generated (its .msmap-docs marker), and never deletes a
file it did not create."""
from __future__ import annotations

from tests.reliability.conftest import msmap, one_line_error


def test_a_folder_with_user_files_is_refused(env, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# My project\n")
    (docs / "guide.md").write_text("how to use it\n")
    done = msmap(env, "docs", "--out", str(docs), "--no-readme", timeout=120)
    one_line_error(done, 2, "docs", "--force")
    assert (docs / "index.md").read_text() == "# My project\n" and (docs / "guide.md").exists()


def test_force_writes_the_docs_and_keeps_the_other_files(env, tmp_path):
    docs = tmp_path / "docs"
    (docs / "api").mkdir(parents=True)
    (docs / "guide.md").write_text("how to use it\n")
    (docs / "api" / "notes.md").write_text("my notes\n")
    assert msmap(env, "docs", "--out", str(docs), "--no-readme", "--force", timeout=120).returncode == 0
    assert (docs / ".msmap-docs").is_file() and (docs / "index.md").is_file()
    assert (docs / "guide.md").read_text() == "how to use it\n"
    assert (docs / "api" / "notes.md").read_text() == "my notes\n"
    again = msmap(env, "docs", "--out", str(docs), "--no-readme", timeout=120)  # now marked: no --force
    assert again.returncode == 0, again.stderr
    assert (docs / "api" / "notes.md").read_text() == "my notes\n"


def test_a_new_or_empty_folder_needs_no_force(env, tmp_path):
    (tmp_path / "empty").mkdir()
    for folder in (tmp_path / "new", tmp_path / "empty"):
        assert msmap(env, "docs", "--out", str(folder), "--no-readme", timeout=120).returncode == 0
        assert (folder / ".msmap-docs").is_file()


def test_a_marker_that_is_not_a_regular_file_is_refused_not_read(env, tmp_path):
    import os

    docs = tmp_path / "docs"
    docs.mkdir()
    os.mkfifo(docs / ".msmap-docs")  # reading it would wait for a writer forever
    done = msmap(env, "docs", "--out", str(docs), "--no-readme", timeout=60)
    one_line_error(done, 2, ".msmap-docs", "not a regular file")
    assert sorted(p.name for p in docs.iterdir()) == [".msmap-docs"]


def test_a_symlinked_folder_inside_the_docs_leads_nowhere_else(env, tmp_path):
    import os

    docs, elsewhere = tmp_path / "docs", tmp_path / "elsewhere"
    assert msmap(env, "docs", "--out", str(docs), "--no-readme", timeout=120).returncode == 0
    tables = next(p for p in docs.iterdir() if p.is_dir())
    elsewhere.mkdir()
    (elsewhere / "mine.md").write_text("keep\n")
    for page in tables.iterdir():
        (elsewhere / page.name).write_text("keep\n")
    os.rename(tables, tmp_path / "moved")
    os.symlink(elsewhere, tables)  # the folder now points outside the docs
    done = msmap(env, "docs", "--out", str(docs), "--no-readme", timeout=120)
    assert done.returncode == 1 and "leads out of" in done.stderr and "Traceback" not in done.stderr
    assert all(p.read_text() == "keep\n" for p in elsewhere.iterdir())


def test_a_readme_that_is_not_utf8_is_reported_not_a_crash(env, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_bytes(b"# caf\xe9\n")
    done = msmap(env, "docs", "--out", str(tmp_path / "docs"), "--readme", str(readme), timeout=120)
    one_line_error(done, 1, "README.md", "not UTF-8")
    assert readme.read_bytes() == b"# caf\xe9\n"
