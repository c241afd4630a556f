"""msmap serve's queries are bounded (issue 28): one GET with zeroblob/randomblob SQL ran 11 s and
took 2.4 GB past Datasette's 1 s limit (a single SQLite step the time limit cannot interrupt).
Arbitrary SQL is off; the settings bound time and rows."""
from __future__ import annotations

import time
import urllib.error
import urllib.parse

import pytest

from tests.docs.test_serve import _get, needs_datasette, serving


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    yield from serving(tmp_path_factory)

@needs_datasette
@pytest.mark.parametrize("path", [
    "/msmap.json?sql=" + urllib.parse.quote("select length(zeroblob(2000000000))"),
    "/msmap.json?sql=" + urllib.parse.quote("select length(randomblob(1000000000))"),
    "/msmap/mappings.json?_where=" + urllib.parse.quote("length(zeroblob(2000000000)) > 0"),
])
def test_serve_refuses_arbitrary_sql_at_once(server, path):
    """Issue 28: one GET with zeroblob/randomblob SQL ran 11 s and took 2.4 GB past the 1 s limit."""
    started = time.monotonic()
    with pytest.raises(urllib.error.HTTPError) as refused:
        _get(server + path)
    assert refused.value.code in (400, 403), refused.value.code
    assert time.monotonic() - started < 3


@needs_datasette
def test_serve_runs_with_bounded_settings(server):
    settings = _get(server + "/-/settings.json")
    assert settings["default_allow_sql"] is False and settings["sql_time_limit_ms"] == 1000
    assert settings["max_returned_rows"] == 1000 and settings["allow_csv_stream"] is False


@pytest.mark.parametrize("name", ["kb?x", "kb#x", "kb%41x"])
def test_serve_prepares_a_db_whose_path_holds_uri_characters(small_kb, tmp_path, name):
    """The served copy and its metadata open the DB by a quoted URI: no stray file named up to the
    '?' or '#', no 'unable to open' error."""
    import shutil

    from kb.docs import datasette

    base = tmp_path / "here"
    (base / name).mkdir(parents=True)
    db = base / name / "kb.sqlite"
    shutil.copy(small_kb.path, db)
    copy = datasette.served_copy(db, base / "serve")
    assert "5 torch APIs" in datasette.metadata(copy)["description"]
    assert "5 torch APIs" in datasette.metadata(db)["description"]
    assert sorted(p.name for p in base.iterdir()) == sorted([name, "serve"])  # nothing stray
