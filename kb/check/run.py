"""Run a check: versions, one introspection subprocess per framework, then judge every item."""
from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from kb.check.claims import Plan, plan
from kb.check.verify import Verifier, snapshot_baseline

ROOT = Path(__file__).resolve().parent.parent.parent


class NotInstalled(Exception):
    pass


def installed_version(dist: str) -> str | None:
    """The installed distribution's version (no import of the library itself)."""
    from importlib import metadata

    try:
        return metadata.version(dist).split("+")[0]
    except metadata.PackageNotFoundError:
        return None


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    env.setdefault("GLOG_v", "3")  # keep mindspore's C++ log quiet
    env.setdefault("PYTHONWARNINGS", "ignore")
    return env


def introspect(framework: str, names: list[str], tick: Callable[[], None] = lambda: None,
               timeout: float = 900) -> tuple[str | None, dict[str, dict]]:
    """(version, {name: live entry}) from a ``kb.check.live`` subprocess."""
    with tempfile.TemporaryFile(mode="w+") as err:
        proc = subprocess.Popen([sys.executable, "-m", "kb.check.live", framework], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=err, text=True, env=child_env(), cwd=str(ROOT))
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        try:
            assert proc.stdin and proc.stdout
            proc.stdin.write(json.dumps(names))
            proc.stdin.close()
            head = json.loads(proc.stdout.readline() or '{"error": "no_output"}')
            entries: dict[str, dict] = {}
            for line in proc.stdout:
                e = json.loads(line)
                entries[e.pop("name")] = e
                tick()
            proc.wait()
        finally:
            timer.cancel()
        if head.get("error") == "not_installed":
            raise NotInstalled(head.get("detail", ""))
        if "version" not in head or proc.returncode:
            err.seek(0)
            tail = err.read()[-800:]
            raise RuntimeError(f"introspecting {framework} failed (exit {proc.returncode}): {tail.strip()}")
    return head["version"], entries


class Progress:
    """A one-line bar on stderr, only when stderr is a terminal."""

    def __init__(self, total: int, enabled: bool | None = None) -> None:
        self.total, self.done = max(total, 1), 0
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.lock = threading.Lock()

    def tick(self) -> None:
        with self.lock:
            self.done += 1
            if self.enabled and (self.done % 25 == 0 or self.done == self.total):
                n = int(30 * self.done / self.total)
                sys.stderr.write(f"\rmsmap check [{'#' * n}{'.' * (30 - n)}] {self.done}/{self.total}")
                sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\r" + " " * 60 + "\r")
            sys.stderr.flush()


def check(kb, progress: bool | None = None, today: str | None = None) -> dict[str, Any]:
    """Verify every item of the knowledge base; returns {"versions", "rows", "skipped"}."""
    ms_version = installed_version("mindspore")
    if ms_version is None:
        raise NotInstalled("mindspore is not installed")
    torch_version = installed_version("torch")
    p: Plan = plan(kb, ms_version, torch_version)
    frameworks = ["mindspore"] + (["torch"] if torch_version else [])
    names = {fw: p.names(fw) for fw in frameworks}
    bar = Progress(sum(len(v) for v in names.values()), progress)
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {fw: pool.submit(introspect, fw, names[fw], bar.tick) for fw in frameworks}
        live: dict[str, dict[str, Any]] = {}
        versions: dict[str, str | None] = {"mindspore": None, "torch": None}
        for fw, fut in futures.items():
            try:
                versions[fw], live[fw] = fut.result()
            except NotInstalled:
                if fw == "mindspore":
                    bar.close()
                    raise
    bar.close()
    verifier = Verifier(live, versions, snapshot_baseline(kb, versions["mindspore"] or ms_version))
    today = today or datetime.date.today().isoformat()
    rows = []
    for item in sorted(p.items.values(), key=lambda i: i.key):
        result, detail = verifier.judge(item)
        rows.append({
            "subject": item.subject, "claim": item.claim, "kind": item.kind,
            "ms_version": versions["mindspore"], "torch_version": versions["torch"],
            "result": result, "detail": detail, "checked_on": today,
            "entries": sorted(item.entries),
        })
    return {"versions": versions, "rows": rows, "skipped": p.skipped}
