"""`msmap serve`: Datasette over the knowledge base, read-only, on the loopback interface."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from kb import cli
from kb.commands import serve
from kb.docs import datasette
from tests.conftest import KBDATA, ROOT

needs_datasette = pytest.mark.skipif(not serve.datasette_available(), reason='needs pip install "msmap[serve]"')
START_TIMEOUT = 60.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str):
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read().decode("utf-8"))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One server for the module (Datasette takes a few seconds to start)."""
    yield from serving(tmp_path_factory)


def serving(tmp_path_factory):
    """``msmap serve`` on the test data: yields its base URL, stops it afterwards."""
    tmp = tmp_path_factory.mktemp("serve")
    shutil.copytree(KBDATA, tmp / "data")
    port = _free_port()
    env = dict(os.environ, MSMAP_DATA=str(tmp / "data"), MSMAP_DB=str(tmp / "kb.sqlite"),
               XDG_CACHE_HOME=str(tmp / "cache"))
    proc = subprocess.Popen([sys.executable, "-m", "kb", "serve", "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_TIMEOUT
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"msmap serve exited with {proc.returncode}:\n{proc.stdout.read()}")
            try:
                _get(base + "/-/versions.json")
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                if time.monotonic() > deadline:
                    pytest.fail(f"msmap serve did not answer within {START_TIMEOUT} s")
                time.sleep(0.1)  # polling a socket, bounded by the deadline above
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)
        proc.stdout.close()


@needs_datasette
def test_serve_answers_lookups_and_full_text_search(server):
    rows = _get(server + "/msmap/mappings.json?torch=torch.nn.Dropout&_shape=array")
    assert [(r["torch"], r["namespace"], r["source"]) for r in rows] == [("torch.nn.Dropout", "torch.nn",
                                                                         "curated+derived")]
    # 'keeping' occurs only in the Dropout caveat's body: the mappings search box covers caveat text
    hits = _get(server + "/msmap/mappings.json?_search=keeping&_shape=array")
    assert [r["torch"] for r in hits] == ["torch.nn.Dropout"]
    hits = _get(server + "/msmap/targets.json?_search=" + urllib.parse.quote("mindspore.nn.Dense") + "&_shape=array")
    assert [(r["torch"], r["api"]) for r in hits] == [("torch.nn.Linear", "mindspore.nn.Dense")]
    hits = _get(server + "/msmap/caveats.json?_search=keep_prob&_shape=array")
    assert [r["id"] for r in hits] == ["dropout-keep-prob"]
    hits = _get(server + "/msmap/search.json?_search=dropout&_shape=array")
    assert {r["ref"] for r in hits} >= {"torch.nn.Dropout", "dropout-keep-prob"}


@needs_datasette
def test_serve_is_read_only_and_described(server):
    dbs = _get(server + "/-/databases.json")
    assert [(d["name"], d["is_mutable"]) for d in dbs] == [("msmap", False)]
    meta = _get(server + "/-/metadata.json")
    assert meta["title"].startswith("msmap")
    tables = meta["databases"]["msmap"]["tables"]
    assert tables["mappings"]["fts_table"] == "mappings_fts"
    assert "relation" in tables["targets"]["columns"]


def test_missing_datasette_is_one_line_and_exit_2(monkeypatch, capsys):
    monkeypatch.setattr(serve, "datasette_available", lambda: False)
    assert cli.main(["serve"]) == 2
    err = capsys.readouterr().err
    assert err == 'msmap serve: Datasette is not installed; install it with: pip install "msmap[serve]"\n'


def test_served_copy_and_metadata(small_kb, tmp_path):
    copy = datasette.served_copy(small_kb.path, tmp_path / "serve")
    assert datasette.served_copy(small_kb.path, tmp_path / "serve").stat().st_mtime_ns == copy.stat().st_mtime_ns
    meta = datasette.metadata(copy)
    assert meta == datasette.metadata(copy)
    tables = meta["databases"]["msmap"]["tables"]
    assert {"mappings", "targets", "caveats", "mapping_caveats", "apis", "meta", "search"} <= set(tables)
    assert "checks" not in tables  # described only when present
    assert "5 torch APIs" in meta["description"] and "MindSpore 2.10.0" in meta["description"]
    # without the extra indexes (serving the DB itself), no search box is promised
    plain = datasette.metadata(small_kb.path)["databases"]["msmap"]["tables"]
    assert "fts_table" not in plain["mappings"]

