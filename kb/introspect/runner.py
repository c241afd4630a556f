"""Run ``python -m kb.introspect`` in a subprocess and report the result.

The child may be any interpreter (``--python``), e.g. a venv holding an older
MindSpore; it only needs the standard library plus this package on
``PYTHONPATH``.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kb.errors import MsmapError

REPO_ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 600


def run_snapshot(framework: str, out_dir: Path, python: str | None = None, log=None) -> Path:
    """Write the snapshot of ``framework`` as installed for ``python``; return its path.

    ``log`` receives the child's notes (namespaces absent from that version).
    """
    interpreter = python or sys.executable
    if not Path(interpreter).exists():
        raise MsmapError(f"no Python interpreter at {interpreter}")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    env.setdefault("GLOG_v", "3")  # MindSpore: errors only
    cmd = [interpreter, "-m", "kb.introspect", framework, "--out-dir", str(Path(out_dir).resolve())]
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=REPO_ROOT)
    except subprocess.TimeoutExpired:
        raise MsmapError(f"snapshot of {framework} took longer than {TIMEOUT_S} s; gave up") from None
    if proc.returncode == 2:
        raise MsmapError(_last_line(proc.stderr) or f"{framework} is not installed for {interpreter}")
    if proc.returncode != 0:
        raise MsmapError(
            f"snapshot of {framework} failed in {interpreter} (exit {proc.returncode}): "
            f"{_last_line(proc.stderr) or 'no message'}",
            exit_code=3,
        )
    if log:
        for line in proc.stderr.splitlines():
            if line.startswith("skipped "):
                log(f"{framework}: {line}")
    path = Path(_last_line(proc.stdout))
    if not path.is_file():
        raise MsmapError(f"snapshot of {framework} reported no output file", exit_code=3)
    return path


def _last_line(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""
