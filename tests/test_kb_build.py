"""Building the DB: bad data is reported with file, line, entry and field; staleness; corrupt DBs."""
from __future__ import annotations

import os
import time

import pytest

from kb.build import build
from kb.errors import DataError
from tests.conftest import run_msmap

BROKEN = [
    pytest.param(
        "mappings:\n  - torch: torch.nn.ReLU\n    targets:\n      - family: classic\n        api: mindspore.nn.ReLU\n"
        "        relation: same_ish\n",
        ["bad.yaml:6", "torch=torch.nn.ReLU", "mappings.0.targets.0.relation"], id="bad-relation"),
    pytest.param(
        "mappings:\n  - torch: torch.nn.ReLU\n    targets: [{family: classic, api: mindspore.nn.ReLU, relation: consistent}]\n"
        "    caveats: [no-such-caveat]\n",
        ["bad.yaml:2", "torch=torch.nn.ReLU", "unknown caveat id 'no-such-caveat'"], id="dangling-caveat"),
    pytest.param("mappings:\n  - torch: torch.nn.ReLU\n    targets: [\n", ["bad.yaml:", "invalid YAML"], id="yaml-syntax"),
    pytest.param(
        "caveats:\n  - id: Bad Id\n    title: x y z\n    body: long enough body\n    severity: info\n    topic: t\n"
        "    applies_to: [torch.x]\n    provenance: [{kind: seed, ref: s}]\n",
        ["bad.yaml:2", "id=Bad Id", "caveats.0.id", "slug"], id="bad-slug"),
    pytest.param(
        "mappings:\n  - torch: torch.nn.Linear\n    targets: [{family: classic, api: mindspore.nn.Dense, relation: renamed}]\n",
        ["duplicate mapping", "sample.yaml"], id="duplicate-across-files"),
    pytest.param(
        "mappings:\n  - torch: torch.nn.ReLU\n    targets:\n      - family: classic\n        relation: renamed\n"
        "        params: [{torch: p, kind: transformed, transform: '1 -'}]\n        api: mindspore.nn.ReLU\n",
        ["bad.yaml:6", "transform is not a Python expression"], id="bad-transform"),
    pytest.param("- just\n- a list\n", ["bad.yaml:1", "top level must be a mapping"], id="not-a-mapping"),
]


@pytest.mark.parametrize("text, expected", BROKEN)
def test_malformed_curated_file_is_named_precisely(small_data, tmp_path, text, expected):
    (small_data / "curated" / "bad.yaml").write_text(text)
    with pytest.raises(DataError) as info:
        build(small_data, tmp_path / "x.sqlite")
    msg = str(info.value)
    for part in expected:
        assert part in msg, (part, msg)
    assert not (tmp_path / "x.sqlite").exists()  # nothing half-written


def test_malformed_derived_line_names_line(small_data, tmp_path):
    path = small_data / "derived" / "torch.nn.jsonl"
    path.write_text(path.read_text() + '{"torch": "torch.nn.X", "targets": [{"family": "gpu", "relation": "x"}]}\n')
    with pytest.raises(DataError) as info:
        build(small_data, tmp_path / "x.sqlite")
    assert "torch.nn.jsonl:4" in str(info.value) and "torch=torch.nn.X" in str(info.value)


def test_cli_build_error_is_one_clean_message(small_data, tmp_path):
    (small_data / "curated" / "bad.yaml").write_text("mappings: [{torch: numpy.add, targets: []}]\n")
    r = run_msmap("build", "--data", str(small_data), "--db", str(tmp_path / "x.sqlite"))
    assert r.returncode == 3
    assert "Traceback" not in r.stderr
    assert "bad.yaml:1" in r.stderr and "torch must be a dotted torch name" in r.stderr


def test_lookup_rebuilds_when_sources_change(small_data, tmp_path):
    db = tmp_path / "kb.sqlite"
    r = run_msmap("lookup", "nn.Linear", data=small_data, db=db)
    assert r.returncode == 0 and "mindspore.nn.Dense" in r.stdout
    first = db.stat().st_mtime_ns
    r = run_msmap("lookup", "nn.Linear", data=small_data, db=db)
    assert db.stat().st_mtime_ns == first  # fresh: not rebuilt
    sample = small_data / "curated" / "sample.yaml"
    sample.write_text(sample.read_text().replace("mindspore.nn.Dense", "mindspore.nn.Dense2"))
    os.utime(sample, ns=(time.time_ns(), time.time_ns()))
    r = run_msmap("lookup", "nn.Linear", data=small_data, db=db)
    assert "mindspore.nn.Dense2" in r.stdout


def test_corrupt_db_is_rebuilt(small_data, tmp_path):
    db = tmp_path / "kb.sqlite"
    assert run_msmap("build", data=small_data, db=db).returncode == 0
    data = bytearray(db.read_bytes())
    data[4096:] = b"this is not sqlite" * ((len(data) - 4096) // 18) + b"x" * ((len(data) - 4096) % 18)
    db.write_bytes(bytes(data))  # msmap's header kept, every page after the first destroyed
    r = run_msmap("lookup", "torch.nn.Dropout", data=small_data, db=db)
    assert r.returncode == 0, r.stderr
    assert "keep_prob" in r.stdout and "damaged" in r.stderr


def test_a_file_msmap_did_not_build_is_never_replaced(small_data, tmp_path):
    db = tmp_path / "notes.txt"
    db.write_bytes(b"this is not sqlite" * 100)
    r = run_msmap("lookup", "torch.nn.Dropout", data=small_data, db=db)
    assert r.returncode == 2 and "not an msmap knowledge base" in r.stderr
    assert db.read_bytes() == b"this is not sqlite" * 100


def test_missing_data_and_db_is_reported(tmp_path):
    r = run_msmap("lookup", "nn.Linear", data=tmp_path / "nowhere", db=tmp_path / "none.sqlite")
    assert r.returncode == 3 and "Traceback" not in r.stderr
    assert "no knowledge base" in r.stderr


def _no_build(*args, **kwargs):
    raise AssertionError("built the knowledge base although the installed package carries it")


def test_an_installed_package_copies_its_bundled_db_instead_of_building(small_data, tmp_path, monkeypatch):
    """`pip install .` builds the DB into the wheel (setup.py); the first lookup copies it (no 20 s build)."""
    from kb import build as build_module
    from kb import paths
    from kb.query import KB, ensure_db

    bundled = tmp_path / "site-packages" / "kb" / "prebuilt" / "kb.sqlite"
    build(small_data, bundled)
    installed = tmp_path / "share" / "data"  # the data files are copied at install time: new mtimes
    import shutil

    shutil.copytree(small_data, installed)
    monkeypatch.setattr(paths, "bundled_db", lambda: bundled)
    monkeypatch.setattr(build_module, "build", _no_build)
    db = ensure_db(data=installed, db=tmp_path / "cache" / "kb.sqlite")
    assert KB(db).mapping("torch.nn.Linear")["targets"]
    assert ensure_db(data=installed, db=db) == db  # fresh now, by the usual (mtime) fingerprint


def test_a_bundled_db_built_from_other_data_is_not_used(small_data, tmp_path, monkeypatch, capsys):
    from kb import paths
    from kb.query import ensure_db

    bundled = tmp_path / "bundled.sqlite"
    build(small_data, bundled)
    (small_data / "curated" / "extra.yaml").write_text(
        "mappings:\n  - torch: torch.nn.Mish\n    targets: [{family: classic, api: mindspore.nn.Mish, relation: consistent}]\n")
    monkeypatch.setattr(paths, "bundled_db", lambda: bundled)
    db = ensure_db(data=small_data, db=tmp_path / "kb.sqlite", quiet=False)
    from kb.query import KB

    assert KB(db).mapping("torch.nn.Mish")  # built from the data, not copied
    err = capsys.readouterr().err
    assert "building knowledge base" in err
    assert "writing" in err and " s  " in err  # stages with the seconds so far
