"""The probe runner: crashes and hangs are reported, never fatal; holds and differs are told apart."""
from __future__ import annotations

import importlib.util

import pytest

from kb.probes.outputs import compare
from kb.probes.runner import run_probes

needs_mindspore = pytest.mark.skipif(importlib.util.find_spec("mindspore") is None, reason="mindspore not installed")


def probe(pid: str, torch_code: str, ms_code: str, **kw) -> dict:
    return {"id": pid, "torch": "torch.x", "ms_api": "mindspore.x", "family": "classic", "kind": "caveat",
            "torch_code": torch_code, "ms_code": ms_code, **kw}


@needs_mindspore
def test_crash_and_hang_are_reported_and_the_rest_of_the_batch_survives():
    probes = [
        probe("p/holds", "out = [1.0, 2.0]", "out = [1.0, 2.0]"),
        probe("p/crash", "import os\nos._exit(7)", "out = 1"),
        probe("p/hang", "import time\ntime.sleep(120)", "out = 1", timeout=2),
        probe("p/differs", "out = np.arange(3.0)", "out = np.arange(3.0) + 1"),
        probe("p/no-kernel", "out = 1", "raise RuntimeError('The kernel FooExt unregistered.')"),
        probe("p/after-kernel", "out = 3", "out = 3"),
    ]
    results = {r["probe"]: r for r in run_probes(probes, jobs=2, batch_size=6, startup=25)}
    assert set(results) == {p["id"] for p in probes}
    assert results["p/holds"]["result"] == "holds"
    assert results["p/crash"]["result"] == "error"
    assert "exit code 7" in results["p/crash"]["detail"]
    assert results["p/hang"]["result"] == "timeout"
    assert results["p/differs"]["result"] == "differs"
    assert results["p/differs"]["max_abs_diff"] == pytest.approx(1.0)
    assert results["p/no-kernel"]["result"] == "no_cpu_kernel"
    assert "FooExt" in results["p/no-kernel"]["detail"]
    assert results["p/after-kernel"]["result"] == "holds"


@needs_mindspore
def test_expect_differ_and_check_expressions():
    probes = [
        probe("q/expect-differ", "out = 'accepted'", "out = 'TypeError'", expect="differ"),
        probe("q/check", "out = 0.8", "out = 0.2", check="abs(t - 0.8) < 0.02 and abs(m - 0.2) < 0.02"),
        probe("q/check-fails", "out = 0.8", "out = 0.8", check="abs(m - 0.2) < 0.02"),
        probe("q/bad-check", "out = 1", "out = 1", check="undefined_name > 0"),
    ]
    results = {r["probe"]: r for r in run_probes(probes, jobs=1, batch_size=4, startup=25)}
    assert results["q/expect-differ"]["result"] == "holds"
    assert results["q/check"]["result"] == "holds"
    assert results["q/check-fails"]["result"] == "differs"
    assert results["q/bad-check"]["result"] == "error"


@needs_mindspore
def test_generated_call_probe_with_a_real_op():
    p = {"id": "g/abs", "torch": "torch.abs", "ms_api": "mindspore.ops.abs", "family": "classic",
         "kind": "equivalence", "expect": "same", "inputs": [{"tensor": [2, 3], "dtype": "float32"}]}
    (r,) = run_probes([p], jobs=1, startup=25)
    assert r["result"] == "holds", r


@pytest.mark.parametrize("t, m, same, words", [
    pytest.param([1.0, 2.0], [1.0, 2.0], True, "", id="equal"),
    pytest.param([1.0, 2.0], [1.0, 2.5], False, "values differ", id="values"),
    pytest.param([[1.0]], [1.0], False, "shape", id="shape"),
])
def test_compare(t, m, same, words):
    import numpy as np

    ok, detail, _ = compare(np.asarray(t, np.float32), np.asarray(m, np.float32))
    assert ok is same and words in detail


def test_compare_reports_dtype_when_values_match():
    import numpy as np

    ok, detail, worst = compare(np.arange(3, dtype=np.int64), np.arange(3, dtype=np.int32))
    assert not ok and "dtype int64 (torch) vs int32 (mindspore)" in detail and worst == 0
