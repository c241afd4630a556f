"""The generated-code cache (lsp.codecache): same code as compile(), reused across processes."""
import builtins
import json
import os
import subprocess
import sys
from pathlib import Path

from lsp.codecache import CachedCompile

ROOT = Path(__file__).resolve().parents[2]
SOURCE = "def f(x: int, y=[1, 2]) -> str:\n    return repr((x, y))\n"


def _same_code(a, b) -> None:
    assert a.co_code == b.co_code and a.co_names == b.co_names and a.co_flags == b.co_flags
    assert [c for c in a.co_consts if not hasattr(c, "co_code")] == [c for c in b.co_consts if not hasattr(c, "co_code")]


def test_a_saved_code_object_is_reused_by_a_new_cache(tmp_path):
    path = tmp_path / "codes.marshal"
    first = CachedCompile(path)
    code = first(SOURCE, "<generated f>", "exec")
    _same_code(code, builtins.compile(SOURCE, "<generated f>", "exec"))
    assert (first.added, first.hits) == (1, 0)
    assert first.save() and path.exists()
    assert not first.save()  # nothing new: nothing written

    second = CachedCompile(path)
    again = second(SOURCE, "<generated f>", "exec")
    assert (second.added, second.hits) == (0, 1)
    _same_code(again, code)
    namespace: dict = {}
    exec(again, namespace)
    assert namespace["f"](3) == "(3, [1, 2])"


def test_the_file_name_and_mode_are_part_of_the_key(tmp_path):
    cache = CachedCompile(tmp_path / "codes.marshal")
    one = cache(SOURCE, "<one>", "exec")
    two = cache(SOURCE, "<two>", "exec")
    assert one.co_filename == "<one>" and two.co_filename == "<two>"
    assert cache(SOURCE, "<one>", "exec") is one
    assert cache("1 + 2", "<one>", "eval") is not one and eval(cache("1 + 2", "<one>", "eval")) == 3


def test_the_callers_future_flags_are_passed_on_as_compile_would(tmp_path):
    cache = CachedCompile(tmp_path / "codes.marshal")
    caller = (
        "from __future__ import annotations\n"
        "def both(compile_):\n"
        "    return compile_(SOURCE, '<f>', 'exec')\n"
    )
    with_future: dict = {"SOURCE": SOURCE}
    exec(builtins.compile(caller, "<caller>", "exec", dont_inherit=True), with_future)
    plain: dict = {"SOURCE": SOURCE}
    exec(builtins.compile(caller.split("\n", 1)[1], "<caller>", "exec", dont_inherit=True), plain)

    for context in (with_future, plain):
        cached, real = context["both"](cache), context["both"](builtins.compile)
        assert cached.co_flags == real.co_flags
        a: dict = {}
        b: dict = {}
        exec(cached, a)
        exec(real, b)
        assert a["f"].__annotations__ == b["f"].__annotations__
    # the two callers' code differ (annotations as strings or not), so they are two entries
    assert with_future["both"](cache).co_flags != plain["both"](cache).co_flags
    assert cache.added == 2


def test_a_damaged_cache_file_is_ignored_and_replaced(tmp_path, caplog):
    path = tmp_path / "codes.marshal"
    path.write_bytes(b"\x00not marshal data")
    cache = CachedCompile(path)
    assert cache.codes == {}
    assert "ignoring the generated-code cache" in caplog.text
    cache(SOURCE, "<f>", "exec")
    assert cache.save()
    assert CachedCompile(path).codes.keys() == cache.codes.keys()


def test_stale_entries_are_dropped_once_they_pile_up(tmp_path, monkeypatch):
    import lsp.codecache as codecache

    monkeypatch.setattr(codecache, "SPARE", 2)
    path = tmp_path / "codes.marshal"
    old = CachedCompile(path)
    for n in range(5):
        old(f"x = {n}", "<old>", "exec")
    old.save()
    cache = CachedCompile(path)
    cache("x = 0", "<old>", "exec")
    cache("y = 1", "<new>", "exec")
    assert cache.save()
    assert len(CachedCompile(path).codes) == 2  # what this process used; the four others are gone


def test_an_unwritable_cache_is_reported_not_raised(tmp_path, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory should be")
    cache = CachedCompile(blocker / "sub" / "codes.marshal")
    cache(SOURCE, "<f>", "exec")
    assert cache.save() is False
    assert "cannot write the generated-code cache" in caplog.text
    assert list(tmp_path.iterdir()) == [blocker]


PROBE = """
import json, sys
from lsp import codecache
cache = codecache.install() if sys.argv[1] == "cached" else None
from lsprotocol import types
from pygls.protocol import default_converter
p = types.Position(line=1, character=2)
d = types.Diagnostic(range=types.Range(start=p, end=types.Position(line=1, character=5)), message="m",
                     severity=types.DiagnosticSeverity.Warning, code="x")
converter = default_converter()
back = converter.structure(converter.unstructure(d), types.Diagnostic)
seen = [repr(p), repr(d), p == types.Position(line=1, character=2), p != types.Position(line=1, character=3),
        back == d, converter.unstructure(d), hash(types.MarkupKind.Markdown) == hash("markdown")]
counts = {"hits": cache.hits, "added": cache.added} if cache else {}
if cache is not None:
    codecache.save()
print(json.dumps(dict(counts, seen=seen)))
"""


def _probe(tmp_path: Path, mode: str = "cached", **env: str) -> dict:
    run = subprocess.run([sys.executable, "-c", PROBE, mode], cwd=ROOT, capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(tmp_path),
                                  PYTHONHASHSEED="0", **env))  # a few generated sources follow set order
    return json.loads(run.stdout)


def test_lsprotocol_classes_built_from_the_cache_behave_the_same(tmp_path):
    plain = _probe(tmp_path, "plain")
    first = _probe(tmp_path)
    assert first["seen"] == plain["seen"] and first["seen"][2:5] == [True, True, True]
    assert first["added"] > 500  # attrs compiled code for each of lsprotocol's classes
    files = list((tmp_path / "msmap").glob("generated-code-*.marshal"))
    assert len(files) == 1
    second = _probe(tmp_path)
    assert second["seen"] == plain["seen"] and second["added"] == 0 and second["hits"] >= first["added"]


def test_the_cache_can_be_turned_off(tmp_path):
    result = _probe(tmp_path, MSMAP_CODE_CACHE="off")
    assert result["seen"][2:5] == [True, True, True] and result["added"] > 500
    assert not (tmp_path / "msmap").exists()
