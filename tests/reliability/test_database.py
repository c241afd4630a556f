"""The knowledge-base file: never replace another program's database, never leave temporary files,
and notice a damaged one - rebuild it and say so - instead of answering from it."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.reliability.conftest import TORCH_SOURCE, msmap, one_line_error


def foreign_db(path: Path) -> Path:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER, total REAL)")
        conn.execute("INSERT INTO invoices VALUES (1, 9.5)")
    return path


def invoices(path: Path) -> list:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT * FROM invoices").fetchall()


def test_db_naming_another_programs_database_is_refused(env, tmp_path):
    db = foreign_db(tmp_path / "app.sqlite")
    for command in (["lookup", "nn.Linear"], ["stats"], ["build"]):
        one_line_error(msmap(env, *command, "--db", str(db)), 2, str(db), "not an msmap knowledge base")
    assert invoices(db) == [(1, 9.5)]


def test_msmap_db_naming_another_programs_database_is_refused(env, tmp_path):
    db = foreign_db(tmp_path / "app.sqlite")
    one_line_error(msmap({**env, "MSMAP_DB": str(db)}, "scan", "."), 2, "not an msmap knowledge base")
    assert invoices(db) == [(1, 9.5)]


def test_build_force_replaces_it(env, tmp_path):
    db = foreign_db(tmp_path / "app.sqlite")
    assert msmap(env, "build", "--db", str(db), "--force").returncode == 0
    assert msmap(env, "lookup", "nn.Linear", "--db", str(db)).returncode == 0


def test_a_failed_rename_leaves_no_temporary_file(env, tmp_path):
    target = tmp_path / "kb.sqlite"
    target.unlink()
    target.mkdir()  # the rename over a folder fails after the whole DB was written
    (target / "keep").write_text("")
    env = {**env, "MSMAP_DB": str(target)}
    done = msmap(env, "build")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".kb-")) == []


def test_a_damaged_database_is_rebuilt_and_scan_still_finds_the_uses(env, tmp_path):
    db = Path(env["MSMAP_DB"])
    data = bytearray(db.read_bytes())
    for page in range(2, len(data) // 4096):  # keep the header page, wipe the rest
        data[page * 4096:(page + 1) * 4096] = b"\x13" * 4096
    db.write_bytes(bytes(data))
    source = tmp_path / "model.py"
    source.write_text(TORCH_SOURCE)
    done = msmap(env, "scan", str(source), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert "damaged" in done.stderr and "rebuilding" in done.stderr
    assert '"torch": "torch.nn.Linear"' in done.stdout
    again = msmap(env, "lookup", "nn.Linear")  # rebuilt once; now intact and not checked again
    assert again.returncode == 0 and "damaged" not in again.stderr and "mindspore.nn.Dense" in again.stdout


def test_a_database_broken_after_it_was_checked_gives_no_silent_zero(env, tmp_path):
    """The file changes behind msmap's back (same size): scan must not report 0 uses with exit 0."""
    db = Path(env["MSMAP_DB"])
    assert msmap(env, "stats").returncode == 0  # checked and remembered as intact
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE targets")
    source = tmp_path / "model.py"
    source.write_text(TORCH_SOURCE)
    done = msmap(env, "scan", str(source), "--format", "json")
    assert "Traceback" not in done.stderr
    assert done.returncode == 0 and '"torch": "torch.nn.Linear"' in done.stdout, done.stderr


def test_damaged_and_nothing_to_rebuild_from_is_a_clear_error(env, tmp_path):
    db = Path(env["MSMAP_DB"])
    data = bytearray(db.read_bytes())
    data[8192:] = b"\x13" * (len(data) - 8192)
    db.write_bytes(bytes(data))
    done = msmap({**env, "MSMAP_DATA": str(tmp_path / "nowhere")}, "lookup", "nn.Linear")
    one_line_error(done, 3, "damaged")
