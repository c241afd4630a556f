"""Opening the knowledge base checks its freshness once per process (issue 27, "one store"): the reads after
the first open of a command never fingerprint the data or build again; a new process (the next command)
checks again, and a DB file that changed under the process is checked again."""
from __future__ import annotations

import os
import time

from kb.query import KB, ensure_db
from tests.conftest import run_msmap


def _touch_sources(data):
    sample = data / "curated" / "sample.yaml"
    sample.write_text(sample.read_text().replace("mindspore.nn.Dense", "mindspore.nn.Dense2"))
    os.utime(sample, ns=(time.time_ns(), time.time_ns()))


def test_one_process_checks_once_and_the_next_command_again(small_data, tmp_path):
    db = ensure_db(data=small_data, db=tmp_path / "kb.sqlite")
    built = db.stat().st_mtime_ns
    _touch_sources(small_data)
    # the same process (one command): fresh as found at its start, neither checked nor built again
    assert ensure_db(data=small_data, db=db) == db
    assert db.stat().st_mtime_ns == built
    assert KB.open(db=db, data=small_data).mapping("torch.nn.Linear")["targets"][0]["api"] == "mindspore.nn.Dense"
    # the next command sees the new sources and rebuilds
    r = run_msmap("lookup", "nn.Linear", data=small_data, db=db)
    assert r.returncode == 0 and "mindspore.nn.Dense2" in r.stdout


def test_a_db_file_changed_under_the_process_is_checked_again(small_data, tmp_path):
    db = ensure_db(data=small_data, db=tmp_path / "kb.sqlite")
    data = bytearray(db.read_bytes())
    data[4096:] = b"x" * (len(data) - 4096)  # msmap's header kept, the pages after the first destroyed
    db.write_bytes(bytes(data))
    assert ensure_db(data=small_data, db=db) == db  # rebuilt, not taken as checked
    assert KB(db).mapping("torch.nn.Linear")["targets"]
