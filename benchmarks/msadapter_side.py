"""MSAdapter beside msmap: run a corpus case's UNCONVERTED source under MSAdapter's stand-in
``torch`` package and compare it with real torch (used by ``bench_models.py --msadapter``).

MSAdapter (PyPI ``msadapter`` 0.5.0b1) installs a package named ``torch``, so it lives in its own
virtual environment, created on first use at $MSADAPTER_VENV (default /tmp/msadapter-venv):
mindspore 2.10.0 and numpy<2, then msadapter without its pinned dependencies, plus the three
it needs at run time (and einops, which model files import).  On CPU its stand-in ``torch`` imports only
when ``import msadapter`` runs first (a plain ``import torch`` fails looking up Ascend device
properties), so the child imports msadapter before anything imports torch.  The child loads real
torch's state dict (same names) with ``load_state_dict`` and runs the case's inputs; stages: import,
init, weights, forward, mismatch.

    python benchmarks/msadapter_side.py --setup
    python benchmarks/msadapter_side.py --corpus heldout/batch1 [--jobs N] [--json OUT]
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

VENV = Path(os.environ.get("MSADAPTER_VENV", "/tmp/msadapter-venv"))
PY = VENV / "bin" / "python"
STAGES = ["import", "init", "weights", "forward", "mismatch"]
TIMEOUT = 300


def ensure_venv() -> str | None:
    """Create the venv once; None when ready, else why it could not be made."""
    marker = VENV / ".msadapter-ready"
    if marker.exists():
        return None
    steps = [[sys.executable, "-m", "venv", str(VENV)],
             [str(PY), "-m", "pip", "install", "-q", "mindspore==2.10.0", "numpy<2"],
             [str(PY), "-m", "pip", "install", "-q", "--no-deps", "msadapter==0.5.0b1"],
             [str(PY), "-m", "pip", "install", "-q", "requests", "typing_extensions", "ml-dtypes<0.6", "numpy<2",
              "einops==0.8.2", "tqdm"]]  # einops: model files import it; tqdm: its torch.utils.model_zoo
    for cmd in steps:
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        except subprocess.TimeoutExpired:
            return f"{' '.join(cmd[:5])}: timeout"
        if proc.returncode:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:]
            return f"{' '.join(cmd[:5])}: {tail[0] if tail else proc.returncode}"
    marker.write_text("ok\n")
    return None


def run_case(torch_args: dict, torch_side: dict, work: Path) -> dict:
    """Stage reached by the unconverted case under MSAdapter, with the first error."""
    if not torch_side.get("ok"):
        return {"stage": "weights", "error": f"torch side failed: {torch_side.get('error')}"}
    why = ensure_venv()
    if why:
        return {"stage": "import", "error": f"MSAdapter venv not available: {why}"}
    progress = work / "msadapter.jsonl"
    progress.unlink(missing_ok=True)
    args = {**torch_args, "progress": str(progress), "torch_outputs": torch_side["outputs"]}
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.setdefault("GLOG_v", "3")
    crash = None
    try:
        proc = subprocess.run([str(PY), __file__, "--child", json.dumps(args)], capture_output=True, text=True,
                              timeout=TIMEOUT, env=env, cwd=str(work))
        if proc.returncode:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:]
            crash = f"child exited {proc.returncode}: {tail[0] if tail else ''}"
    except subprocess.TimeoutExpired:
        crash = f"timeout after {TIMEOUT}s"
    steps = [json.loads(line) for line in progress.read_text().splitlines()] if progress.exists() else []
    bad = next((s for s in steps if not s["ok"]), None)
    if bad:
        return {"stage": bad["stage"], "error": bad["error"]}
    if len(steps) < len(STAGES):
        return {"stage": STAGES[len(steps)], "error": crash or "child stopped without a result"}
    return {"stage": "PASS", "error": None, "max_abs_diff": steps[-1].get("max_abs_diff")}


def child(args: dict) -> None:
    import numpy as np

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_models import compare, flatten, module_path  # stdlib-only: no real torch comes with it

    log = open(args["progress"], "a")

    def step(stage, ok=True, **kw):
        log.write(json.dumps({"stage": stage, "ok": ok, **kw}) + "\n")
        log.flush()

    stage = "import"
    try:
        import msadapter  # noqa: F401 - must come first: on CPU its stand-in torch imports only after it
        import torch  # MSAdapter's stand-in

        sys.path.insert(0, args["src"])
        module = __import__(module_path(args), fromlist=["_"])
        step("import")
        stage = "init"
        torch.manual_seed(0)
        ns = dict(vars(module))
        exec(args["build"], ns)
        model = ns["model"]
        step("init")
        stage = "weights"
        state = {k: torch.tensor(v) for k, v in np.load(args["state"]).items()}
        model.load_state_dict(state)
        step("weights")
        stage = "forward"
        model.eval()
        with torch.no_grad():
            out = model(*[torch.tensor(a) for a in np.load(args["inputs"]).values()])
        step("forward")
        stage = "mismatch"
        error, worst = compare(flatten(out), args["torch_outputs"], np.load(args["outputs"]))
        if error:
            step("mismatch", ok=False, error=error)
            return
        step("mismatch", max_abs_diff=worst)
    except BaseException as exc:  # noqa: BLE001 - reported, not raised
        text = f"{type(exc).__name__}: {exc}".strip().splitlines()
        step(stage, ok=False, error=(text[0] if text else type(exc).__name__)[:300])


def run_corpus(corpus: str, jobs: int, out: Path | None) -> int:
    """MSAdapter alone over a corpus (``--corpus heldout/batch1``): torch side, then the stand-in."""
    import shutil
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_models

    problem = ensure_venv()
    if problem:
        print(f"msadapter_side: {problem}", file=sys.stderr)
        return 1

    def one(case):
        work = Path(tempfile.mkdtemp(prefix=f"msadapter-{case['name']}-"))
        try:
            torch_side = bench_models.run_torch_side(case, work)
            return {"case": case["name"], **run_case(torch_side["args"], torch_side, work)}
        finally:
            shutil.rmtree(work, ignore_errors=True)

    with ThreadPoolExecutor(max(1, jobs)) as pool:
        rows = list(pool.map(one, bench_models.load_cases(None, corpus)))
    for r in rows:
        print(f"{r['case']:28} {r['stage']:9} {(r['error'] or '')[:150]}")
    passed = sum(r["stage"] == "PASS" for r in rows)
    print(f"MSAdapter 0.5.0b1 (unconverted files under its stand-in torch): PASS {passed}/{len(rows)}")
    if out:
        out.write_text(json.dumps({"corpus": corpus, "msadapter": "0.5.0b1", "pass": passed, "cases": len(rows),
                                   "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(json.loads(sys.argv[2]))
    elif len(sys.argv) == 2 and sys.argv[1] == "--setup":
        problem = ensure_venv()
        print(problem or f"MSAdapter venv ready at {VENV}")
        sys.exit(1 if problem else 0)
    elif len(sys.argv) >= 3 and sys.argv[1] == "--corpus":
        # --corpus NAME [--jobs N] [--json OUT]
        opts = dict(zip(sys.argv[3::2], sys.argv[4::2], strict=False))
        sys.exit(run_corpus(sys.argv[2], int(opts.get("--jobs", 1)),
                            Path(opts["--json"]) if "--json" in opts else None))
    else:
        print(__doc__)
