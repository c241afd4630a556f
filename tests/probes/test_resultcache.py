"""Stored results of executed call probes: an unchanged emitted code is not run again, a changed one is."""
from __future__ import annotations

from kb.probes import calls
from kb.probes.calls import Case
from kb.probes.resultcache import ResultCache

ENV = {"format": 1, "mindspore": "2.10.0", "torch": "2.13.0", "numpy": "1.26.4", "python": "3.11", "runners": "a"}
TORCH = "import torch\n\n\ndef run(x: torch.Tensor):\n    return torch.abs(x)\n"


def _case(converted: str = "import mindspore as ms\n\n\ndef run(x: ms.Tensor):\n    return ms.ops.abs(x)\n") -> Case:
    return Case(id="torch.abs/positional", source=TORCH, inputs={"x": {"shape": [2, 3]}}, converted=converted)


def _spy(monkeypatch, outcome: str = "pass") -> list[list[str]]:
    """Replace the subprocess runs by a recorder; each call records the emitted code it was given."""
    seen: list[list[str]] = []

    def run_sides(run, jobs, tick):
        seen.append([c.converted for c in run])
        for c in run:
            c.result, c.detail = outcome, "" if outcome == "pass" else "values: out: values differ"

    monkeypatch.setattr(calls, "_run_sides", run_sides)
    return seen


def test_unchanged_emitted_code_is_not_run_again_and_changed_code_is(tmp_path, monkeypatch):
    seen = _spy(monkeypatch)
    cache = ResultCache(tmp_path, ENV)
    first = [_case()]
    calls.execute(first, cache=cache)
    assert len(seen) == 1 and first[0].result == "pass"
    again = [_case()]
    calls.execute(again, cache=ResultCache(tmp_path, ENV))  # a new run reads the stored file
    assert len(seen) == 1 and again[0].result == "pass"  # not executed, result from the store
    changed = _case("import mindspore as ms\n\n\ndef run(x: ms.Tensor):\n    return ms.ops.absolute(x)\n")
    calls.execute([_case(), changed], cache=ResultCache(tmp_path, ENV))
    assert seen[1] == [changed.converted]  # only the changed rewrite ran


def test_other_library_versions_run_everything_again(tmp_path, monkeypatch):
    seen = _spy(monkeypatch, outcome="wrong")
    calls.execute([_case()], cache=ResultCache(tmp_path, ENV))
    calls.execute([_case()], cache=ResultCache(tmp_path, dict(ENV, mindspore="2.11.0")))
    calls.execute([_case()], cache=ResultCache(tmp_path, dict(ENV, runners="b")))  # comparison code changed
    assert len(seen) == 3
    stored = [_case()]
    calls.execute(stored, cache=ResultCache(tmp_path, ENV))
    assert len(seen) == 3 and (stored[0].result, stored[0].detail) == ("wrong", "values: out: values differ")


def test_only_settled_results_are_stored(tmp_path, monkeypatch):
    seen = _spy(monkeypatch, outcome="timeout")
    calls.execute([_case()], cache=ResultCache(tmp_path, ENV))
    calls.execute([_case()], cache=ResultCache(tmp_path, ENV))
    assert len(seen) == 2  # a timeout is tried again


def test_left_calls_are_neither_run_nor_stored(tmp_path, monkeypatch):
    seen = _spy(monkeypatch)
    left = _case("import mindspore as ms\n\n\ndef run(x):\n    return x.foo()  # msmap: left for a human\n")
    cache = ResultCache(tmp_path, ENV)
    calls.execute([left], cache=cache)
    assert left.result == "left" and seen == [] and cache.misses == 0
