"""Generate numerical-equivalence probes from the knowledge base (``msmap probe --generate``).

Candidates are the KB's targets whose torch API is a function or class, plus the
name-aligned pairs the installed libraries offer (``torch.X`` ~ ``mindspore.mint.X`` and
``mindspore.ops.X``; ``torch.nn[.functional].X`` ~ ``mindspore.mint.nn[.functional].X``).
Inputs come from a small table of argument recipes keyed by parameter name; a
candidate is kept only when its torch side runs deterministically on the recipe
inputs (torch runs here, in-process; MindSpore only ever runs in the probe workers).
"""
from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import yaml

TENSOR_PARAMS = {"input", "x", "other", "tensor", "self", "a", "b", "input1", "input2", "x1", "x2", "y", "end",
                 "exponent", "target", "mat", "mat1", "mat2", "vec", "vec1", "vec2", "batch1", "batch2", "A", "B",
                 "elements", "test_elements", "condition", "index", "src", "values", "weight", "var", "label"}
SHAPES = {"mat1": [2, 3], "mat2": [3, 4], "mat": [2, 3], "vec": [3], "vec1": [2], "vec2": [3],
          "batch1": [2, 2, 3], "batch2": [2, 3, 4]}
LITERALS = {"dim": 1, "axis": 1, "dims": [1, 0], "k": 2, "repeats": 2, "chunks": 2, "sections": 2, "diagonal": 1,
            "split_size_or_sections": 1, "split_size": 1, "size": [2, 3], "shape": [3, 2], "sizes": [2, 3],
            "in_features": 3, "out_features": 4, "in_channels": 3, "out_channels": 4, "kernel_size": 3,
            "num_features": 3, "normalized_shape": [3], "num_groups": 1, "num_channels": 3, "embedding_dim": 4,
            "num_embeddings": 10, "output_size": 2, "scale_factor": 2, "upscale_factor": 1, "start_dim": 0,
            "end_dim": -1, "dim0": 0, "dim1": 1, "source": 0, "destination": 1, "pad": [1, 1], "n": 3, "p": 2,
            "value": 2.0, "fill_value": 2.0, "padding": 1, "input_size": 3, "hidden_size": 4, "divisor": 1.5,
            "indices_or_sections": 2, "window_length": 5, "start": 0, "length": 2, "steps": 5, "threshold": 0.5,
            "shifts": 1, "axis0": 0, "axis1": 1, "norm_type": 2.0, "maxnorm": 1.0, "downscale_factor": 2,
            "row": 3, "col": 3, "unflattened_size": [2, 2], "dimension": 1, "step": 1, "q": 0.25, "num_samples": 2,
            "n_fft": 4, "high": 5}
INPUT_VARIANTS = ([[2, 3, 4], "float32", [-2.0, 2.0]], [[3, 3], "float32", [-2.0, 2.0]],
                  [[2, 3, 4], "float32", [0.5, 2.0]], [[3, 3], "float32", [0.5, 2.0]],
                  [[2, 3, 4], "int64", [0, 5]], [[2, 3, 4], "bool", [0, 1]])
CLASS_INPUT = {"1d": [2, 3, 8], "2d": [2, 3, 6, 6], "3d": [1, 3, 4, 4, 4], "": [2, 4, 3]}
SKIP_WORDS = ("rand", "dropout", "empty", "normal", "bernoulli", "multinomial", "poisson", "seed", "uniform",
              "numpy", "save", "load", "compile", "grad", "device", "cuda", "storage", "set_", "get_", "is_",
              "use_", "_like", "from_", "manual", "Module", "Sequential", "ModuleList", "ModuleDict",
              "Parameter", "Identity", "fake", "quant", "sparse", "nested", "export", "vmap", "checkpoint")


def _skip(name: str) -> bool:
    leaf = name.rsplit(".", 1)[-1]
    return leaf.startswith("_") or leaf.endswith("_") or any(w in leaf for w in SKIP_WORDS)


def name_aligned(live_ms: set[str]) -> list[tuple[str, str, str]]:
    """(torch, ms_api, family) for installed names that line up."""
    import torch

    pairs = []
    spaces = [("torch", "mindspore.mint", "mint"), ("torch", "mindspore.ops", "classic"),
              ("torch.nn.functional", "mindspore.mint.nn.functional", "mint"),
              ("torch.nn.functional", "mindspore.ops", "classic"), ("torch.nn", "mindspore.mint.nn", "mint"),
              ("torch.nn", "mindspore.nn", "classic"), ("torch.linalg", "mindspore.mint.linalg", "mint"),
              ("torch.special", "mindspore.mint.special", "mint")]
    for tmod, mmod, fam in spaces:
        module = eval(tmod, {"torch": torch})  # our own fixed module names
        for leaf in dir(module):
            if f"{mmod}.{leaf}" in live_ms and not _skip(leaf):
                pairs.append((f"{tmod}.{leaf}", f"{mmod}.{leaf}", fam))
    return pairs


def kb_targets(data: Path) -> list[tuple[str, str, str, list]]:
    from kb.query import KB

    kb = KB.open(data=data)
    rows = kb.conn.execute("SELECT t.torch, t.api, t.family, t.params, m.kind FROM targets t JOIN mappings m "
                           "ON m.torch=t.torch WHERE t.api IS NOT NULL AND t.relation NOT IN "
                           "('composite', 'context_change', 'no_equivalent')").fetchall()
    import json

    return [(r[0], r[1], r[2], json.loads(r[3] or "[]")) for r in rows
            if (r[4] in (None, "function", "class")) and not _skip(r[0])]


def _required(obj: Any) -> list[str] | None:
    from kb.introspect.describe import describe

    kind = "class" if inspect.isclass(obj) else "function"
    params = describe(obj, kind)["params"]
    if not params and describe(obj, kind)["sig_source"] == "none":
        return None
    out = []
    for name, pkind, default in params:
        if pkind in ("VAR_POSITIONAL", "VAR_KEYWORD", "KEYWORD_ONLY") or default is not None:
            continue
        out.append(name)
    return out


def _spec(name: str, variant: list) -> Any:
    shape, dtype, rng = variant
    if name in TENSOR_PARAMS:
        return {"tensor": SHAPES.get(name, shape), "dtype": dtype, "range": rng}
    if name == "tensors":
        return {"tensors": [{"tensor": shape, "dtype": dtype, "range": rng}] * 2}
    if name in LITERALS:
        return LITERALS[name]
    raise KeyError(name)


def _torch_run(probe: dict) -> Any:
    import sys

    from kb.probes import worker

    sys.modules.setdefault("kb.probes.worker", worker)
    return worker._side("torch", probe)


def _deterministic(probe: dict) -> bool:
    from kb.probes.outputs import compare

    try:
        first = _torch_run(probe)
        second = _torch_run(probe)
    except Exception:
        return False
    return compare(first, second, 0, 0)[0]


def make_probe(torch_name: str, ms_api: str, family: str, params: list) -> dict | None:
    from kb.check.live import MISSING, resolve

    obj, _ = resolve(torch_name)
    if obj is MISSING or not callable(obj):
        return None
    req = _required(obj)
    if req is None:
        return None
    if any(p.get("torch") in req and p.get("kind") in ("unsupported", "transformed", "dropped") for p in params):
        return None  # an argument we would pass needs a human: its value changes meaning or has no home
    base = {"id": f"gen/{torch_name}/{ms_api}", "torch": torch_name, "ms_api": ms_api, "family": family,
            "kind": "equivalence", "expect": "same"}
    if inspect.isclass(obj):
        leaf = torch_name.rsplit(".", 1)[-1]
        suffix = next((s for s in ("1d", "2d", "3d") if leaf.endswith(s)), "")
        try:
            init = [LITERALS[n] for n in req]
        except KeyError:
            return None
        probe = dict(base, init={"args": init}, inputs=[{"tensor": CLASS_INPUT[suffix], "dtype": "float32",
                                                          "range": [-2.0, 2.0]}])
        return probe if _deterministic(probe) else None
    for variant in INPUT_VARIANTS:
        try:
            inputs = [_spec(n, variant) for n in req]
        except KeyError:
            return None
        if not inputs:
            return None  # nothing tensor-shaped to compare on
        probe = dict(base, inputs=inputs)
        if _deterministic(probe):
            return probe
    return None


def generate(data: Path) -> list[dict]:
    from kb.check.run import introspect

    cands: dict[tuple[str, str], tuple[str, list]] = {}
    try:
        targets = kb_targets(data)
    except Exception as exc:  # a half-edited data/ must not stop probing the aligned pairs
        import sys

        sys.stderr.write(f"msmap probe: KB targets unavailable ({exc}); using name-aligned pairs only\n")
        targets = []
    for torch_name, api, fam, params in targets:
        cands.setdefault((torch_name, api), (fam, params))
    ms_names = sorted({api for _, api in cands} | _ms_namespace_names())
    _, live = introspect("mindspore", ms_names)
    present = {n for n, e in live.items() if e.get("exists")}
    for torch_name, api, fam in name_aligned(present):
        cands.setdefault((torch_name, api), (fam, []))
    probes = []
    for (torch_name, api), (fam, params) in sorted(cands.items()):
        if api in present:
            p = make_probe(torch_name, api, fam, params)
            if p:
                probes.append(p)
    return probes


def _ms_namespace_names() -> set[str]:
    """Every torch leaf name, guessed under each aligned MindSpore namespace (checked live)."""
    import torch

    out: set[str] = set()
    for tmod, mmods in (("torch", ("mindspore.mint", "mindspore.ops")),
                        ("torch.nn.functional", ("mindspore.mint.nn.functional", "mindspore.ops")),
                        ("torch.nn", ("mindspore.mint.nn", "mindspore.nn")),
                        ("torch.linalg", ("mindspore.mint.linalg",)),
                        ("torch.special", ("mindspore.mint.special",))):
        module = eval(tmod, {"torch": torch})
        for leaf in dir(module):
            if not _skip(leaf):
                out.update(f"{m}.{leaf}" for m in mmods)
    return out


def write_generated(data: Path, folder: Path) -> int:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        probes = generate(data)
    folder.mkdir(parents=True, exist_ok=True)
    header = ("# Generated by `msmap probe --generate` from the knowledge base and the installed torch:\n"
              "# numerical-equivalence probes. Do not edit; hand-written probes live in caveats.yaml.\n")
    dumper = type("NoAliases", (yaml.SafeDumper,), {"ignore_aliases": lambda self, data: True})
    text = yaml.dump({"probes": probes}, Dumper=dumper, sort_keys=False, default_flow_style=None, width=120)
    (folder / "generated.yaml").write_text(header + text, encoding="utf-8")
    return len(probes)
