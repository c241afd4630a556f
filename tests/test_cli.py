"""The CLI as a user runs it: exit codes, messages, JSON, a lean read path."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT, run_msmap


@pytest.fixture
def env(small_data, tmp_path):
    return {"data": small_data, "db": tmp_path / "kb.sqlite"}


def test_lookup_shows_everything_a_migrator_needs(env):
    r = run_msmap("lookup", "torch.nn.Dropout", **env)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for part in ["CLASSIC", "MINT", "mindspore.nn.Dropout", "mindspore.mint.nn.Dropout", "param_semantics_differ",
                 "keep_prob = 1 - p", "mindspore <2.0", "mindspore >=2.0", "[error]", "torch signature: Dropout(p=0.5",
                 "signature: Dropout(keep_prob=None", "seed: 002_d557bd4dcdcf3445.txt"]:
        assert part in out, part


def test_lookup_json_is_the_query_record(env):
    r = run_msmap("lookup", "nn.Linear", "--json", **env)
    rec = json.loads(r.stdout)
    assert rec["torch"] == "torch.nn.Linear"
    assert {t["family"] for t in rec["targets"]} == {"classic", "mint"}
    assert set(rec) >= {"kind", "namespace", "source", "torch_signature", "advice", "targets", "caveats"}


def test_lookup_family_filter(env):
    rec = json.loads(run_msmap("lookup", "nn.Linear", "--json", "--family", "mint", **env).stdout)
    assert [t["family"] for t in rec["targets"]] == ["mint"]


def test_reverse_lookup_cli(env):
    r = run_msmap("lookup", "mindspore.nn.Dense", **env)
    assert r.returncode == 0 and "torch.nn.Linear" in r.stdout and "reverse lookup" in r.stdout


def test_unknown_api_exits_1_with_suggestions(env):
    r = run_msmap("lookup", "nn.Dropuot", **env)
    assert r.returncode == 1
    assert "unknown API 'nn.Dropuot'" in r.stderr and "did you mean: torch.nn.Dropout" in r.stderr
    assert "Traceback" not in r.stderr
    j = json.loads(run_msmap("lookup", "nn.Dropuot", "--json", **env).stdout)
    assert j["error"] == "not_found" and "torch.nn.Dropout" in j["suggestions"]


def test_prefix_lists_namespace(env):
    r = run_msmap("lookup", "torch.nn", **env)
    assert r.returncode == 0 and "torch.nn: 4 entries" in r.stdout


@pytest.mark.parametrize("args", [["lookup"], ["lookup", "x", "--family", "gpu"], ["--nope"], ["frobnicate"],
                                  ["search", "x", "--limit", "many"]])
def test_bad_usage_exits_2_with_message(env, args):
    r = run_msmap(*args, **env)
    assert r.returncode == 2, (args, r.returncode, r.stderr)
    assert "error:" in r.stderr and "Traceback" not in r.stderr


def test_search_cli(env):
    r = run_msmap("search", "dropuot", **env)
    assert r.returncode == 0 and "torch.nn.Dropout" in r.stdout and "dropuot → dropout" in r.stdout
    j = json.loads(run_msmap("search", "dense", "--json", **env).stdout)
    assert j["results"][0]["ref"] == "torch.nn.Linear"
    assert run_msmap("search", "qqqzzz", **env).returncode == 1


def test_stats_cli(env):
    r = run_msmap("stats", **env)
    assert r.returncode == 0 and "torch.nn" in r.stdout and "total" in r.stdout
    assert json.loads(run_msmap("stats", "--json", **env).stdout)["total"]["entries"] == 5


def test_lookup_read_path_is_lean(env):
    """A lookup on a fresh DB imports none of the build-time or framework libraries."""
    run_msmap("build", "--data", str(env["data"]), "--db", str(env["db"]))
    code = (
        "import sys, io, contextlib\n"
        "from kb.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    rc = main(['lookup', 'nn.Linear'])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'pydantic', 'sqlite_utils', 'yaml', 'torch', 'mindspore', 'numpy', 'click'})\n"
        "print(rc, heavy)\n"
    )
    import os

    e = dict(os.environ, MSMAP_DATA=str(env["data"]), MSMAP_DB=str(env["db"]))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, cwd=ROOT, timeout=60)
    assert r.stdout.strip() == "0 []", r.stdout + r.stderr


def test_every_command_has_help():
    from kb.cli import COMMANDS

    for name in COMMANDS:
        r = run_msmap(name, "--help")
        if "invalid choice" in r.stderr:
            pytest.fail(f"command {name} is listed but its module is missing")
        assert r.returncode == 0 and "usage: msmap " + name in r.stdout, name


def test_version_prints_the_installed_version():
    from importlib import metadata

    r = run_msmap("--version")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"msmap {metadata.version('msmap')}"
    assert "--version" in run_msmap("--help").stdout


def test_one_default_device_everywhere():
    """CPU in every command that takes --device, stated in its help, and in the language server."""
    import argparse

    from kb.cli import make_parser
    from lsp.settings import ServerSettings

    parser = make_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    with_device = [name for name, sub in commands.items() if any("--device" in a.option_strings for a in sub._actions)]
    assert {"lookup", "scan", "convert"} <= set(with_device)
    for name in with_device:
        action = next(a for a in commands[name]._actions if "--device" in a.option_strings)
        assert action.default == "CPU" and "default: CPU" in (action.help or ""), name
    assert ServerSettings().device == "CPU"
