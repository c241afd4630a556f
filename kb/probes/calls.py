"""Single torch calls in four styles, converted by the engine and run next to torch.

Shared by ``benchmarks/bench_calls.py`` (hand-written calls) and ``kb.probes.rewrites``
(calls generated from KB records):

- ``Arg`` / ``render_call`` — one call written all positional, all keyword, keywords
  shuffled, or with arguments at their default value omitted;
- ``snippet``       — a tiny torch file defining ``run(*inputs)`` (a call) or ``make()`` (a layer);
- ``convert_cases`` — the real converter (``kb.analysis.project.convert_files``, as
  ``msmap convert`` uses it) on every snippet;
- ``execute``       — torch and the converted code in isolated subprocesses
  (``kb.probes.sides`` through ``kb.probes.runner``), outputs compared on values, shapes
  and dtypes (int32 vs int64 is a difference).
"""
from __future__ import annotations

import io
import json
import pickle
import random
import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STYLES = ("positional", "keyword", "shuffled", "defaults")
IMPORTS = (("torch.", "import torch"), ("nn.", "import torch.nn as nn"), ("F.", "import torch.nn.functional as F"))
MARKER = "# msmap:"
TORCH_LEFT = re.compile(r"^\s*(?:import torch|from torch)|\btorch\.", re.M)


def torch_left(code: str) -> bool:
    """Whether converted code still imports or names torch outside its strings (a helper's docstring
    saying which torch API it stands for is not a reference)."""
    try:
        return any(t.type == tokenize.NAME and t.string == "torch"
                   for t in tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return bool(TORCH_LEFT.search(code))


@dataclass(frozen=True)
class Arg:
    """One argument: ``name=value`` (value is source text); keyword-only / positional-only;
    ``default``: the value is the parameter's default (dropped in the ``defaults`` style)."""

    name: str
    value: str
    kw_only: bool = False
    pos_only: bool = False
    default: bool = False

    @classmethod
    def parse(cls, text: str) -> Arg:
        """``'*dtype=torch.float32~'``: ``*`` keyword-only, ``/`` positional-only, ``~`` at its default."""
        text = text.strip()
        kw_only, pos_only = text.startswith("*"), text.startswith("/")
        text = text.lstrip("*/")
        default = text.endswith("~")
        name, _, value = text.rstrip("~").partition("=")
        if not value:
            raise ValueError(f"argument {text!r}: expected name=value")
        return cls(name.strip(), value.strip(), kw_only, pos_only, default)


def render_call(func: str, args: list[Arg], style: str, seed: int = 0) -> str:
    """``func(...)`` with ``args`` written in ``style`` (one of STYLES)."""
    if style not in STYLES:
        raise ValueError(f"unknown call style {style!r}")
    parts: list[str] = []
    if style == "positional":
        parts = [a.value for a in args if not a.kw_only] + [f"{a.name}={a.value}" for a in args if a.kw_only]
    elif style in ("keyword", "shuffled"):
        fixed = [a.value for a in args if a.pos_only]
        named = [a for a in args if not a.pos_only]
        if style == "shuffled" and len(named) > 1:
            order = list(named)
            shuffler = random.Random(seed)
            while order == named:
                shuffler.shuffle(order)
            named = order
        parts = fixed + [f"{a.name}={a.value}" for a in named]
    else:
        gap = False
        for a in args:
            if a.default and not a.pos_only:
                gap = True
                continue
            parts.append(f"{a.name}={a.value}" if (gap or a.kw_only) and not a.pos_only else a.value)
    return f"{func}({', '.join(parts)})"


def snippet(expression: str, inputs: list[str], layer: bool, setup: str = "", typed: bool = False) -> str:
    """A torch file: ``make()`` returns the layer, or ``run(*inputs)`` returns the call's value.

    It imports only what the code uses (``torch``, ``nn``, ``F``), as a tidy file would.
    ``typed``: the inputs are annotated ``torch.Tensor`` (``run(x: torch.Tensor)``), as typed
    code says, so the engine knows a method's receiver is a tensor."""
    params = ", ".join(f"{n}: torch.Tensor" if typed else n for n in inputs)
    code = expression + "\n" + setup + "\n" + params
    header = "".join(line + "\n" for prefix, line in IMPORTS if re.search(r"(?<![\w.])" + re.escape(prefix), code))
    header += "\n\n"
    body = "".join(f"    {line}\n" for line in setup.splitlines() if line.strip())
    if layer:
        return f"{header}def make():\n{body}    return {expression}\n"
    return f"{header}def run({params}):\n{body}    return {expression}\n"


@dataclass
class Case:
    """One snippet to convert and run; ``compare``: ``values`` or ``shape`` (random ops)."""

    id: str
    source: str
    inputs: dict[str, Any]
    layer: bool = False
    compare: str = "values"
    seed: int = 0
    rtol: float = 1e-4
    atol: float = 1e-5
    # rewrite probes: the class (``kb.probes.values.value_class``) of each literal parameter's value in
    # this call, and the parameter this case varies from the base call ("" for a call style / example)
    values: dict[str, str] = field(default_factory=dict)
    varied: str = ""
    # filled by convert_cases / execute
    stem: str = ""  # the files' common path: <stem>.torch.py, <stem>.ms.py, <stem>.<side>.pkl
    converted: str = ""
    left: list[tuple[str, int, str]] = field(default_factory=list)
    result: str = ""  # pass, wrong, crash, no_cpu_kernel, timeout, weights, torch_error, left
    detail: str = ""

    @property
    def automatic(self) -> bool:
        """Converted with no marker and no torch reference left."""
        return bool(self.converted) and not self.left and MARKER not in self.converted and \
            not torch_left(self.converted)

    def why_left(self) -> str:
        if self.left:
            return "; ".join(dict.fromkeys(reason for _, _, reason in self.left))
        if not self.converted:
            return "converter failed on the snippet"
        return "torch reference left without a marker"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:120]


def convert_cases(cases: list[Case], workdir: Path, family: str, db: Any, device: str = "CPU",
                  jobs: int = 1) -> None:
    """Write each snippet and convert it with the engine ``msmap convert`` uses (fills converted/left)."""
    from kb.analysis.project import convert_files
    from kb.analysis.settings import EngineSettings

    workdir.mkdir(parents=True, exist_ok=True)
    files = []
    for i, case in enumerate(cases):
        case.stem = str(workdir / f"c{i:05d}_{_safe(case.id)}")
        path = Path(f"{case.stem}.torch.py")
        path.write_text(case.source, encoding="utf-8")
        files.append(path)
    # a str from the callers' loops, not the Literal: EngineSettings raises on any but classic/mint
    settings = EngineSettings(family=family, device=device)  # type: ignore[arg-type]
    for case, result in zip(cases, convert_files(files, db, settings, jobs=jobs), strict=True):
        if result.error:
            case.converted, case.left = "", [("", 0, result.error)]
            continue
        new = result.converted if result.changed else result.original
        case.converted = new.decode("utf-8") if new else ""
        case.left = list(result.left)


def _torch_key(case: Case) -> str:
    return json.dumps([case.source, case.inputs, case.layer, case.seed], sort_keys=True)


def _torch_jobs(cases: list[Case]) -> tuple[list[dict], dict[str, str]]:
    """One torch job per distinct snippet and inputs (families share them); key -> torch stem."""
    jobs: list[dict] = []
    stems: dict[str, str] = {}
    for case in cases:
        key = _torch_key(case)
        if key in stems:
            continue
        stems[key] = case.stem
        jobs.append({"id": str(len(jobs)), "side": "torch", "file": f"{case.stem}.torch.py",
                     "entry": "make" if case.layer else "run", "inputs": case.inputs, "seed": case.seed,
                     "state": f"{case.stem}.state.pkl", "out": f"{case.stem}.torch.pkl", "key": key})
    return jobs, stems


def _ms_job(i: int, case: Case, torch_stem: str) -> dict:
    Path(f"{case.stem}.ms.py").write_text(case.converted, encoding="utf-8")
    return {"id": str(i), "side": "mindspore", "file": f"{case.stem}.ms.py", "entry": "make" if case.layer else "run",
            "inputs": case.inputs, "seed": case.seed, "state": f"{torch_stem}.state.pkl",
            "out": f"{case.stem}.mindspore.pkl", "torch_out": f"{torch_stem}.torch.pkl"}


def _kind_of(detail: str) -> str:
    if "dtype" in detail:
        return "dtype"
    if "shape" in detail or "outputs (torch)" in detail or " vs " in detail and "(torch)" in detail:
        return "shape"
    return "values"


def execute(cases: list[Case], jobs: int = 2, only_automatic: bool = True,
            tick: Callable[[dict], None] = lambda r: None, cache: Any = None) -> None:
    """Run torch and the converted code of each case; set ``result``/``detail``.

    Results: pass; wrong (detail names values/shape/dtype); crash (MindSpore raised);
    no_cpu_kernel; timeout; weights (the torch state could not be copied, so nothing was
    compared); torch_error (the snippet itself is broken); left (not converted, not run).
    ``cache`` (a ``kb.probes.resultcache.ResultCache``): cases whose result is stored for the
    same snippet, emitted code and environment are not run again; new settled results are stored.
    """
    run = [c for c in cases if c.automatic or not only_automatic]
    for c in cases:
        if c not in run:
            c.result, c.detail = "left", c.why_left()
    if cache is not None:
        stored = {id(c): cache.get(c) for c in run}
        for c in run:
            if stored[id(c)] is not None:
                c.result, c.detail = stored[id(c)]
        run = [c for c in run if stored[id(c)] is None]
    if run:
        _run_sides(run, jobs, tick)
    if cache is not None:
        cache.put(run)


def _run_sides(run: list[Case], jobs: int, tick: Callable[[dict], None]) -> None:
    from kb.probes.outputs import compare
    from kb.probes.runner import run_probes

    torch_jobs, stems = _torch_jobs(run)
    got = {j["key"]: r for r in run_probes(torch_jobs, jobs=jobs, batch_size=60, on_result=tick,
                                           worker="kb.probes.sides")
           for j in [torch_jobs[int(r["probe"])]]}
    ms_cases: list[Case] = []
    ms_jobs: list[dict] = []
    for case in run:
        r = got.get(_torch_key(case)) or {"result": "timeout", "detail": "no result"}
        if r["result"] != "ok":
            case.result = "torch_error" if r["result"] == "error" else r["result"]
            case.detail = r.get("detail", "")
            continue
        ms_jobs.append(_ms_job(len(ms_jobs), case, stems[_torch_key(case)]))
        ms_cases.append(case)
    ms_got = {r["probe"]: r for r in run_probes(ms_jobs, jobs=jobs, batch_size=30, on_result=tick,
                                                worker="kb.probes.sides")}
    for job, case in zip(ms_jobs, ms_cases, strict=True):
        r = ms_got.get(job["id"]) or {"result": "timeout", "detail": "no result"}
        if r["result"] != "ok":
            case.result = "crash" if r["result"] == "error" else r["result"]
            case.detail = r.get("detail", "")
            continue
        with open(job["torch_out"], "rb") as handle:
            t = pickle.load(handle)
        with open(job["out"], "rb") as handle:
            m = pickle.load(handle)
        if case.compare == "shape":
            t, m = _shapes(t), _shapes(m)
        same, detail, _ = compare(t, m, case.rtol, case.atol)
        case.result, case.detail = ("pass", "") if same else ("wrong", f"{_kind_of(detail)}: {detail}")


def _shapes(x: Any) -> Any:
    """Shapes and dtypes only (outputs of random ops)."""
    import numpy as np

    if isinstance(x, list):
        return [_shapes(v) for v in x]
    if isinstance(x, dict):
        return {k: _shapes(v) for k, v in x.items()}
    a = np.asarray(x)
    return np.zeros(a.shape, dtype=a.dtype) if a.dtype.kind in "biufc" else x
