"""Convert whole real training projects with msmap and check that they train like torch.

    python benchmarks/bench_projects.py [--family classic|mint|both] [--only NAME] [--json [PATH]]
                                        [--msmap-root DIR] [--label TEXT] [--keep DIR]

Each folder of benchmarks/projects/ describes one project taken from a PyPI sdist or wheel
(``project.json``): the pinned requirement, which files of the archive make the project, the
adaptations applied to them (exact text replacements, each with its reason: dataset downloads and
loading replaced by generated tensors, services and progress bars left out), the Python packages
the project needs beside torch (installed with ``pip install --no-deps --target`` into the cache,
never into the environment), and the shapes of the generated batches. ``bench_driver.py`` beside
it is the run script a user would have written around the project: torch code that builds the
model, feeds the project's own training loop the generated batches and returns the per-step
losses; it is converted together with the project.

The archives are fetched once with ``pip download --no-deps`` into ``$MSMAP_PROJECTS_CACHE``
(default /tmp/msmap-projects); nothing is downloaded while a project runs.

For each project and family the project folder is converted with
``msmap convert --device CPU --family F --out`` and taken through these stages; a project's stage
is the first that fails (PASS when none does):

  convert     msmap exits 0 and writes every file
  parse       every converted file parses
  torch-left  no torch import or reference and no ``# msmap:`` marker is left
  import      the converted driver imports in a child process where importing torch fails
  build       the driver builds the model
  weights     torch's initial weights (same seed) map onto every MindSpore parameter
  train       the project's training loop runs E epochs (>= 20 steps) on the same batches: every
              per-step loss and every trained parameter agrees with torch's, within
              train_stage.py's tolerance (rtol 1e-4 / atol 1e-5, or 10x torch's own float32-vs-
              float64 distance, measured by a float64 twin run; where the code cannot run in float64,
              by a float32 twin whose initial weights moved by one rounding step)
  resume      a fresh run trains the first epoch and saves a checkpoint (the project's own saving
              code where it has one), a new model resumes from it and trains the rest: the resumed
              curve and the final parameters are those of torch doing the same (where the project
              saves no optimizer state, torch's resumed curve differs from its uninterrupted one too)
  evaluate    the project's evaluation (loss, accuracy) on generated held-out batches gives
              torch's numbers (rtol 1e-3)

A torch-left failure does not stop the run (``ran to`` tells how far the converted code got).
The top causes are aggregated per family from the first error line of the stage where each
project stopped.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_models as bm  # noqa: E402
import train_stage  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PROJECTS = ROOT / "benchmarks" / "projects"
RESULTS = ROOT / "benchmarks" / "results"
CACHE = Path(os.environ.get("MSMAP_PROJECTS_CACHE", "/tmp/msmap-projects"))
STAGES = ["convert", "parse", "torch-left", "import", "build", "weights", "train", "resume", "evaluate", "PASS"]
RUN_STAGES = ["import", "build", "weights", "train", "resume", "evaluate"]
TIMEOUT_TORCH, TIMEOUT_MS = 600, 900
LOSS_RTOL, EVAL_RTOL = 1e-4, 1e-3


# ----------------------------------------------------------------------------- projects and sources
def load_projects(only: list[str] | None = None) -> list[dict]:
    projects = []
    for meta in sorted(PROJECTS.glob("*/project.json")):
        project = json.loads(meta.read_text())
        project["dir"] = str(meta.parent)
        if not only or project["name"] in only:
            projects.append(project)
    missing = set(only or ()) - {p["name"] for p in projects}
    if missing:
        raise SystemExit(f"bench_projects: no such project: {', '.join(sorted(missing))}")
    return projects


def fetch(project: dict) -> Path:
    """The project's archive in the cache (downloaded once with pip download --no-deps)."""
    dl = CACHE / "dl"
    dl.mkdir(parents=True, exist_ok=True)
    source = project["source"]
    archive = dl / source["archive"]
    if not archive.exists():
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(dl), source["requirement"]]
        if archive.name.endswith((".tar.gz", ".zip")):
            cmd[5:5] = ["--no-binary", ":all:"]
        subprocess.run(cmd, check=True, timeout=600)
    if not archive.exists():
        raise SystemExit(f"bench_projects: pip did not give {archive.name} for {source['requirement']}")
    return archive


def site_dir(projects: list[dict]) -> Path:
    """Packages the projects need beside torch, installed once under the cache (never in the venv)."""
    site = CACHE / "site"
    wanted = sorted({d for p in projects for d in p.get("deps", [])})
    stamp = site / ".installed"
    have = set(stamp.read_text().split()) if stamp.exists() else set()
    if set(wanted) - have:
        subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), *wanted],
                       check=True, timeout=900)
        stamp.write_text("\n".join(sorted(have | set(wanted))) + "\n")
    return site


def _members(archive: Path) -> dict[str, bytes]:
    """Files of the archive by path (an sdist's top folder removed)."""
    out: dict[str, bytes] = {}
    if archive.suffix == ".whl" or archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as z:
            for name in z.namelist():
                if not name.endswith("/"):
                    out[name] = z.read(name)
    else:
        with tarfile.open(archive) as t:
            for m in t.getmembers():
                if m.isfile():
                    f = t.extractfile(m)
                    if f is not None:
                        out[m.name.split("/", 1)[1] if "/" in m.name else m.name] = f.read()
    return out


def assemble(project: dict, dest: Path) -> Path:
    """The project folder: the archive's files (``files``: archive path or folder/ -> project path),
    the adaptations applied, the driver added."""
    members = _members(fetch(project))
    dest.mkdir(parents=True, exist_ok=True)
    for src, dst in project["source"]["files"].items():
        picked = {n: b for n, b in members.items() if (n == src or (src.endswith("/") and n.startswith(src)))
                  and not any(n.startswith(x) for x in project["source"].get("exclude", []))}
        if not picked:
            raise SystemExit(f"bench_projects: {project['name']}: {src} is not in {project['source']['archive']}")
        for name, data in picked.items():
            if not name.endswith(".py"):
                continue
            target = dest / (dst + name[len(src):] if src.endswith("/") else dst)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    for a in project.get("adaptations", []):
        path = dest / a["file"]
        if a.get("write") is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(a["write"])
            continue
        if a.get("delete"):
            path.unlink()
            continue
        text = path.read_text()
        if a.get("cut_from") is not None:  # remove from this text to the end (or to ``cut_to``, excluded)
            start = text.index(a["cut_from"])
            end = text.index(a["cut_to"], start) if a.get("cut_to") else len(text)
            path.write_text(text[:start] + a.get("new", "") + text[end:])
            continue
        if text.count(a["old"]) != 1:
            raise SystemExit(f"bench_projects: {project['name']}: adaptation of {a['file']} finds "
                             f"{text.count(a['old'])} copies of {a['old'][:60]!r} (expected 1)")
        path.write_text(text.replace(a["old"], a["new"]))
    shutil.copyfile(Path(project["dir"]) / "bench_driver.py", dest / "bench_driver.py")
    return dest


def batches(project: dict, seed0: int, count: int) -> list[list]:
    return [bm.make_inputs(project["data"]["batch"], seed=seed0 + i) for i in range(count)]


# ----------------------------------------------------------------------------- children
def _as_float(arrays: list, dtype) -> list:
    return [a.astype(dtype) if a.dtype.kind == "f" else a for a in arrays]


def _module(ns, model):
    return ns["module"](model) if "module" in ns else model


def _phase_runs(ns: dict, build, args: dict, data: list, evals: list, load_init, state_of, work: Path,
                step) -> dict:
    """Run A (full), resume (first epoch, checkpoint, rest) and evaluation; the results."""
    epochs = args["epochs"]
    model = build()
    load_init(model)
    log: list = []
    ns["train"](model, data, log, epochs)
    out = {"losses": [float(v) for v in log], "state": state_of(model)}
    out["eval"] = [float(v) for v in ns["evaluate"](model, evals)]
    ckpt = str(work / "checkpoint")
    model = build()
    load_init(model)
    first: list = []
    ns["train"](model, data, first, epochs, 1, 1, ckpt, None)
    model = build()
    rest: list = []
    ns["train"](model, data, rest, epochs, 2, epochs, None, ckpt)
    out["resumed"] = [float(v) for v in first + rest]
    out["resumed_state"] = state_of(model)
    return out


def child_torch(args: dict) -> None:
    import numpy as np
    import torch

    work = Path(args["work"])
    result: dict = {"ok": False}
    try:
        sys.path.insert(0, args["src"])
        os.chdir(work)
        ns = vars(__import__("bench_driver"))
        data = [[np.load(args["batches"])[f"b{i}_{j}"] for j in range(args["n_arrays"])] for i in range(args["n_train"])]
        evals = [[np.load(args["batches"])[f"e{i}_{j}"] for j in range(args["n_arrays"])] for i in range(args["n_eval"])]

        def build():
            torch.manual_seed(0)
            return ns["build"]()

        init = {k: v.detach().clone() for k, v in _module(ns, build()).state_dict().items()}
        np.savez(work / "init.npz", **{k: v.numpy() for k, v in init.items()})

        def load_init(model):
            _module(ns, model).load_state_dict(init)

        def state_of(model):
            return {k: v.detach().cpu().numpy() for k, v in _module(ns, model).state_dict().items()}

        run = _phase_runs(ns, build, args, data, evals, load_init, state_of, work, None)
        np.savez(work / "trained.npz", **run.pop("state"))
        np.savez(work / "resumed.npz", **run.pop("resumed_state"))
        result.update(run, ok=True, params=[k for k, _ in _module(ns, build()).named_parameters()])
        # the float64 twin: the same run in float64, for the noise floor of float32 training
        try:
            torch.set_default_dtype(torch.float64)
            init64 = {k: (v.double() if v.is_floating_point() else v) for k, v in init.items()}

            def build64():
                torch.manual_seed(0)
                model = ns["build"]()
                _module(ns, model).double()
                return model

            model = build64()
            _module(ns, model).load_state_dict(init64)
            log: list = []
            ns["train"](model, [_as_float(b, np.float64) for b in data], log, args["epochs"])
            np.savez(work / "trained64.npz", **state_of(model))
            result["losses64"] = [float(v) for v in log]
        except Exception as exc:  # noqa: BLE001 - a float32 twin moved by one rounding step gives the floor then
            result["float64"] = bm._error_line(exc)
            torch.set_default_dtype(torch.float32)
            nudged = _twin_float32(ns, build, init, data, args["epochs"], state_of)
            if nudged is not None:
                (work / "trained64.npz").unlink(missing_ok=True)
                np.savez(work / "trained64.npz", **nudged.pop("state"))
                result["losses64"], result["twin"] = nudged["losses"], "float32 nudged"
    except BaseException as exc:  # noqa: BLE001 - reported, not raised
        result["error"] = bm._error_line(exc)
    Path(args["progress"]).write_text(json.dumps(result) + "\n")


def _twin_float32(ns: dict, build, init: dict, data: list, epochs: int, state_of) -> dict | None:
    """The noise floor where the code cannot run in float64 (it builds float32 tensors itself): the same float32
    run from initial weights each moved by one float32 rounding step (x * (1 +- 2**-23), signs from a fixed seed),
    the size of the difference any reordering of float32 sums makes. Its losses and trained state, or None."""
    import numpy as np
    import torch

    signs = np.random.default_rng(0)
    nudged = {k: (v * torch.from_numpy(1 + np.float32(2.0 ** -23) * signs.choice(np.float32([-1, 1]), v.shape))
                  .to(v.dtype) if v.is_floating_point() else v) for k, v in init.items()}
    try:
        model = build()
        _module(ns, model).load_state_dict(nudged)
        log: list = []
        ns["train"](model, data, log, epochs)
        return {"losses": [float(v) for v in log], "state": state_of(model)}
    except Exception:  # noqa: BLE001 - the plain tolerance alone then
        return None


def losses_differ(got: list, want: list, want64: list | None) -> str | None:
    """The first step whose loss differs from torch's beyond the twin tolerance, or None."""
    if len(got) != len(want):
        return f"{len(got)} losses logged, torch logs {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        noise = abs(w - want64[i]) if want64 and i < len(want64) else 0.0
        if abs(g - w) <= LOSS_RTOL * abs(w) + train_stage.ATOL or abs(g - w) <= train_stage.NOISE_FACTOR * noise:
            continue
        return f"step {i + 1}: loss {g:.6g}, torch {w:.6g} (torch float32 vs its twin: {noise:.3g})"
    return None


def child_ms(args: dict) -> None:
    if not args.get("allow_torch"):
        bm._block_torch()
    import numpy as np

    work = Path(args["work"])
    root = args["out"] + os.sep
    log = open(args["progress"], "a")

    def step(stage, ok=True, **kw):
        log.write(json.dumps({"stage": stage, "ok": ok, **kw}) + "\n")
        log.flush()

    stage = "import"
    try:
        sys.path.insert(0, args["out"])
        os.chdir(work)
        ns = vars(__import__("bench_driver"))
        step("import")
        stage = "build"
        import mindspore

        mindspore.set_context(device_target="CPU")

        def build():
            mindspore.set_seed(0)
            return ns["build"]()

        net = _module(ns, build())
        step("build")
        stage = "weights"
        from kb.weights import map_weights

        torch_init = dict(np.load(work.parent / "init.npz"))
        params = {p.name: p for p in net.get_parameters()}
        wm = map_weights(torch_init, {n: (tuple(p.shape), str(p.dtype)) for n, p in params.items()},
                         family=args["family"])
        lost = [k for k in wm.unused_torch if k in set(args["torch_params"])]
        problems = list(wm.conflicts)
        if wm.unfilled_ms:
            problems.append(f"MindSpore parameters not filled: {', '.join(wm.unfilled_ms[:4])} ({len(wm.unfilled_ms)})")
        if lost:
            problems.append(f"torch parameters not used: {', '.join(lost[:4])} ({len(lost)})")
        if problems:
            step("weights", ok=False, error="; ".join(problems)[:400])
            return
        step("weights", matched=len(wm.matched))

        def load_init(model):
            for p in _module(ns, model).get_parameters():
                if p.name in wm.values:
                    p.set_data(mindspore.Tensor(wm.values[p.name].astype(mindspore.dtype_to_nptype(p.dtype))))

        stage = "train"
        data = [[np.load(args["batches"])[f"b{i}_{j}"] for j in range(args["n_arrays"])] for i in range(args["n_train"])]
        evals = [[np.load(args["batches"])[f"e{i}_{j}"] for j in range(args["n_arrays"])] for i in range(args["n_eval"])]
        epochs = args["epochs"]
        want = args["torch"]
        trained64 = dict(np.load(work.parent / "trained64.npz")) if (work.parent / "trained64.npz").exists() else None
        model = build()
        load_init(model)
        losses: list = []
        ns["train"](model, data, losses, epochs)
        losses = [float(v) for v in losses]
        error = losses_differ(losses, want["losses"], want.get("losses64")) or train_stage.check(
            _module(ns, model), dict(np.load(work.parent / "trained.npz")), args["family"], "", "", trained64)
        if error:
            step("train", ok=False, error=error, losses=losses)
            return
        step("train", losses=losses)
        stage = "resume"
        ckpt = str(work / "checkpoint")
        fresh = build()
        load_init(fresh)
        first: list = []
        ns["train"](fresh, data, first, epochs, 1, 1, ckpt, None)
        resumed = build()
        rest: list = []
        ns["train"](resumed, data, rest, epochs, 2, epochs, None, ckpt)
        curve = [float(v) for v in first + rest]
        error = losses_differ(curve, want["resumed"], want.get("losses64")) or train_stage.check(
            _module(ns, resumed), dict(np.load(work.parent / "resumed.npz")), args["family"], "", "", trained64)
        if error:
            step("resume", ok=False, error=error, losses=curve)
            return
        step("resume")
        stage = "evaluate"
        got = [float(v) for v in ns["evaluate"](model, evals)]
        if len(got) != len(want["eval"]) or not np.allclose(got, want["eval"], rtol=EVAL_RTOL, atol=1e-5):
            step("evaluate", ok=False, error=f"evaluation gives {got}, torch {want['eval']}")
            return
        step("evaluate", values=got)
    except BaseException as exc:  # noqa: BLE001 - reported, not raised
        step(stage, ok=False, error=bm._error_line(exc), where=bm._where(exc, root))


def _child(kind: str, args: dict, timeout: int, site: Path) -> tuple[list[dict], str | None]:
    progress = Path(args["work"]) / f"{kind}{'-with-torch' * bool(args.get('allow_torch'))}-progress.jsonl"
    progress.unlink(missing_ok=True)
    args = dict(args, progress=str(progress))
    env = bm._env()
    env["PYTHONPATH"] = os.pathsep.join([str(bm.MSMAP_ROOT), str(site), env.get("PYTHONPATH", "")])
    env.setdefault("OMP_NUM_THREADS", "1")
    try:
        proc = subprocess.run([sys.executable, __file__, "--child", kind, json.dumps(args)], capture_output=True,
                              text=True, timeout=timeout, env=env, cwd=args["work"])
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] if proc.returncode else []
        crash = f"child exited {proc.returncode}: {tail[0] if tail else ''}" if proc.returncode else None
    except subprocess.TimeoutExpired:
        crash = f"timeout after {timeout}s"
    done = [json.loads(line) for line in progress.read_text().splitlines()] if progress.exists() else []
    return done, crash


# ----------------------------------------------------------------------------- one project
def run_project(project: dict, families: list[str], site: Path, keep: Path | None) -> list[dict]:
    import numpy as np

    work = Path(tempfile.mkdtemp(prefix=f"bench-projects-{project['name']}-", dir=keep))
    try:
        started = time.perf_counter()
        src = assemble(project, work / "torch-src")
        d = project["data"]
        train_b, eval_b = batches(project, 100, d["train_batches"]), batches(project, 900, d["eval_batches"])
        arrays = {f"b{i}_{j}": a for i, b in enumerate(train_b) for j, a in enumerate(b)}
        arrays |= {f"e{i}_{j}": a for i, b in enumerate(eval_b) for j, a in enumerate(b)}
        np.savez(work / "batches.npz", **arrays)
        args = {"work": str(work), "src": str(src), "batches": str(work / "batches.npz"), "epochs": d["epochs"],
                "n_train": d["train_batches"], "n_eval": d["eval_batches"], "n_arrays": len(d["batch"])}
        tdone, tcrash = _child("torch", args, TIMEOUT_TORCH, site)
        torch_side = tdone[0] if tdone else {"ok": False, "error": tcrash}
        if not families:  # --torch-only: the driver on torch alone
            print(project["name"], json.dumps({k: v for k, v in torch_side.items() if k != "params"})[:1500])
            return []
        rows = []
        for family in families:
            row = run_family(project, family, work, src, args, torch_side, site)
            row["steps"] = d["epochs"] * d["train_batches"]
            row["torch_float64"] = "ok" if "losses64" in torch_side and "twin" not in torch_side else \
                torch_side.get("float64")
            if "twin" in torch_side:
                row["twin"] = torch_side["twin"]
            row["seconds"] = round(time.perf_counter() - started, 1)
            rows.append(row)
        return rows
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)


def run_family(project: dict, family: str, work: Path, src: Path, args: dict, torch_side: dict,
               site: Path) -> dict:
    row = {"project": project["name"], "kind": project["kind"], "family": family, "stage": None, "ran_to": None,
           "error": None, "where": None, "markers": 0, "torch_refs": 0, "changed": 0, "left": [],
           "marker_reasons": []}
    fwork = work / family
    out = fwork / "out"
    fwork.mkdir(parents=True)
    failed: list[tuple[str, str, dict | None]] = []
    cmd = [sys.executable, "-m", "kb", "convert", str(src), "--out", str(out), "--device", "CPU",
           "--family", family, "--jobs", "1"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=bm.TIMEOUT_CONVERT, env=bm._env(),
                              cwd=bm.MSMAP_ROOT)
        if proc.returncode != 0:
            lines = (proc.stderr or proc.stdout).strip().splitlines()
            failed.append(("convert", f"msmap exited {proc.returncode}: {lines[-1] if lines else ''}", None))
    except subprocess.TimeoutExpired:
        failed.append(("convert", f"timeout after {bm.TIMEOUT_CONVERT}s", None))
    converted = out / src.name
    if not failed:
        for f in sorted(src.rglob("*.py")):
            rel = f.relative_to(src)
            target = converted / rel
            if not target.exists():
                failed.append(("convert", f"{rel} was not written", None))
                break
            text = target.read_text()
            row["changed"] += bm.changed_lines(f.read_text(), text)
            try:
                refs, markers = bm.torch_left(text)
            except SyntaxError as exc:
                failed.append(("parse", f"SyntaxError: {exc.msg}", {"file": str(rel), "line": exc.lineno,
                                                                     "code": (exc.text or "").strip()}))
                continue
            row["markers"] += len(markers)
            row["torch_refs"] += len(refs)
            lines = text.splitlines()
            row["left"] += [{"file": str(rel), "line": n, "what": what, "code": lines[n - 1].strip()[:200]}
                            for n, what in refs]
            row["marker_reasons"] += [{"file": str(rel), "line": n, "reason": r[:300]} for n, r in markers]
        if not failed and (row["torch_refs"] or row["markers"]):
            first = row["left"][0] if row["left"] else None
            what = f"{row['torch_refs']} torch references (first: {first['what']})" if first else ""
            mark = f"{row['markers']} markers" if row["markers"] else ""
            failed.append(("torch-left", ", ".join(x for x in (what, mark) if x),
                           {"file": first["file"], "line": first["line"], "code": first["code"]} if first else None))
    if not failed or failed[0][0] == "torch-left":
        if not torch_side.get("ok"):
            failed.append(("build", f"torch side failed: {torch_side.get('error')}", None))
        else:
            msargs = {**args, "work": str(fwork), "out": str(converted), "family": family,
                      "torch_params": torch_side["params"], "torch": torch_side}
            steps, crash = _child("ms", msargs, TIMEOUT_MS, site)
            bad = next((s for s in steps if not s["ok"]), None)
            if bad:
                failed.append((bad["stage"], bad["error"], bad.get("where") or None))
            elif len(steps) < len(RUN_STAGES):
                failed.append((RUN_STAGES[len(steps)], crash or "child stopped without a result", None))
            losses = next((s.get("losses") for s in steps if s.get("losses")), None)
            if losses:
                row["losses"] = losses
            if bad and bad["stage"] == "import" and "torch-free check" in bad["error"]:
                # diagnosis only, never a PASS: how far the converted code runs where torch can be imported
                wsteps, wcrash = _child("ms", {**msargs, "allow_torch": True}, TIMEOUT_MS, site)
                wbad = next((s for s in wsteps if not s["ok"]), None)
                row["with_torch"] = ({"stage": wbad["stage"], "error": wbad["error"], "where": wbad.get("where")}
                                     if wbad else {"stage": "PASS", "error": None, "where": None}
                                     if len(wsteps) == len(RUN_STAGES) else
                                     {"stage": RUN_STAGES[len(wsteps)], "error": wcrash, "where": None})
    row["torch_losses"] = torch_side.get("losses")
    if failed:
        row["stage"], row["error"], row["where"] = failed[0]
        last = [f for f in failed if f[0] != "torch-left"]
        row["stop"] = {"stage": last[0][0], "error": last[0][1], "where": last[0][2]} if last else None
    else:
        row["stage"], row["stop"] = "PASS", None
    row["ran_to"] = row["stop"]["stage"] if row["stop"] else "PASS"
    for item in (row["where"], (row["stop"] or {}).get("where"), (row.get("with_torch") or {}).get("where")):
        if item:
            bm._code_line(item, converted)
    return row


# ----------------------------------------------------------------------------- report
def rename(rows: list[dict]) -> list[dict]:
    """Rows with ``case`` (what bench_models' report helpers group by)."""
    return [{**r, "case": r["project"]} for r in rows]


def summary(rows: list[dict]) -> dict:
    s = bm.summary(rename(rows))
    s["stage"] = {k: v for k, v in sorted(s["stage"].items(), key=lambda kv: STAGES.index(kv[0]))}
    s["ran_to"] = {k: v for k, v in sorted(s["ran_to"].items(), key=lambda kv: STAGES.index(kv[0]))}
    s["by_kind"] = {}
    for r in rows:
        k = s["by_kind"].setdefault(r["kind"], {"projects": 0, "pass": 0})
        k["projects"] += 1
        k["pass"] += r["stage"] == "PASS"
    return s


def print_family(family: str, rows: list[dict]) -> None:
    print(f"\n=== family: {family}  (msmap convert --device CPU --family {family})")
    print(f"{'project':18} {'kind':22} {'stage':10} {'ran to':10} {'marks':>5} {'torch':>5} {'chg':>4}  first error")
    for r in rows:
        err = r["error"] or ""
        if r["stop"] and r["stage"] == "torch-left":
            err = f"{err} | stops: {r['stop']['stage']}: {r['stop']['error']}"
        print(f"{r['project']:18} {r['kind'][:22]:22} {r['stage']:10} {r['ran_to']:10} {r['markers']:5} "
              f"{r['torch_refs']:5} {r['changed']:4}  {err[:160]}")
    s = summary(rows)
    print(f"PASS {s['pass']}/{s['cases']}; first failing stage: "
          + ", ".join(f"{k} {v}" for k, v in s["stage"].items())
          + "; ran to: " + ", ".join(f"{k} {v}" for k, v in s["ran_to"].items()))
    print(f"\ntop causes ({family}): where each project stopped running")
    for c in bm.causes(rename(rows)):
        ex = c["example"]
        print(f"  {c['files']:3} projects  {c['cause']}")
        if ex:
            print(f"        e.g. {ex['case']}/{ex['file']}:{ex['line']}: {ex.get('code', '')}"[:220])
    diagnosed = [r for r in rows if r.get("with_torch")]
    if diagnosed:
        print(f"\ndiagnosis, not counted: the {len(diagnosed)} projects stopped by torch left, run with torch importable")
        for r in diagnosed:
            w = r["with_torch"]
            where = w.get("where") or {}
            print(f"  {r['project']:18} {w['stage']:9} {(w.get('error') or '')[:120]}"
                  + (f"  at {where.get('file')}:{where.get('line')}: {where.get('code', '')[:80]}" if where else ""))
    refs, marks = bm.leftovers(rename(rows))
    print(f"\ntorch references left ({family}), by projects")
    for g in refs:
        print(f"  {g['files']:3} projects {g['sites']:4} sites  {g['what'][:90]}   e.g. {g['example']['file']}:{g['example']['line']}")
    print(f"\nmarker reasons ({family}), by projects")
    for g in marks:
        print(f"  {g['files']:3} projects {g['sites']:4} sites  {g['what'][:140]}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--family", choices=("classic", "mint", "both"), default="both")
    parser.add_argument("--only", action="append", help="run only this project (repeatable)")
    parser.add_argument("--json", nargs="?", const="", help="write the results as JSON (default path: "
                        "benchmarks/results/projects-<date>.json)")
    parser.add_argument("--keep", help="keep the work folders under this folder")
    parser.add_argument("--msmap-root", help="convert with the msmap checkout at this path (default: this one)")
    parser.add_argument("--label", help="what was measured (e.g. the commit), written into the JSON")
    parser.add_argument("--fetch", action="store_true", help="only download the archives and the dependencies")
    parser.add_argument("--torch-only", action="store_true", help="run only the torch side (checks a driver)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.msmap_root:
        bm.MSMAP_ROOT = Path(args.msmap_root).resolve()
    if args.child:
        {"torch": child_torch, "ms": child_ms}[args.child[0]](json.loads(args.child[1]))
        return 0
    families = ["classic", "mint"] if args.family == "both" else [args.family]
    if args.torch_only:
        families = []
    projects = load_projects(args.only)
    site = site_dir(projects)
    for p in projects:
        fetch(p)
    if args.fetch:
        return 0
    keep = Path(args.keep) if args.keep else None
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
    bm.warm_db()
    started = time.perf_counter()
    rows = [row for p in projects for row in run_project(p, families, site, keep)]
    by_family = defaultdict(list)
    for r in rows:
        by_family[r["family"]].append(r)
    for family in families:
        print_family(family, by_family[family])
    print(f"\n{len(projects)} projects x {len(families)} families in {time.perf_counter() - started:.0f}s")
    if args.json is not None:
        path = Path(args.json) if args.json else RESULTS / f"projects-{datetime.date.today().isoformat()}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        report = {"date": datetime.date.today().isoformat(), "msmap": args.label or str(bm.MSMAP_ROOT),
                  "sources": {p["name"]: p["source"]["requirement"] for p in projects}, "families": {}}
        for family in families:
            fam = by_family[family]
            refs, marks = bm.leftovers(rename(fam))
            report["families"][family] = {
                "summary": summary(fam), "causes": bm.causes(rename(fam)),
                "causes_with_torch_importable": bm.causes(rename(fam), field="with_torch"), "torch_left": refs,
                "markers": marks,
                "rows": [{k: v for k, v in r.items() if k not in ("left", "marker_reasons")} for r in fam]}
        path.write_text(json.dumps(report, indent=1) + "\n")
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
