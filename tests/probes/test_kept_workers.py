"""Kept probe workers (kb.probes.runner.keep_workers, on for the whole test session in tests/conftest.py): later
batches reuse the process, but a MindSpore runtime error or a hang still costs the process, never a wrong result."""
from __future__ import annotations

import pickle
from pathlib import Path

from kb.probes import runner

CODE = {
    "pid": "import os\n\ndef run():\n    return os.getpid()\n",
    "boom": "def run():\n    raise RuntimeError('a kernel failed')\n",
    "torch": "def run():\n    import torch\n    return 1\n",
    "hang": "import time\n\ndef run():\n    time.sleep(60)\n",
    "graph": "import mindspore\nmindspore.set_context(mode=mindspore.GRAPH_MODE)\n\ndef run():\n    return 0\n",
    "mode": "import mindspore\n\ndef run():\n    return mindspore.get_context('mode')\n",
    "taint": "import builtins\nbuiltins.msmap_tainted = True\n\ndef run():\n    return 0\n",
    "tainted": "import builtins\n\ndef run():\n    if getattr(builtins, 'msmap_tainted', False):\n"
               "        raise ValueError('state an earlier job left')\n    return 1\n",
}


def _run(tmp: Path, side: str, *names: str, **kw) -> dict[str, tuple[dict, object]]:
    """{probe id: (result, output or None)} of ``names`` (CODE's snippets) run on ``side`` in one call."""
    jobs = []
    for i, name in enumerate(names):
        source = tmp / f"{side}{i}_{name}.py"
        source.write_text(CODE[name])
        jobs.append({"id": f"{i}:{name}", "side": side, "file": str(source), "entry": "run", "inputs": {},
                     "seed": 0, "out": str(source.with_suffix(".pkl")), "timeout": kw.pop("timeout", 20)})
    got = runner.run_probes(jobs, jobs=1, batch_size=len(jobs), worker="kb.probes.sides", **kw)
    out = {}
    for r in got:
        job = next(j for j in jobs if j["id"] == r["probe"])
        path = Path(job["out"])
        out[r["probe"]] = (r, pickle.loads(path.read_bytes()) if r["result"] == "ok" and path.exists() else None)
    return out


def test_a_kept_worker_serves_later_calls_and_stops_after_a_mindspore_error(tmp_path):
    assert runner._KEEP[0], "tests/conftest.py keeps probe workers for the session"
    first = _run(tmp_path, "mindspore", "pid")["0:pid"]
    again = _run(tmp_path, "mindspore", "pid", "torch", "pid")
    assert first[0]["result"] == again["0:pid"][0]["result"] == "ok"
    assert first[1] == again["0:pid"][1] == again["2:pid"][1], "one process for both calls"
    # the MindSpore side cannot import torch in a kept worker either (an import error goes on: no state left)
    assert again["1:torch"][0]["result"] == "error" and "torch" in again["1:torch"][0]["detail"]
    after = _run(tmp_path, "mindspore", "boom", "pid")
    assert after["0:boom"][0]["result"] == "error" and "a kernel failed" in after["0:boom"][0]["detail"]
    assert after["1:pid"][0]["result"] == "ok" and after["1:pid"][1] != first[1], "a fresh process after the error"


def test_a_kept_worker_that_hangs_is_killed_and_replaced(tmp_path):
    before = _run(tmp_path, "torch", "pid")["0:pid"][1]
    (hung,) = _run(tmp_path, "torch", "hang", timeout=1, startup=1).values()
    assert hung[0]["result"] == "timeout"
    now = _run(tmp_path, "torch", "pid")["0:pid"]
    assert now[0]["result"] == "ok" and isinstance(now[1], int) and now[1] != before


def test_a_kept_mindspore_worker_runs_each_job_in_pynative_mode(tmp_path):
    """Converted code that switched to graph mode does not leave the next file's code in it."""
    got = _run(tmp_path, "mindspore", "graph", "mode")
    assert got["0:graph"][0]["result"] == got["1:mode"][0]["result"] == "ok"
    assert got["1:mode"][1] == 1  # mindspore.PYNATIVE_MODE


def test_a_failure_in_a_reused_worker_is_run_again_in_a_fresh_process(tmp_path):
    """A job that fails only because of what an earlier call left in the process (MindSpore keeps kernel
    state between calls) gets the result a fresh process gives; a failure of its own stays a failure."""
    assert _run(tmp_path, "mindspore", "taint")["0:taint"][0]["result"] == "ok"
    again = _run(tmp_path, "mindspore", "tainted", "boom")
    assert again["0:tainted"][0]["result"] == "ok" and again["0:tainted"][1] == 1
    assert again["1:boom"][0]["result"] == "error" and "a kernel failed" in again["1:boom"][0]["detail"]
