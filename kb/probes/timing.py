"""Timing probes: what an op costs in MindSpore (classic and mint) against torch, per version.

- ``load_ops``  — the op definitions (data/timing/ops.yaml), checked;
- ``measure``   — run them: per chunk of ops, torch (this interpreter) then each MindSpore
  family (the interpreter of the version measured, e.g. a venv with mindspore 2.7.1), each side in
  isolated worker processes (``kb.probes.timing_worker``) with timeouts; torch's time for the same
  op and shape comes from the same run;
- ``record`` / ``load_rows`` — results as data (data/timing/timing-mindspore-<v>-cpu.jsonl);
- ``drift`` — recorded entries whose ratio to torch moved by more than the recorded spread.

Results: timed, no_cpu_kernel (MindSpore has no CPU kernel for the op), absent (the API does not
exist in that version), error, timeout.
"""
from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

SIDES = ("torch", "classic", "mint")
FAMILIES = ("classic", "mint")
RECORD_FIELDS = ("op", "torch", "torch_apis", "family", "ms_api", "device", "ms_version", "torch_version", "shape",
                 "result", "ms", "spread", "torch_ms", "torch_spread", "ratio", "ratio_spread", "date", "machine",
                 "detail")
CASE_SECONDS = 90.0     # one measurement, warm-up included (a 2.10.0 convolution takes ~0.4 s per call)
STARTUP_SECONDS = 90.0  # importing a framework on a busy machine
CHUNK = 6               # ops per round of torch / classic / mint workers (keeps each pair close in time)


class TimingDataError(ValueError):
    """A bad op definition or result file; the message names the file and entry."""


def load_ops(path: Path) -> list[dict[str, Any]]:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise TimingDataError(f"{path}: cannot read: {exc}") from None
    ops = raw.get("ops") if isinstance(raw, dict) else None
    if not isinstance(ops, list):
        raise TimingDataError(f"{path}: top level must be a mapping with 'ops:'")
    seen: set[str] = set()
    for i, op in enumerate(ops):
        where = f"{path}: op #{i} ({op.get('id', '?') if isinstance(op, dict) else '?'})"
        if not isinstance(op, dict):
            raise TimingDataError(f"{where}: must be a mapping")
        missing = [k for k in ("id", "torch_apis", "shapes", "torch") if not op.get(k)]
        if missing:
            raise TimingDataError(f"{where}: missing {', '.join(missing)}")
        if op["id"] in seen:
            raise TimingDataError(f"{where}: duplicate id")
        seen.add(op["id"])
        if not any(op.get(f) for f in FAMILIES):
            raise TimingDataError(f"{where}: needs a 'classic' or 'mint' side")
        for side in SIDES:
            s = op.get(side)
            if s is not None and not (isinstance(s, dict) and s.get("api") and s.get("code")):
                raise TimingDataError(f"{where}: field '{side}': needs 'api' and 'code'")
        if not all(isinstance(s, dict) for s in op["shapes"]):
            raise TimingDataError(f"{where}: field 'shapes': each shape is a mapping of variables")
    return ops


def select(ops: list[dict], pattern: str | None) -> list[dict]:
    import fnmatch

    if not pattern:
        return ops
    pat = pattern if any(c in pattern for c in "*?[") else f"*{pattern}*"
    return [op for op in ops if any(fnmatch.fnmatchcase(n, pat) for n in [op["id"], *op["torch_apis"]])]


def shape_label(shape: dict) -> str:
    return str(shape.get("label") or " ".join(f"{k}={v}" for k, v in shape.items()))


def cases(ops: list[dict], side: str) -> list[dict]:
    """One worker case per (op, shape) that has this side."""
    out = []
    for op in ops:
        s = op.get(side)
        if not s:
            continue
        for i, shape in enumerate(op["shapes"]):
            out.append({"id": f"{op['id']}#{i}@{side}", "side": side, "api": s["api"], "setup": op.get("setup"),
                        "code": s["code"], "vars": {k: v for k, v in shape.items() if k != "label"},
                        "timeout": CASE_SECONDS})
    return out


def framework_version(python: str, dist: str) -> str | None:
    """The version of ``dist`` installed for the interpreter ``python`` (no import of the library)."""
    code = f"import importlib.metadata as m; print(m.version({dist!r}).split('+')[0])"
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def machine() -> str:
    """A short description of where the numbers were taken (CPU model, cores, OS)."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores (shared), {platform.system()} {platform.machine()}, 1 thread per side"


def measure(ops: list[dict], ms_python: str, on_result: Callable[[dict], None] = lambda r: None,
            chunk: int = CHUNK) -> dict[str, dict]:
    """{case id: worker result} for every case of every side; torch in this interpreter."""
    from kb.probes.runner import run_probes

    got: dict[str, dict] = {}
    for start in range(0, len(ops), chunk):
        part = ops[start:start + chunk]
        for side in SIDES:
            todo = cases(part, side)
            if todo:
                python = sys.executable if side == "torch" else ms_python
                for r in run_probes(todo, jobs=1, batch_size=len(todo), on_result=on_result,
                                    startup=STARTUP_SECONDS, worker="kb.probes.timing_worker", python=python):
                    got[r["probe"]] = r
    return got


def rows(ops: list[dict], got: dict[str, dict], versions: dict[str, str], when: str | None = None,
         where: str | None = None) -> list[dict]:
    """One row per (op, family, shape): the MindSpore result beside torch's from the same run."""
    when = when or datetime.date.today().isoformat()
    where = where or machine()
    out = []
    for op in ops:
        for fam in FAMILIES:
            if not op.get(fam):
                continue
            for i, shape in enumerate(op["shapes"]):
                m = got.get(f"{op['id']}#{i}@{fam}") or {"result": "error", "detail": "no result"}
                t = got.get(f"{op['id']}#{i}@torch") or {"result": "error", "detail": "no result"}
                row: dict[str, Any] = {
                    "op": op["id"], "torch": op["torch_apis"][0], "torch_apis": op["torch_apis"], "family": fam,
                    "ms_api": op[fam]["api"], "device": "CPU", "ms_version": versions["mindspore"],
                    "torch_version": versions["torch"], "shape": shape_label(shape), "result": m["result"],
                    "ms": m.get("ms"), "spread": m.get("spread"), "torch_ms": t.get("ms"),
                    "torch_spread": t.get("spread"), "ratio": None, "ratio_spread": None, "date": when,
                    "machine": where, "detail": (m.get("detail") or "")[:300] or None}
                if m["result"] == "timed" and t.get("result") != "timed":
                    row["detail"] = f"torch side: {t.get('result')}: {t.get('detail') or ''}"[:300]
                if m["result"] == "timed" and t.get("result") == "timed" and t["ms"]:
                    row["ratio"] = round(m["ms"] / t["ms"], 3)
                    row["ratio_spread"] = round((m.get("spread") or 0) + (t.get("spread") or 0), 3)
                out.append(row)
    return out


def key(row: dict) -> tuple[str, ...]:
    return row["op"], row["family"], row.get("device") or "CPU", row["ms_version"], row["shape"]


def results_path(folder: Path, ms_version: str, device: str = "cpu") -> Path:
    return folder / f"timing-mindspore-{ms_version}-{device}.jsonl"


def load_rows(path: Path) -> list[dict]:
    """Recorded rows, checked as the build checks them (errors name the file, line and field)."""
    from kb.model import TimingRow
    from kb.sources import load_jsonl

    return [r.model_dump() for r in load_jsonl(path, TimingRow)]


def record(new: list[dict], path: Path, replace_all: bool) -> Path:
    """Write rows sorted by (op, family, shape); a partial run (``--only``) updates only its own rows."""
    merged: dict[tuple, dict] = {}
    if path.exists() and not replace_all:
        merged.update((key(r), r) for r in load_rows(path))
    merged.update((key(r), r) for r in new)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.stem}.partial"
    tmp.write_text("".join(json.dumps({k: merged[c].get(k) for k in RECORD_FIELDS}, ensure_ascii=False) + "\n"
                           for c in sorted(merged)), encoding="utf-8")
    tmp.replace(path)
    return path


NOISE_FLOOR = 0.10  # a ratio within 10% of the recorded one never counts as drift, whatever the spread


def drift(recorded: Iterable[dict], fresh: Iterable[dict]) -> list[dict]:
    """Entries of a fresh run that disagree with the recorded ones: the result changed (e.g. a CPU
    kernel appeared), or the ratio to torch moved by more than the two runs' spreads together."""
    old = {key(r): r for r in recorded}
    out = []
    for new in fresh:
        was = old.get(key(new))
        if was is None:
            continue
        if was["result"] != new["result"]:
            out.append({**_ident(new), "was": was["result"], "now": new["result"], "why": "result changed"})
            continue
        if was.get("ratio") and new.get("ratio"):
            allowed = max(NOISE_FLOOR, (was.get("ratio_spread") or 0) + (new.get("ratio_spread") or 0))
            moved = new["ratio"] / was["ratio"]
            if moved > 1 + allowed or moved < 1 / (1 + allowed):
                out.append({**_ident(new), "was": was["ratio"], "now": new["ratio"],
                            "why": f"ratio to torch moved x{moved:.2f} (allowed +/-{allowed:.0%})"})
    return out


def _ident(row: dict) -> dict:
    return {k: row[k] for k in ("op", "family", "shape", "ms_version")}
