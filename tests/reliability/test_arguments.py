"""One validation for every command's numbers and paths: exit 2 and one line naming the argument."""
from __future__ import annotations

import pytest

from tests.reliability.conftest import msmap, one_line_error

BAD = [
    (["scan", ".", "--jobs", "-3"], "--jobs"),
    (["convert", ".", "--jobs", "-3"], "--jobs"),
    (["convert", ".", "--jobs", "many"], "--jobs"),
    (["scan", ".", "--ms-version", "abc"], "--ms-version"),
    (["convert", ".", "--ms-version", "abc"], "--ms-version"),
    (["lookup", "nn.Linear", "--ms-version", "abc"], "--ms-version"),
    (["search", "dropout", "-n", str(2**70)], "--limit"),
    (["search", "dropout", "-n", "0"], "--limit"),
    (["scan", ".", "--max-file-size", "-1"], "--max-file-size"),
    (["serve", "--port", "70000"], "--port"),
    (["lsp", "--tcp", "localhost:99999"], "--tcp"),
    (["lsp", "--tcp", "no-port"], "--tcp"),
    (["probe", "--jobs", "0"], "--jobs"),
    (["verify", "a.py:Net()", "b.py:Net()", "--input", "1", "--rtol", "-1"], "--rtol"),
    (["verify", "a.py:Net()", "b.py:Net()", "--input", "1", "--atol", "nan"], "--atol"),
    (["verify", "a.py:Net()", "b.py:Net()", "--input", "1", "--timeout", "0"], "--timeout"),
    (["verify", "a.py:Net()", "b.py:Net()", "--input", "1", "--seed", "-2"], "--seed"),
]


@pytest.mark.parametrize("args,named", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_a_bad_number_exits_2_naming_the_argument(env, args, named):
    one_line_error(msmap(env, *args), 2, named)


def test_db_naming_a_directory(env, tmp_path):
    for command in (["lookup", "nn.Linear"], ["stats"], ["scan", "."], ["build"]):
        one_line_error(msmap(env, *command, "--db", str(tmp_path)), 2, "--db", "directory")


def test_out_naming_a_file(env, tmp_path):
    existing = tmp_path / "notes.txt"
    existing.write_text("mine\n")
    source = tmp_path / "a.py"
    source.write_text("import torch\n")
    one_line_error(msmap(env, "convert", str(source), "--out", str(existing)), 2, "--out", "not a directory")
    one_line_error(msmap(env, "docs", "--out", str(existing), "--no-readme"), 2, "--out", "not a directory")
    assert existing.read_text() == "mine\n"


def test_log_file_in_a_missing_folder(env, tmp_path):
    one_line_error(msmap(env, "lsp", "--log-file", str(tmp_path / "missing" / "lsp.log")), 2, "--log-file")


def test_tcp_host_that_does_not_resolve(env):
    done = msmap(env, "lsp", "--tcp", "no-such-host.invalid:2087", timeout=60)
    one_line_error(done, 2, "--tcp", "cannot listen")


def test_an_unwritable_cache_is_reported(env, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {**env, "XDG_CACHE_HOME": str(blocker)}  # the cache folder would be inside a file
    del env["MSMAP_DB"]
    one_line_error(msmap(env, "lookup", "nn.Linear"), 2, "knowledge base", "Not a directory", "MSMAP_DB")
