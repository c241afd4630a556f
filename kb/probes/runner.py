"""Run probes in isolated worker subprocesses: a small pool, batches, timeouts, retries.

- Probes go to ``kb.probes.worker`` in batches (one MindSpore import per batch).
- A worker that stops after a MindSpore error (exit 3) has its unfinished probes
  re-queued as a fresh batch: no probe runs in a process with leftover error state.
- A batch that crashes or hangs loses only itself: its unfinished probes are retried
  one by one, and a probe that crashes or hangs alone is reported as ``error`` or
  ``timeout`` — never fatal to the run.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from kb.check.run import ROOT, child_env

STARTUP_SECONDS = 60.0  # importing mindspore + torch, generously, on a busy machine
PROBE_SECONDS = 20.0


_LIVE: set = set()  # worker processes still running (killed if the run is interrupted)

# Kept workers (keep_workers): idle ``--serve`` processes by (worker module, interpreter, side), each with its stderr.
KEEPS = frozenset({"kb.probes.sides"})  # the worker modules that speak the kept protocol
_KEEP = [False]
_IDLE: dict[tuple[str, str, str], list[tuple[subprocess.Popen, Any]]] = {}
_IDLE_LOCK = threading.Lock()


def keep_workers(on: bool = True) -> None:
    """Reuse worker processes across ``run_probes`` calls of this process (a test session: each file's
    batches skip importing torch and MindSpore again). One process per side, as in a batch: a MindSpore
    error still ends it (the next batch gets a fresh one), a batch that crashes or hangs is retried one
    probe per fresh process, and a probe that fails in a worker that ran earlier batches is run again in
    a fresh one, whose result counts (MindSpore keeps state between calls: a SearchSorted of one file's
    test failed after another file's). ``False`` closes the idle ones."""
    _KEEP[0] = on
    if not on:
        with _IDLE_LOCK:
            kept = [k for group in _IDLE.values() for k in group]
            _IDLE.clear()
        for proc, err in kept:
            _close(proc, err)


def _close(proc: subprocess.Popen, err: Any) -> None:
    try:
        if proc.stdin:
            proc.stdin.close()
        proc.wait(timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()
    err.close()


def _side(batch: list[dict]) -> str | None:
    sides = {p.get("side", "") for p in batch}
    return sides.pop() if len(sides) == 1 else None


def _watched(proc: subprocess.Popen, timeout: float) -> tuple[threading.Event, threading.Timer]:
    """``proc`` counted as live and killed after ``timeout`` seconds: (set when it was killed, the running timer)."""
    _LIVE.add(proc)
    timed_out = threading.Event()

    def kill() -> None:
        timed_out.set()
        proc.kill()

    timer = threading.Timer(timeout, kill)
    timer.start()
    return timed_out, timer


def _tail(err: Any) -> str:
    """The last lines of a worker's stderr file, shortened."""
    err.seek(0)
    return " | ".join(line.strip() for line in err.read().strip().splitlines()[-3:])[-400:]


def _launch_kept(batch: list[dict], timeout: float, worker: str, python: str, side: str
                 ) -> tuple[list[dict], int | None, bool, str, bool]:
    """``_launch`` through an idle kept worker of ``side`` (a new one when none is idle), and whether the
    worker had run batches before this one."""
    key = (worker, python, side)
    with _IDLE_LOCK:
        idle = _IDLE.get(key) or []
        kept = idle.pop() if idle else None
    if kept is not None:
        proc, err = kept
    else:
        err = tempfile.TemporaryFile(mode="w+")
        proc = subprocess.Popen([python, "-m", worker, "--serve", side], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=err, text=True, env=child_env(), cwd=str(ROOT))
    timed_out, timer = _watched(proc, timeout)
    results: list[dict] = []
    done = False
    try:
        assert proc.stdin and proc.stdout
        try:
            proc.stdin.write(json.dumps(batch) + "\n")
            proc.stdin.flush()
        except BrokenPipeError:
            pass
        for line in proc.stdout:
            try:
                got = json.loads(line)
            except json.JSONDecodeError:
                continue  # a probe printed to stdout; its own result line follows
            if isinstance(got, dict) and got.get("batch") == "done":
                done = True
                break
            results.append(got)
    finally:
        timer.cancel()
        _LIVE.discard(proc)
    if done and not timed_out.is_set():
        with _IDLE_LOCK:
            _IDLE.setdefault(key, []).append((proc, err))
        return results, None, False, "", kept is not None
    code = proc.wait()
    tail = _tail(err)
    err.close()
    return results, code, timed_out.is_set(), tail, kept is not None


def _launch(batch: list[dict], timeout: float, worker: str = "kb.probes.worker", python: str = sys.executable
            ) -> tuple[list[dict], int | None, bool, str]:
    """(results received, exit code, timed out?, stderr tail) of one ``worker`` module process."""
    with tempfile.TemporaryFile(mode="w+") as err:
        proc = subprocess.Popen([python, "-m", worker], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=err, text=True, env=child_env(), cwd=str(ROOT))
        timed_out, timer = _watched(proc, timeout)
        results = []
        try:
            assert proc.stdin and proc.stdout
            try:
                proc.stdin.write(json.dumps(batch))
                proc.stdin.close()
            except BrokenPipeError:
                pass
            for line in proc.stdout:
                try:
                    results.append(json.loads(line))
                except json.JSONDecodeError:
                    continue  # a probe printed to stdout; its own result line follows
            code = proc.wait()
        finally:
            timer.cancel()
            _LIVE.discard(proc)
        tail = _tail(err)
    return results, code, timed_out.is_set(), tail


def run_probes(probes: list[dict], jobs: int = 2, batch_size: int = 12,
               on_result: Callable[[dict], None] = lambda r: None, startup: float = STARTUP_SECONDS,
               worker: str = "kb.probes.worker", python: str = sys.executable) -> list[dict]:
    """Run every probe; returns one result per probe (any order).

    A batch may take ``startup`` seconds plus each probe's ``timeout`` (default PROBE_SECONDS).
    ``worker`` is the module run as ``python -m`` (the same protocol as ``kb.probes.worker``), under the
    interpreter ``python`` (the timing probes run MindSpore versions installed in other environments).
    """
    def _budget(batch: list[dict]) -> float:
        return startup + sum(float(p.get("timeout", PROBE_SECONDS)) for p in batch)

    queue: deque = deque((probes[i:i + batch_size], False) for i in range(0, len(probes), batch_size))
    lock = threading.Condition()
    results: list[dict] = []
    busy = [0]

    def emit(r: dict) -> None:
        with lock:
            results.append(r)
        on_result(r)

    def handle(batch: list[dict], single: bool) -> None:
        side = _side(batch) if _KEEP[0] and worker in KEEPS and not single else None
        if side is not None:
            got, code, timed_out, tail, reused = _launch_kept(batch, _budget(batch), worker, python, side)
            if reused:  # a failure in a process that ran other batches before is confirmed in a fresh one:
                doubtful = {r["probe"] for r in got if r.get("result") != "ok"}  # (MindSpore keeps state)
                got = [r for r in got if r["probe"] not in doubtful]
                with lock:
                    queue.extend(([p], True) for p in batch if p["id"] in doubtful)
                batch = [p for p in batch if p["id"] not in doubtful]
        else:
            got, code, timed_out, tail = _launch(batch, _budget(batch), worker, python)
        done = {r["probe"] for r in got}
        for r in got:
            emit(r)
        rest = [p for p in batch if p["id"] not in done]
        if not rest:
            return
        if code == 3 and not timed_out:  # stopped cleanly after a MindSpore error: fresh process for the rest
            with lock:
                queue.append((rest, False))
            return
        if single or len(rest) == 1 and len(batch) == 1:
            p = rest[0]
            if timed_out:
                emit({"probe": p["id"], "result": "timeout", "max_abs_diff": None,
                      "detail": f"no result within {_budget([p]):.0f} s (process killed)"})
            else:
                emit({"probe": p["id"], "result": "error", "max_abs_diff": None,
                      "detail": f"worker process died (exit code {code})" + (f": {tail}" if tail else "")})
            for q in rest[1:]:
                with lock:
                    queue.append(([q], True))
            return
        with lock:  # the batch crashed or hung: retry what it did not finish, one by one
            queue.extend(([p], True) for p in rest)

    def drain() -> None:
        while True:
            with lock:
                while not queue and busy[0]:
                    lock.wait()
                if not queue:
                    lock.notify_all()
                    return
                batch, single = queue.popleft()
                busy[0] += 1
            try:
                handle(batch, single)
            finally:
                with lock:
                    busy[0] -= 1
                    lock.notify_all()

    threads = [threading.Thread(target=drain, daemon=True) for _ in range(max(1, min(jobs, 2)))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(0.5)
    finally:  # interrupted: no orphaned workers
        for proc in list(_LIVE):
            proc.kill()
    return results
