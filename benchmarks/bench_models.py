"""Convert real model files with msmap and check, stage by stage, that they run on MindSpore CPU
and give torch's numbers.

    python benchmarks/bench_models.py [--family classic|mint|both] [--only NAME] [--json [PATH]]
                                      [--jobs N] [--msadapter] [--corpus heldout/BATCH] [--graph]

The cases are the folders of benchmarks/corpus/ (source files + case.json), or with
``--corpus heldout/BATCH`` the cases of benchmarks/heldout/BATCH.json, whose sources are the pinned
PyPI packages benchmarks/heldout/fetch.py extracts to $MSMAP_HELDOUT (only the files a case lists
are copied, under the package's own name; missing ``__init__.py`` files are empty).  For each case and
family the case is copied to a temporary package, converted with
``msmap convert --device CPU --family F --out``, and taken through these stages; a case's stage is
the first one that fails (PASS when none does):

  convert     msmap exits 0 and writes every file
  parse       every converted file parses
  torch-left  no torch/torchvision/timm import or reference and no ``# msmap:`` marker is left
  import      the converted module imports in a child process where importing torch fails
  init        the case's build code makes the model
  weights     the torch model's state (same seed; BatchNorm/LayerNorm/GroupNorm parameters and
              statistics and every constant-initialised tensor randomised first) maps onto the
              MindSpore parameters with kb.weights.map_weights, every parameter filled
  forward     the model runs in eval mode on the case's inputs on CPU
  mismatch    every output has torch's shape, dtype class and values (rtol 1e-4, atol 1e-5)
  graph       (``--graph``, reported beside the stages, never one of them) the same forward run
              again under ``mindspore.set_context(mode=mindspore.GRAPH_MODE)`` matches torch
  train       a case with a ``train`` entry: its own training code run for a few steps on both
              sides leaves torch's parameters and log numbers (benchmarks/train_stage.py)

A torch-left failure does not stop the run: the later stages still run (the converted code may
work with a marker left), and ``ran to`` tells how far it got.  A case stopped at import by torch
left behind is run once more with torch importable, as a diagnosis only (column ``w/torch``, never
a PASS): it shows what would stop the case next.  Every child process has a timeout;
a hang fails its stage.  The top failure causes are aggregated per family from the first error
line of the stage where each case stopped, each with an example file:line and converted line.
``--msadapter`` also runs each unconverted case under MSAdapter's stand-in torch (see
benchmarks/msadapter_side.py) and compares it with real torch.
"""
from __future__ import annotations

import argparse
import ast
import datetime
import difflib
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import train_stage

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "benchmarks" / "corpus"
RESULTS = ROOT / "benchmarks" / "results"
STAGES = ["convert", "parse", "torch-left", "import", "init", "weights", "forward", "mismatch", "train", "PASS"]
RUN_STAGES = ["import", "init", "weights", "forward", "mismatch", "train"]  # done in the MindSpore child
TORCH_ROOTS = {"torch", "torchvision", "timm"}
MARKER = "# msmap:"
RTOL, ATOL = 1e-4, 1e-5
TIMEOUT_CONVERT, TIMEOUT_TORCH, TIMEOUT_MS = 300, 240, 300


# ----------------------------------------------------------------------------- cases and inputs
def load_cases(only: list[str] | None = None, corpus: str = "corpus") -> list[dict]:
    cases = []
    if corpus.startswith("heldout/"):
        sys.path.insert(0, str(ROOT / "benchmarks" / "heldout"))
        import fetch

        for case in fetch.load_batch(corpus.split("/", 1)[1])["cases"]:
            src = case["source"]
            case["dir"] = str(fetch.source_dir(fetch.DEST, src["package"], src["version"]) / src["root"])
            case["package"], case["files"] = Path(src["root"]).name, src["paths"]
            if not Path(case["dir"]).is_dir():
                raise SystemExit(f"bench_models: {case['dir']} is missing: run benchmarks/heldout/fetch.py")
            if not only or case["name"] in only:
                cases.append(case)
    for meta in sorted(CORPUS.glob("*/case.json")) if corpus == "corpus" else ():
        case = json.loads(meta.read_text())
        case["dir"] = str(meta.parent)
        if not only or case["name"] in only:
            cases.append(case)
    missing = set(only or ()) - {c["name"] for c in cases}
    if missing:
        raise SystemExit(f"bench_models: no such case: {', '.join(sorted(missing))}")
    return cases


def make_inputs(specs: list[str], seed: int = 0) -> list:
    """'2,3,32,32' float32 normal; '2,16:int64:100' ints in [0, 100); '=12,9:int64' literal values."""
    import numpy as np

    rng = np.random.RandomState(seed)
    arrays = []
    for spec in specs:
        parts = spec.split(":")
        dtype = parts[1] if len(parts) > 1 else "float32"
        if parts[0].startswith("="):
            arrays.append(np.array([int(v) for v in parts[0][1:].split(",")], dtype=dtype))
            continue
        shape = tuple(int(v) for v in parts[0].split(","))
        if dtype.startswith("int"):
            arrays.append(rng.randint(0, int(parts[2]), size=shape).astype(dtype))
        else:
            arrays.append(rng.standard_normal(shape).astype(dtype))
    return arrays


def package_name(case: dict) -> str:
    return case.get("package") or "corpus_" + case["name"]


def module_path(args: dict) -> str:
    return f"{args['package']}.{args['module']}" if args["module"] else args["package"]


def copy_case(case: dict, parent: Path) -> Path:
    dst = parent / package_name(case)
    dst.mkdir(parents=True)
    for rel in case.get("files") or [f.name for f in Path(case["dir"]).glob("*.py")]:
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(case["dir"]) / rel, dst / rel)
    for folder in [dst, *(d for d in dst.rglob("*") if d.is_dir())]:
        if not (folder / "__init__.py").exists():
            (folder / "__init__.py").write_text("")
    return dst


# ----------------------------------------------------------------------------- static stages
def torch_left(text: str) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(torch references left as (line, what), marker lines as (line, reason text))."""
    markers = [(i, line.split(MARKER, 1)[1].strip()) for i, line in enumerate(text.splitlines(), 1)
               if MARKER in line]
    tree = ast.parse(text)
    bound: set[str] = {"torch", "torchvision", "timm"}
    refs: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in TORCH_ROOTS:
                    refs.append((node.lineno, f"import {a.name}"))
                    bound.add(a.asname or a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] in TORCH_ROOTS:
            refs.append((node.lineno, f"from {node.module} import ..."))
            bound |= {a.asname or a.name for a in node.names}
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)) and id(node) not in inner:
            base = node
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in bound:
                refs.append((node.lineno, ast.unparse(node)))
    return sorted(set(refs)), markers


def changed_lines(before: str, after: str) -> int:
    sm = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in sm.get_opcodes() if tag != "equal")


# ----------------------------------------------------------------------------- child processes
MSMAP_ROOT = ROOT  # the msmap checkout that converts (--msmap-root: e.g. an exported commit)
GRAPH = False  # --graph: also run the forward under GRAPH_MODE


def _env() -> dict:
    env = dict(os.environ)
    env.setdefault("GLOG_v", "3")  # MindSpore: errors only
    env["PYTHONPATH"] = str(MSMAP_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("MSMAP_DEBUG", None)
    if not env.get("MSMAP_DB"):
        digest = hashlib.sha1(str(MSMAP_ROOT).encode()).hexdigest()[:10]
        env["MSMAP_DB"] = str(Path(tempfile.gettempdir()) / "msmap-corpus" / f"kb-{digest}.sqlite")
    return env


def run_child(kind: str, args: dict, timeout: int) -> dict:
    """Run this file as a child (``--child kind``); it appends one JSON line per stage done."""
    progress = Path(args["work"]) / f"{kind}-{args.get('family', 'torch')}{'-with-torch' * bool(args.get('allow_torch'))}.jsonl"
    progress.unlink(missing_ok=True)
    args = dict(args, progress=str(progress))
    try:
        proc = subprocess.run([sys.executable, __file__, "--child", kind, json.dumps(args)],
                              capture_output=True, text=True, timeout=timeout, env=_env(), cwd=args["work"])
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] if proc.returncode else []
        crash = f"child exited {proc.returncode}: {tail[0] if tail else ''}" if proc.returncode else None
    except subprocess.TimeoutExpired:
        crash = f"timeout after {timeout}s"
    done = [json.loads(line) for line in progress.read_text().splitlines()] if progress.exists() else []
    return {"steps": done, "crash": crash}


def _block_torch() -> None:
    """In this process, importing torch, torchvision or timm raises ImportError."""
    import importlib.abc

    class NoTorch(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in TORCH_ROOTS:
                raise ImportError(f"import of {name} (torch-free check: torch is not available)")

    sys.meta_path.insert(0, NoTorch())


def _where(exc: BaseException, root: str) -> dict:
    """The deepest traceback frame inside the converted files: file, line and code."""
    import traceback

    found = {}
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename.startswith(root):
            found = {"file": os.path.relpath(frame.filename, root), "line": frame.lineno,
                     "code": (frame.line or "").strip()}
    if not found and isinstance(exc, SyntaxError) and exc.filename and exc.filename.startswith(root):
        found = {"file": os.path.relpath(exc.filename, root), "line": exc.lineno,
                 "code": (exc.text or "").strip()}
    return found


def _error_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return next((line for line in text.splitlines() if line.strip()), text)[:400]


def flatten(out, path: str = "out") -> list:
    """Outputs as [(path, array-like or None)], through tuples, lists and dicts."""
    if isinstance(out, (tuple, list)):
        return [x for i, o in enumerate(out) for x in flatten(o, f"{path}[{i}]")]
    if isinstance(out, dict):
        return [x for k in sorted(out) for x in flatten(out[k], f"{path}[{k!r}]")]
    return [(path, out)]


def _kind(dtype) -> str:
    return {"f": "float", "i": "int", "u": "int", "b": "bool", "c": "complex"}.get(dtype.kind, dtype.kind)


def compare(got: list, want: list, expected) -> tuple[str | None, float]:
    """(first difference or None, max abs difference) between flattened outputs and torch's.

    ``want`` is the torch side's [(path, key in ``expected`` or None)]; a value is compared after
    ``asnumpy()`` (MindSpore) or ``detach().numpy()`` (a torch-like tensor)."""
    import numpy as np

    if len(got) != len(want):
        return f"{len(got)} outputs, torch gives {len(want)}", 0.0
    worst = 0.0
    for (path, g), (_, key) in zip(got, want):
        if key is None or g is None:
            if (key is None) != (g is None):
                return f"{path}: {'None' if g is None else 'a value'}, torch gives {'None' if key is None else 'a value'}", worst
            continue
        t = expected[key]
        a = g.asnumpy() if hasattr(g, "asnumpy") else g.detach().cpu().numpy() if hasattr(g, "detach") \
            else np.asarray(g)
        if a.shape != t.shape:
            return f"{path}: shape {a.shape}, torch {t.shape}", worst
        if _kind(a.dtype) != _kind(t.dtype):
            return f"{path}: dtype {a.dtype}, torch {t.dtype}", worst
        if a.size:
            diff = float(np.max(np.abs(a.astype(np.float64) - t.astype(np.float64))))
            worst = max(worst, diff)
            if not np.allclose(a, t, rtol=RTOL, atol=ATOL, equal_nan=True):
                return f"{path}: values differ (max abs diff {diff:.3g})", worst
    return None, worst


def child_torch(args: dict) -> None:
    import numpy as np
    import torch

    log = open(args["progress"], "a")

    def step(stage, **kw):
        log.write(json.dumps({"stage": stage, **kw}) + "\n")
        log.flush()

    try:
        sys.path.insert(0, args["src"])
        ns = dict(vars(__import__(module_path(args), fromlist=["_"])))
        torch.manual_seed(0)
        exec(args["build"], ns)
        model = ns["model"]
        gen = torch.Generator().manual_seed(1)
        norms = (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d, torch.nn.BatchNorm3d, torch.nn.LayerNorm,
                 torch.nn.GroupNorm)
        norm_names = {f"{m_name}.{t_name}".lstrip(".") for m_name, m in model.named_modules()
                      if isinstance(m, norms) for t_name, _ in m.named_parameters(recurse=False)}
        norm_names |= {f"{m_name}.{t_name}".lstrip(".") for m_name, m in model.named_modules()
                       if isinstance(m, norms) for t_name, _ in m.named_buffers(recurse=False)}
        randomised = []
        with torch.no_grad():
            for name, t in list(model.named_parameters()) + list(model.named_buffers()):
                if not t.is_floating_point() or t.numel() == 0:
                    continue
                constant = t.numel() > 1 and bool((t == t.flatten()[0]).all()) or t.numel() == 1
                if name in norm_names or constant:
                    scale_like = "var" in name or "weight" in name or "gamma" in name or "scale" in name \
                        or bool((t == 1).all())
                    r = torch.rand(t.shape, generator=gen, dtype=t.dtype)
                    t.copy_(0.5 + r if scale_like else (r - 0.5) * 0.4)
                    randomised.append(name)
        model.eval()
        inputs = [torch.from_numpy(a) for a in np.load(args["inputs"]).values()]
        with torch.no_grad():
            out = model(*inputs)
        state = {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}
        np.savez(args["state"], **state)
        outs = flatten(out)
        np.savez(args["outputs"], **{f"o{i}": v.detach().cpu().numpy() for i, (_, v) in enumerate(outs)
                                     if v is not None and hasattr(v, "detach")})
        history = None
        if args.get("train"):
            start = {k: v.detach().clone() for k, v in model.state_dict().items()}
            rng = torch.get_rng_state()
            history = train_stage.run(ns, model, args, torch.from_numpy)
            np.savez(args["trained"], **{k: v.detach().cpu().numpy() for k, v in model.state_dict().items()})
            trained = {k: v.detach().clone() for k, v in model.state_dict().items()}
            model.load_state_dict(start)
            torch.set_rng_state(rng)  # the float64 twin draws what the float32 run drew
            trained64 = train_stage.run_float64(ns, model, args)
            model.load_state_dict(trained)
            if trained64 is not None:
                np.savez(args["trained"] + ".f64.npz", **trained64)
        step("torch", ok=True, params=[k for k, _ in model.named_parameters()], history=history,
             randomised=len(randomised),
             outputs=[[p, None if v is None else (f"o{i}" if hasattr(v, "detach") else repr(v))]
                      for i, (p, v) in enumerate(outs)])
    except BaseException as exc:  # noqa: BLE001 - reported, not raised
        step("torch", ok=False, error=_error_line(exc))


def child_ms(args: dict) -> None:
    if not args.get("allow_torch"):
        _block_torch()
    import numpy as np

    log = open(args["progress"], "a")
    root = os.path.join(args["out"], args["package"]) + os.sep

    def step(stage, ok=True, **kw):
        log.write(json.dumps({"stage": stage, "ok": ok, **kw}) + "\n")
        log.flush()

    stage = "import"
    try:
        sys.path.insert(0, args["out"])
        module = __import__(module_path(args), fromlist=["_"])
        step("import")
        stage = "init"
        import mindspore

        mindspore.set_context(device_target="CPU")
        mindspore.set_seed(0)
        ns = dict(vars(module))
        exec(args["build"], ns)
        net = ns["model"]
        step("init")
        stage = "weights"
        try:
            from kb.weights import map_weights
        except ImportError as exc:
            step("weights", ok=False, error=f"kb.weights not available ({exc})")
            return
        from kb.weights.convert import fill_buffers, ms_buffers_of

        torch_state = dict(np.load(args["state"]))
        params = {p.name: p for p in net.get_parameters()}
        buffers = ms_buffers_of(net)  # (torch's persistent buffers are in its state too: register_buffer)
        wm = map_weights(torch_state, {**buffers, **{n: (tuple(p.shape), str(p.dtype)) for n, p in params.items()}},
                         family=args["family"])
        fill_buffers(net, {n: v for n, v in wm.values.items() if n in buffers and n not in params})
        wm.unfilled_ms = [n for n in wm.unfilled_ms if n in params]  # (a buffer torch has not: its own value)
        problems = []
        for name, p in params.items():
            if name not in wm.values:
                continue
            value = wm.values[name]
            if tuple(value.shape) != tuple(p.shape):
                problems.append(f"{name}: torch gives {tuple(value.shape)}, MindSpore has {tuple(p.shape)}")
                continue
            p.set_data(mindspore.Tensor(value.astype(mindspore.dtype_to_nptype(p.dtype))))
        torch_params = set(args["torch_params"])
        lost = [k for k in wm.unused_torch if k in torch_params]
        if wm.unfilled_ms:
            problems.append(f"MindSpore parameters not filled: {', '.join(wm.unfilled_ms[:4])}"
                            f"{' ...' if len(wm.unfilled_ms) > 4 else ''} ({len(wm.unfilled_ms)})")
        if lost:
            problems.append(f"torch parameters not used: {', '.join(lost[:4])}"
                            f"{' ...' if len(lost) > 4 else ''} ({len(lost)})")
        problems += list(wm.conflicts)
        if problems:
            step("weights", ok=False, error="; ".join(problems)[:400])
            return
        step("weights", matched=len(wm.matched))
        stage = "forward"
        net.set_train(False)
        inputs = [mindspore.Tensor(a) for a in np.load(args["inputs"]).values()]
        out = net(*inputs)
        step("forward")
        stage = "mismatch"
        error, worst = compare(flatten(out), args["torch_outputs"], np.load(args["outputs"]))
        step("mismatch", ok=error is None, **({"error": error} if error else {"max_abs_diff": worst}))
        stage = "train"
        if not args.get("train"):
            step("train", skipped=True)
        if args.get("graph"):
            graph_forward(net, inputs, args, step)
        if error or not args.get("train"):
            return
        history = train_stage.run(ns, net, args, mindspore.Tensor)
        f64 = Path(args["trained"] + ".f64.npz")
        error = train_stage.check(net, dict(np.load(args["trained"])), args["family"], history,
                                  args["torch_history"], dict(np.load(f64)) if f64.exists() else None)
        step("train", ok=error is None, error=error)
    except BaseException as exc:  # noqa: BLE001 - reported, not raised
        step(stage, ok=False, error=_error_line(exc), where=_where(exc, root))


def graph_forward(net, inputs, args: dict, step) -> None:
    """The PyNative forward's net and inputs run again compiled (GRAPH_MODE), compared with torch."""
    import mindspore
    import numpy as np

    try:
        mindspore.set_context(mode=mindspore.GRAPH_MODE)
        out = net(*inputs)
        error, _ = compare(flatten(out), args["torch_outputs"], np.load(args["outputs"]))
        step("graph", ok=error is None, error=f"mismatch: {error}" if error else None)
    except BaseException as exc:  # noqa: BLE001 - reported, not raised
        step("graph", ok=False, error=_error_line(exc), where=_where(exc, os.path.join(args["out"], args["package"])))
    finally:
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)


# ----------------------------------------------------------------------------- one case
def run_torch_side(case: dict, work: Path) -> dict:
    src = work / "torch-src"
    copy_case(case, src)
    import numpy as np

    np.savez(work / "inputs.npz", *make_inputs(case["inputs"]))
    args = {"work": str(work), "src": str(src), "package": package_name(case), "module": case["module"],
            "build": case["build"], "inputs": str(work / "inputs.npz"), "state": str(work / "state.npz"),
            "outputs": str(work / "outputs.npz")}
    if case.get("train"):
        train_stage.save_batches(case, work / "batches.npz", make_inputs)
        args.update(train=case["train"]["code"], batches=str(work / "batches.npz"), trained=str(work / "trained.npz"))
    result = run_child("torch", args, TIMEOUT_TORCH)
    done = result["steps"][-1] if result["steps"] else {"ok": False, "error": result["crash"]}
    return {**done, "args": args}


def run_family(case: dict, family: str, work: Path, torch_side: dict) -> dict:
    row = {"case": case["name"], "family": family, "stage": None, "ran_to": None, "error": None,
           "where": None, "markers": 0, "torch_refs": 0, "changed": 0, "left": [], "marker_reasons": []}
    fwork = work / family
    src = copy_case(case, fwork / "src")
    out = fwork / "out"
    env = _env()
    cmd = [sys.executable, "-m", "kb", "convert", str(src), "--out", str(out), "--device", "CPU",
           "--family", family, "--jobs", "1"]
    failed: list[tuple[str, str, dict | None]] = []  # (stage, error, where)

    def fail(stage, error, where=None):
        failed.append((stage, error, where))

    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_CONVERT, env=env, cwd=MSMAP_ROOT)
        if proc.returncode != 0:
            lines = (proc.stderr or proc.stdout).strip().splitlines()
            fail("convert", f"msmap exited {proc.returncode}: {lines[-1] if lines else ''}")
    except subprocess.TimeoutExpired:
        fail("convert", f"timeout after {TIMEOUT_CONVERT}s")
    pkg_out = out / package_name(case)
    if not failed:
        for f in sorted(src.rglob("*.py")):
            name = str(f.relative_to(src))
            target = pkg_out / name
            if not target.exists():
                fail("convert", f"{name} was not written")
                break
            text = target.read_text()
            row["changed"] += changed_lines(f.read_text(), text)
            try:
                refs, markers = torch_left(text)
            except SyntaxError as exc:
                fail("parse", f"SyntaxError: {exc.msg}", {"file": name, "line": exc.lineno,
                                                           "code": (exc.text or "").strip()})
                continue
            row["markers"] += len(markers)
            row["torch_refs"] += len(refs)
            lines = text.splitlines()
            row["left"] += [{"file": name, "line": n, "what": what, "code": lines[n - 1].strip()[:200]}
                            for n, what in refs]
            row["marker_reasons"] += [{"file": name, "line": n, "reason": r[:300]} for n, r in markers]
        if not failed and (row["torch_refs"] or row["markers"]):
            first = row["left"][0] if row["left"] else None
            what = f"{row['torch_refs']} torch references (first: {first['what']})" if first else ""
            mark = f"{row['markers']} markers" if row["markers"] else ""
            fail("torch-left", ", ".join(x for x in (what, mark) if x),
                 {"file": first["file"], "line": first["line"], "code": first["code"]} if first else None)
    if not failed or failed[0][0] == "torch-left":
        if not torch_side.get("ok"):
            fail("weights", f"torch side failed: {torch_side.get('error')}")
        else:
            args = {**{k: v for k, v in torch_side["args"].items() if k != "src"}, "work": str(fwork),
                    "out": str(out), "family": family, "torch_params": torch_side["params"],
                    "torch_outputs": torch_side["outputs"], "torch_history": torch_side.get("history"),
                    "graph": GRAPH}
            result = run_child("ms", args, TIMEOUT_MS)
            graph = next((s for s in result["steps"] if s["stage"] == "graph"), None)
            if args.get("graph"):
                row["graph"] = {"stage": "PASS" if graph and graph["ok"] else "graph" if graph else "-",
                                "error": graph.get("error") if graph else None,
                                "where": (graph or {}).get("where") or None}
            steps = [s for s in result["steps"] if s["stage"] != "graph"]
            bad = next((s for s in steps if not s["ok"]), None)
            if bad:
                fail(bad["stage"], bad["error"], bad.get("where") or None)
            elif len(steps) < len(RUN_STAGES):
                fail(RUN_STAGES[len(steps)], result["crash"] or "child stopped without a result")
            matched = next((s for s in steps if s.get("max_abs_diff") is not None), None)
            if matched:
                row["max_abs_diff"] = matched["max_abs_diff"]
            if bad and bad["stage"] == "import" and "torch-free check" in bad["error"]:
                row["with_torch"] = diagnose_with_torch(args)
    if failed:
        row["stage"], row["error"], row["where"] = failed[0]
        last = [f for f in failed if f[0] != "torch-left"]
        row["stop"] = {"stage": last[0][0], "error": last[0][1], "where": last[0][2]} if last else None
    else:
        row["stage"] = "PASS"
        row["stop"] = None
    row["ran_to"] = row["stop"]["stage"] if row["stop"] else "PASS"
    if row["where"] and pkg_out.exists():
        _code_line(row["where"], pkg_out)
    for item in (row["stop"], row.get("with_torch")):
        if item and item["where"]:
            _code_line(item["where"], pkg_out)
    return row


def diagnose_with_torch(args: dict) -> dict:
    """Diagnosis only (never a PASS): how far the converted code runs when torch CAN be imported,
    i.e. what stops it once the torch references left are dealt with."""
    result = run_child("ms", {**args, "allow_torch": True, "graph": False}, TIMEOUT_MS)
    steps = result["steps"]
    bad = next((s for s in steps if not s["ok"]), None)
    if bad:
        return {"stage": bad["stage"], "error": bad["error"], "where": bad.get("where") or None}
    if len(steps) < len(RUN_STAGES):
        return {"stage": RUN_STAGES[len(steps)], "error": result["crash"] or "child stopped", "where": None}
    return {"stage": "PASS", "error": None, "where": None}


def _code_line(where: dict, pkg_out: Path) -> None:
    path = pkg_out / where["file"]
    if not where.get("code") and path.exists() and where.get("line"):
        lines = path.read_text().splitlines()
        if 0 < where["line"] <= len(lines):
            where["code"] = lines[where["line"] - 1].strip()
    if where.get("code"):
        where["code"] = where["code"][:240]


def run_case(case: dict, families: list[str], keep: Path | None = None, msadapter: bool = False) -> list[dict]:
    work = Path(tempfile.mkdtemp(prefix=f"bench-models-{case['name']}-", dir=keep))
    try:
        started = time.perf_counter()
        torch_side = run_torch_side(case, work)
        side = None
        if msadapter:
            from msadapter_side import run_case as run_msadapter

            side = run_msadapter(torch_side["args"], torch_side, work)
        rows = []
        for family in families:
            row = run_family(case, family, work, torch_side)
            row["randomised"] = torch_side.get("randomised")
            if side is not None:
                row["msadapter"] = side
            row["seconds"] = round(time.perf_counter() - started, 1)
            rows.append(row)
        return rows
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)


# ----------------------------------------------------------------------------- report
def normalise(error: str) -> str:
    """An error line made comparable across files: numbers and shapes become N."""
    text = re.sub(r"corpus_\w+", "<case>", error)
    text = re.sub(r"\(\d+(, \d+)*,?\)", "(shape)", text)
    text = re.sub(r"\b\d+(\.\d+)?(e-?\d+)?\b", "N", text)
    return text[:160]


def causes(rows: list[dict], top: int = 15, field: str = "stop") -> list[dict]:
    """Why cases stopped (``field``: "stop", or "with_torch" for the diagnosis run with torch
    importable), grouped by normalised error, most files first."""
    groups: dict[str, dict] = {}
    for row in rows:
        stop = row.get(field)
        if stop and stop.get("error"):
            key = f"{stop['stage']}: {normalise(stop['error'])}"
            g = groups.setdefault(key, {"cause": key, "files": set(), "example": None})
            g["files"].add(row["case"])
            if g["example"] is None and stop.get("where"):
                g["example"] = {"case": row["case"], **stop["where"]}
    out = sorted(groups.values(), key=lambda g: (-len(g["files"]), g["cause"]))[:top]
    return [{"cause": g["cause"], "files": len(g["files"]), "cases": sorted(g["files"]), "example": g["example"]}
            for g in out]


def leftovers(rows: list[dict], top: int = 15) -> tuple[list[dict], list[dict]]:
    """What is left in the converted files: torch references and marker reasons, by files."""
    refs: dict[str, dict] = {}
    marks: dict[str, dict] = {}
    for row in rows:
        for item in row["left"]:
            what = re.sub(r"\(.*", "(...)", item["what"])
            g = refs.setdefault(what, {"what": what, "files": set(), "sites": 0, "example": item})
            g["files"].add(row["case"])
            g["sites"] += 1
        for item in row["marker_reasons"]:
            for reason in item["reason"].split("; "):
                reason = normalise(re.sub(r" \(see: .*?\)", "", reason))
                g = marks.setdefault(reason, {"what": reason, "files": set(), "sites": 0,
                                              "example": {"case": row["case"], **item}})
                g["files"].add(row["case"])
                g["sites"] += 1

    def pack(groups):
        out = sorted(groups.values(), key=lambda g: (-len(g["files"]), -g["sites"], g["what"]))[:top]
        return [{"what": g["what"], "files": len(g["files"]), "sites": g["sites"], "example": g["example"]}
                for g in out]

    return pack(refs), pack(marks)


def summary(rows: list[dict]) -> dict:
    stages = Counter(r["stage"] for r in rows)
    ran = Counter(r["ran_to"] for r in rows)
    markers = [r["markers"] for r in rows if r["stage"] not in ("convert", "parse")]
    graph = [r["graph"]["stage"] for r in rows if r.get("graph")]
    return {"cases": len(rows), "pass": stages["PASS"],
            **({"graph_pass": graph.count("PASS")} if graph else {}),
            "stage": {s: stages[s] for s in STAGES if stages[s]},
            "ran_to": {s: ran[s] for s in STAGES if ran[s]},
            "median_markers_left": statistics.median(markers) if markers else None,
            "median_changed_lines": statistics.median([r["changed"] for r in rows]) if rows else None}


def print_family(family: str, rows: list[dict], msadapter: dict | None) -> None:
    print(f"\n=== family: {family}  (msmap convert --device CPU --family {family})")
    head = f"{'case':22} {'stage':10} {'ran to':10} {'marks':>5} {'torch':>5} {'chg':>4} {'w/torch':8}  first error"
    if msadapter:
        head = f"{'case':22} {'stage':10} {'ran to':10} {'marks':>5} {'torch':>5} {'chg':>4} {'msadapter':10} {'w/torch':8}  first error"
    print(head)
    for r in rows:
        err = (r["error"] or "")
        if r["stop"] and r["stage"] == "torch-left":
            err = f"{err} | stops: {r['stop']['stage']}: {r['stop']['error']}"
        ms = f" {msadapter.get(r['case'], {}).get('stage', '-'):10}" if msadapter else ""
        ms += f" {(r.get('with_torch') or {}).get('stage', '-'):8}"
        if GRAPH:
            ms += f" graph:{(r.get('graph') or {}).get('stage', '-'):5}"
        print(f"{r['case']:22} {r['stage']:10} {r['ran_to']:10} {r['markers']:5} {r['torch_refs']:5} "
              f"{r['changed']:4}{ms}  {err[:150]}")
    s = summary(rows)
    print(f"PASS {s['pass']}/{s['cases']}; first failing stage: "
          + ", ".join(f"{k} {v}" for k, v in s["stage"].items())
          + "; ran to: " + ", ".join(f"{k} {v}" for k, v in s["ran_to"].items())
          + f"; median markers left per file: {s['median_markers_left']}; "
          f"median changed lines: {s['median_changed_lines']}"
          + (f"; GRAPH_MODE PASS {s.get('graph_pass', 0)}/{s['cases']}" if GRAPH else ""))
    if GRAPH:
        why = Counter(f"{normalise(g['error'] or '')}" for r in rows if (g := r.get("graph")) and g["stage"] == "graph"
                      and r["stage"] == "PASS")
        for text, n in why.most_common(5):
            print(f"  GRAPH_MODE fails after a PyNative PASS, {n:3} files  {text}")
    if msadapter:
        passed = sum(1 for r in rows if msadapter.get(r["case"], {}).get("stage") == "PASS")
        print(f"MSAdapter (unconverted files under its stand-in torch): PASS {passed}/{len(rows)}")
        why = Counter(f"{m['stage']}: {m['error']}" for r in rows if (m := msadapter.get(r["case"])) and m["error"])
        for text, n in why.most_common(3):
            print(f"  {n:3} files  {text[:200]}")
    print(f"\ntop causes ({family}): where each case stopped running")
    for c in causes(rows):
        ex = c["example"]
        where = f"  e.g. {ex['case']}/{ex['file']}:{ex['line']}: {ex.get('code', '')}" if ex else ""
        print(f"  {c['files']:3} files  {c['cause']}\n{where[:220]}" if where else f"  {c['files']:3} files  {c['cause']}")
    diagnosed = [r for r in rows if r.get("with_torch")]
    if diagnosed:
        reach = Counter(r["with_torch"]["stage"] for r in diagnosed)
        print(f"\ndiagnosis, not counted: the {len(diagnosed)} cases stopped by torch left, run with torch "
              "importable: ran to " + ", ".join(f"{s} {reach[s]}" for s in STAGES if reach[s]))
        for c in causes(rows, field="with_torch"):
            ex = c["example"]
            print(f"  {c['files']:3} files  {c['cause']}")
            if ex:
                print(f"        e.g. {ex['case']}/{ex['file']}:{ex['line']}: {ex.get('code', '')}"[:220])
    refs, marks = leftovers(rows)
    print(f"\ntorch references left ({family}), by files")
    for g in refs:
        ex = g["example"]
        print(f"  {g['files']:3} files {g['sites']:4} sites  {g['what'][:90]}   e.g. {ex['file']}:{ex['line']}")
    print(f"\nmarker reasons ({family}), by files")
    for g in marks:
        print(f"  {g['files']:3} files {g['sites']:4} sites  {g['what'][:140]}")


def warm_db() -> None:
    """Build the knowledge base once before the cases run in parallel."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "empty.py").write_text("")
        env = _env()
        Path(env["MSMAP_DB"]).parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run([sys.executable, "-m", "kb", "convert", tmp, "--jobs", "1"], capture_output=True,
                              text=True, timeout=900, env=env, cwd=MSMAP_ROOT)
        if proc.returncode:
            lines = (proc.stderr or proc.stdout).strip().splitlines()
            raise SystemExit(f"bench_models: the knowledge base does not build: {lines[-1] if lines else ''}")


def run(cases: list[dict], families: list[str], jobs: int, keep: Path | None = None,
        msadapter: bool = False) -> list[dict]:
    warm_db()
    if msadapter:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from msadapter_side import ensure_venv

        problem = ensure_venv()
        if problem:
            print(f"bench_models: MSAdapter side skipped: {problem}", file=sys.stderr)
            msadapter = False
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        return [row for rows in pool.map(lambda c: run_case(c, families, keep, msadapter), cases) for row in rows]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--family", choices=("classic", "mint", "both"), default="both")
    parser.add_argument("--only", action="append", help="run only this case (repeatable)")
    parser.add_argument("--json", nargs="?", const="", help="write the results as JSON (default path: "
                        "benchmarks/results/models-<date>.json)")
    parser.add_argument("--jobs", type=int, default=1, help="cases run at once (default 1)")
    parser.add_argument("--keep", help="keep the work folders under this folder")
    parser.add_argument("--msadapter", action="store_true", help="also run the cases under MSAdapter")
    parser.add_argument("--msmap-root", help="convert with the msmap checkout at this path (default: this one)")
    parser.add_argument("--label", help="what was measured (e.g. the commit), written into the JSON")
    parser.add_argument("--corpus", default="corpus", help="corpus (default) or heldout/BATCH "
                        "(benchmarks/heldout/BATCH.json; sources from benchmarks/heldout/fetch.py)")
    parser.add_argument("--graph", action="store_true", help="also run each forward under GRAPH_MODE")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    global MSMAP_ROOT, GRAPH
    GRAPH = args.graph
    if args.msmap_root:
        MSMAP_ROOT = Path(args.msmap_root).resolve()
    if args.child:
        {"torch": child_torch, "ms": child_ms}[args.child[0]](json.loads(args.child[1]))
        return 0
    families = ["classic", "mint"] if args.family == "both" else [args.family]
    cases = load_cases(args.only, args.corpus)
    keep = Path(args.keep) if args.keep else None
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    rows = run(cases, families, args.jobs, keep, args.msadapter)
    msadapter = {r["case"]: r["msadapter"] for r in rows if "msadapter" in r} or None
    by_family = defaultdict(list)
    for r in rows:
        by_family[r["family"]].append(r)
    for family in families:
        print_family(family, by_family[family], msadapter)
    print(f"\n{len(cases)} cases x {len(families)} families in {time.perf_counter() - started:.0f}s")
    if args.json is not None:
        path = Path(args.json) if args.json else RESULTS / f"models-{datetime.date.today().isoformat()}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        report = {"date": datetime.date.today().isoformat(), "msmap": args.label or str(MSMAP_ROOT),
                  "corpus": args.corpus, "graph": GRAPH,
                  "rtol": RTOL, "atol": ATOL, "families": {}}
        for family in families:
            fam_rows = by_family[family]
            refs, marks = leftovers(fam_rows)
            report["families"][family] = {
                "summary": summary(fam_rows), "causes": causes(fam_rows),
                "causes_with_torch_importable": causes(fam_rows, field="with_torch"), "torch_left": refs,
                "markers": marks,
                "rows": [{k: v for k, v in r.items() if k not in ("left", "marker_reasons")} for r in fam_rows]}
        path.write_text(json.dumps(report, indent=1) + "\n")
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
