"""Rewrite probes (``msmap probe --rewrites``): the engine's own rewrite of each auto target,
executed next to torch.

For every KB target that the engine would rewrite automatically by its relation and parameter
map (the KB built without recorded probe verdicts), a call is generated from the torch
signature in four styles (``kb.probes.calls.STYLES``) plus the target's KB example. The
engine converts each snippet (``convert_cases``), and torch and the emitted code run in
isolated CPU subprocesses (``execute``). Every generated call is one a user could write:

- required arguments come from recipes keyed by parameter name (``kb.probes.generate``:
  ``dim=1``, ``kernel_size=3``; index tensors are int64, masks bool);
- a parameter whose default is ``None`` is left out (a user does not write ``dim=None``),
  unless torch refuses or warns without it (``F.softmax(x)``: implicit dim is deprecated;
  ``torch.clamp(x)``: min or max needed): then its recipe is passed (``dim=1``);
- torch-only parameters (``out``, ``device`` ...) are never passed, even where a recorded
  overload lists them as required;
- inputs fit the call: tensor parameters are annotated ``torch.Tensor`` (so the engine knows
  a method's receiver is a tensor), ``*1d/2d/3d`` functions get batched inputs of that rank,
  and an input whose torch output holds NaN (outside the function's domain) is replaced by
  the next input variant.

Executed results are cached per call (``kb.probes.calls.execute``'s cache, keyed by the
torch snippet, the emitted code, the inputs and the library versions): a re-run only
executes what the engine now emits differently. Per target:

- ``proven``   — at least one emitted rewrite ran and matched torch, and none differed;
- ``failed``   — an emitted rewrite differed (values, shape, dtype) or crashed in MindSpore;
- ``unprobed`` — no evidence, with why (no inputs could be generated, torch itself fails,
  the engine left every call for a human, no CPU kernel on this machine ...).

Rows go to data/probes/rewrites-mindspore-<version>-cpu.jsonl (``kind: rewrite``); the build
attaches them to the targets (``target["proof"]``) and turns a failed auto target off.
"""
from __future__ import annotations

import ast
import json
import re
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kb.probes.calls import (
    STYLES,
    Arg,
    Case,
    convert_cases,
    execute,
    render_call,
    snippet,
)
from kb.probes.generate import (
    CLASS_INPUT,
    INPUT_VARIANTS,
    LITERALS,
    SHAPES,
    SKIP_WORDS,
    TENSOR_PARAMS,
)
from kb.probes.recipes import recipe
from kb.probes.values import DIM_NAMES, alternatives, literal_value, value_class

NAMESPACES = ("torch", "torch.Tensor", "torch.nn", "torch.nn.functional", "torch.linalg", "torch.special", "torch.fft")
KINDS = ("function", "class", "method")
TORCH_ONLY = {"out", "device", "layout", "pin_memory", "requires_grad", "memory_format", "generator", "_stacklevel",
              "size_average", "reduce", "_random_samples", "dtype"}
NAMES = ("x", "y", "z", "u", "v", "w")
# Tensor parameters that are not the input's dtype: index tensors (valid for any dim of size >= 2) and masks.
TYPED_TENSORS = {"index": ("int64", [0, 1]), "indices": ("int64", [0, 1]), "mask": ("bool", [0, 1])}
TENSORS = TENSOR_PARAMS | set(TYPED_TENSORS) | {"tensor1", "tensor2", "anchor", "positive", "negative", "dividend",
                                                "abs", "angle"}
# Values passed for a parameter whose default is None when torch needs it (see _fills).
NONE_RECIPES = {"dim": 1, "min": -0.5, "max": 0.5, "scale_factor": 2.0, "k": 2, "size": [4], "num_classes": 3,
                "indexing": "ij"}
# Functions whose input must have a batch and this many spatial dimensions (their names do not say).
SPATIAL = {"unfold": "2d", "fold": "2d", "pixel_shuffle": "2d", "pixel_unshuffle": "2d", "PixelShuffle": "2d",
           "PixelUnshuffle": "2d", "Unfold": "2d", "channel_shuffle": "2d", "ChannelShuffle": "2d"}
# Not computations on tensor values (an address, a random in-place fill).
NOT_VALUES = ("data_ptr", "exponential_", "geometric_", "cauchy_", "log_normal_")
# Random ops: their outputs are compared on shapes and dtypes only (as bench_calls does).
SHAPE_ONLY = ("rand", "dropout", "empty", "normal", "bernoulli", "multinomial", "poisson", "uniform",
              "exponential_", "geometric_", "cauchy_", "log_normal_")
VALUE_WORDS = ("_like", "is_")  # deterministic computations generate.py's equivalence probes skip
# Names of deterministic tensor computations that hold a skip word (quantile: 'quant'; nn.Identity): probed.
COMPUTATION_WORDS = ("quantile", "Identity")
MAX_ALTERNATIVES = 2  # other values tried per parameter
MAX_VALUE_CASES = 10  # value cases per target
NOT_EMITTED = "not emitted for this family on any device"
DTYPE_KERNEL = "Unsupported data type"  # a CPU kernel exists, not for the generated inputs' dtype
RECORD_FIELDS = ("probe", "kind", "torch", "family", "ms_api", "ms_version", "torch_version", "device", "result",
                 "detail", "passed", "failed", "styles", "values", "value_failures", "combos")


class Unprobed(Exception):
    """No call could be generated for the record (the message says why)."""


@dataclass
class Plan:
    """The generated calls of one target."""

    torch: str
    family: str
    api: str
    cases: list[Case] = field(default_factory=list)
    why: str = ""  # set when nothing can be probed
    # the device the engine converts for: the one where it chooses this target (``_devices``)
    device: str = "Ascend"
    probe: str = ""  # the row's id: rewrite/<family>/<torch>, with @<api> for a family's later targets


def _literal(text: str | None) -> bool:
    try:
        ast.literal_eval(text or "")
    except (ValueError, SyntaxError):
        return False
    return True


def _skip_word(leaf: str) -> str | None:
    words = leaf
    for computation in COMPUTATION_WORDS:  # 'quant' is in quantile, a computation: it must not hide one
        words = words.replace(computation, "")
    found = next((w for w in SKIP_WORDS + NOT_VALUES if w in words and w not in SHAPE_ONLY + VALUE_WORDS), None)
    if leaf.startswith("_"):
        return "private name"
    if found:
        return f"random, stateful or not a computation ({found!r} in the name): outputs cannot be compared"
    return None


def _tensor_spec(name: str, variant: list) -> dict:
    shape, dtype, rng = variant
    dtype, rng = TYPED_TENSORS.get(name, (dtype, rng))
    return {"shape": SHAPES.get(name, shape), "dtype": dtype, "range": rng}


def build_args(params: list, variant: list, receiver: bool = False,
               fill: tuple[str, ...] = (), special: dict[str, Any] | None = None) -> tuple[list[Arg], dict[str, Any]]:
    """Arguments (and the tensor inputs they name) for a torch signature's parameter list;
    ``receiver``: a method's tensor ``x`` comes first; ``fill``: parameters defaulting to None
    that get their recipe (``NONE_RECIPES``) instead of being left out; ``special``: the API's own
    recipe (``kb.probes.recipes``: ``tensors`` and ``literals`` by parameter name)."""
    special = special or {}
    tensors, literals = special.get("tensors") or {}, special.get("literals") or {}
    sources = special.get("sources") or {}

    def spec(name: str) -> dict:
        return {**_tensor_spec(name, variant), **tensors.get(name, {})}

    args: list[Arg] = []
    inputs: dict[str, Any] = {"x": spec("input")} if receiver else {}
    gap = False  # a parameter was left out: later ones must be passed by keyword
    for name, kind, default in params:
        if kind == "VAR_KEYWORD":
            continue
        if name in TORCH_ONLY or name.startswith("_"):  # never passed, even where an overload requires it
            gap = True
            continue
        if default == "None":
            if name not in fill:  # a user leaves it out rather than write name=None
                gap = True
                continue
            args.append(Arg(name, repr(NONE_RECIPES[name]), kw_only=kind == "KEYWORD_ONLY" or gap,
                            pos_only=kind == "POSITIONAL_ONLY"))
            continue
        if kind == "VAR_POSITIONAL":
            args += [Arg(f"{name}{i}", v, pos_only=True) for i, v in enumerate(_star(name, variant, special, inputs))]
            gap = True
            continue
        if default is None:  # required
            if name in sources:
                value = sources[name]
            elif name in literals:
                value = repr(literals[name])
            elif name in TENSORS or name in tensors:
                var = NAMES[len(inputs)] if len(inputs) < len(NAMES) else f"t{len(inputs)}"
                inputs[var] = spec(name)
                value = var
            elif name == "tensors":
                first, second = (NAMES[len(inputs)], NAMES[len(inputs) + 1])
                inputs[first] = inputs[second] = _tensor_spec("input", variant)
                value = f"[{first}, {second}]"
            elif name in LITERALS:
                value = repr(LITERALS[name])
            else:
                raise Unprobed(f"no recipe for the required parameter {name!r}")
            args.append(Arg(name, value, kw_only=kind == "KEYWORD_ONLY" or gap, pos_only=kind == "POSITIONAL_ONLY"))
            continue
        if not _literal(default):
            gap = True
            continue
        args.append(Arg(name, default, kw_only=kind == "KEYWORD_ONLY" or gap, pos_only=kind == "POSITIONAL_ONLY",
                        default=True))
    return args, inputs


def _star(name: str, variant: list, special: dict[str, Any], inputs: dict[str, Any]) -> list[str]:
    """The values (source text) passed for ``*name``: the recipe's literals (``x.view(4, 6)``), its
    tensors (one spec or a list of them; ``torch.einsum(eq, *operands)``), two tensors of the input
    variant for ``*tensors``, else the name's recipe (``LITERALS``). Tensors are added to ``inputs``."""
    literals, tensors = special.get("literals") or {}, special.get("tensors") or {}
    if name in literals:
        value = literals[name]
        return [repr(v) for v in (value if isinstance(value, list) else [value])]
    if name in tensors or name == "tensors":
        base = _tensor_spec("input", variant)
        specs = tensors.get(name, {})
        specs = specs if isinstance(specs, list) else [specs, specs]
        out = []
        for spec in specs:
            var = NAMES[len(inputs)] if len(inputs) < len(NAMES) else f"t{len(inputs)}"
            inputs[var] = {**base, **spec}
            out.append(var)
        return out
    if name in LITERALS:
        value = LITERALS[name]
        return [repr(v) for v in (value if isinstance(value, list) else [value])]
    raise Unprobed(f"no recipe for *{name}")


def _suffix(leaf: str) -> str | None:
    """'1d'/'2d'/'3d' for APIs whose input needs a batch and that many spatial dimensions."""
    return SPATIAL.get(leaf) or next((s for s in ("1d", "2d", "3d") if leaf.endswith(s)), None)


def _class_inputs(leaf: str, torch_name: str = "") -> list[dict[str, Any]]:
    if recipe(torch_name).get("inputs"):
        return list(recipe(torch_name)["inputs"])
    if leaf.endswith("Loss"):
        return [{"x": {"shape": [3, 4], "range": [0.05, 0.95]}, "y": {"shape": [3, 4], "range": [0.0, 1.0]}}]
    shapes = [CLASS_INPUT[_suffix(leaf) or ""], [2, 3], [2, 3, 4], [2, 3, 6, 6]]
    return [{"x": {"shape": s}} for s in shapes]


# Floating inputs inside narrower value domains, tried before integer and bool inputs: a function defined on
# (-1, 1) (asin, atanh, erfinv), (0, 1) (logit) or above 1 (acosh) gets float inputs it is defined for rather than
# the first integer or bool input whose output holds no NaN (which MindSpore's kernels often do not take).
DOMAIN_VARIANTS = ([[2, 3, 4], "float32", [-0.9, 0.9]], [[2, 3, 4], "float32", [0.05, 0.95]],
                   [[2, 3, 4], "float32", [1.1, 3.0]])


def _variants(torch_name: str) -> list[list]:
    """Input variants for a function, the likeliest first."""
    leaf = torch_name.rsplit(".", 1)[-1]
    floats = [v for v in INPUT_VARIANTS if v[1] == "float32"]
    variants = floats + list(DOMAIN_VARIANTS) + [v for v in INPUT_VARIANTS if v[1] != "float32"]
    if torch_name.startswith("torch.linalg."):  # matrix functions: square matrices
        variants.insert(0, [[2, 3, 3], "float32", [-2.0, 2.0]])
    suffix = _suffix(leaf)
    if suffix:
        variants.insert(0, [CLASS_INPUT[suffix], "float32", [-2.0, 2.0]])
    return variants


def _torch_runs(source: str, inputs: dict[str, Any], layer: bool) -> tuple[str | None, str]:
    """(why the torch snippet is no probe, or None; a soft objection or '').

    Hard: it raises or gives different outputs twice. Soft (a better call may exist): torch
    warns that the call is deprecated or relies on an implicit choice, or its output holds NaN
    (inputs outside the function's domain)."""
    from kb.probes.outputs import compare, to_plain
    from kb.probes.sides import load_source, make_inputs, torch_output

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            first = to_plain(torch_output(load_source(source), layer, make_inputs(inputs, 0), 0)[0])
            second = to_plain(torch_output(load_source(source), layer, make_inputs(inputs, 0), 0)[0])
    except Exception as exc:
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}", ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NaN and complex outputs make numpy talk while comparing
        same = compare(first, second, 0, 0)[0]
    if not same:
        return "not deterministic", ""
    warned = next((str(w.message).splitlines()[0][:160] for w in caught
                   if re.search(r"deprecat|implicit", str(w.message), re.I)), "")
    if warned:
        return None, f"torch warns: {warned}"
    if _has_nan(first):
        return None, "torch's output holds NaN (inputs outside the function's domain)"
    return None, ""


def _has_nan(x: Any) -> bool:
    import numpy as np

    if isinstance(x, list):
        return any(_has_nan(v) for v in x)
    if isinstance(x, dict):
        return any(_has_nan(v) for v in x.values())
    a = np.asarray(x)
    return a.dtype.kind in "fc" and bool(np.isnan(a).any())


def _spelling(torch_name: str) -> str:
    for prefix, short in (("torch.nn.functional.", "F."), ("torch.nn.", "nn.")):
        if torch_name.startswith(prefix):
            return short + torch_name[len(prefix):]
    return torch_name


def _fills(params: list) -> list[tuple[str, ...]]:
    """Which None-defaulted parameters to pass: none first, then each one with a recipe alone."""
    return [()] + [(p[0],) for p in params if p[2] == "None" and p[0] in NONE_RECIPES and p[0] not in TORCH_ONLY]


def plan_calls(torch_name: str, kind: str, params: list, example: dict | None) -> tuple[list[Case], str]:
    """(cases, why nothing could be generated) for one torch API: the first input variant and
    choice of None-defaulted arguments that torch runs without objection (else with a soft one),
    in the four call styles, then that call with each literal parameter at other values torch
    accepts (``value_cases``). Random ops are compared on shapes and dtypes only. The API's recipe
    (``kb.probes.recipes``) may give the signature a user calls (``params``: ``torch.einsum(equation,
    *operands)`` is recorded as ``(*args)``), the kind of call (``kind``: ``torch.finfo(...)`` is a class
    but no layer) and an attribute read from the result (``then``: ``.eps``)."""
    leaf = torch_name.rsplit(".", 1)[-1]
    skip = _skip_word(leaf)
    special = recipe(torch_name)
    params = special.get("params", params)
    kind = special.get("kind", kind)
    then = special.get("then", "")
    layer = kind == "class"
    if skip:
        return [], skip
    compare = "shape" if any(w in leaf.lower() for w in SHAPE_ONLY) else "values"
    why = ""
    fallback: list[Case] = []
    cases: list[Case] = []
    chosen: tuple[list[Arg], dict[str, Any]] | None = None
    fallback_chosen: tuple[list[Arg], dict[str, Any]] | None = None
    variants = [INPUT_VARIANTS[0]] if layer else _variants(torch_name)
    func = "x." + leaf if kind == "method" else _spelling(torch_name)
    for variant in variants:
        for fill in _fills(params):
            try:
                args, inputs = build_args(params, variant, kind == "method", fill, special)
            except Unprobed as exc:
                why = str(exc)
                return _with_example([], torch_name, example, why)
            for ins in _class_inputs(leaf, torch_name) if layer else [inputs]:
                calls: dict[str, str] = {}
                for style in STYLES:
                    calls.setdefault(render_call(func, args, style, seed=3) + then, style)
                sources = {style: snippet(call, list(ins), layer, typed=True) for call, style in calls.items()}
                # each style torch runs (a recorded signature may call a keyword-only parameter positional)
                verdicts = {style: _torch_runs(src, ins, layer) for style, src in sources.items()}
                problem, soft = next((v for v in verdicts.values() if v[0] is None), next(iter(verdicts.values())))
                if problem is not None:
                    why = f"torch fails on the generated call: {problem}"
                    continue
                sources = {style: src for style, src in sources.items() if verdicts[style][0] is None}
                base = base_values(params, args, ins)
                made = [Case(id=f"{torch_name}/{style}", source=src, inputs=ins, layer=layer, compare=compare,
                             values=base) for style, src in sources.items()]
                if not soft:
                    cases, chosen = made, (args, ins)
                    break
                if not fallback:
                    fallback, fallback_chosen = made, (args, ins)
            if cases:
                break
        if cases:
            break
    if not cases and fallback:
        cases, chosen = fallback, fallback_chosen
    if chosen is not None:
        cases += value_cases(torch_name, func, params, chosen[0], chosen[1], layer, compare, then)
    return _with_example(cases, torch_name, example, why)


def _tensor_arg(arg: Arg, inputs: dict[str, Any]) -> bool:
    return arg.value in inputs or arg.value.startswith("[") and any(n in arg.value for n in inputs)


def _probed_params(params: list, args: list[Arg], inputs: dict[str, Any]) -> list[tuple[str, str, bool, Any]]:
    """(name, kind, passed in the base call, its value there or its default) of every parameter whose
    value a call writes as a literal: not a tensor, not torch-only, not ``*args``/``**kwargs``."""
    passed = {a.name: a for a in args}
    out = []
    for name, kind, default in params:
        if kind in ("VAR_POSITIONAL", "VAR_KEYWORD") or name in TORCH_ONLY or name.startswith("_"):
            continue
        arg = passed.get(name)
        if arg is not None:
            if _tensor_arg(arg, inputs):
                continue
            ok, value = literal_value(arg.value)
            if ok:
                out.append((name, kind, True, value))
            continue
        if name in TENSORS and default != "None":
            continue
        ok, value = literal_value(default) if default is not None else (False, None)
        if ok:
            out.append((name, kind, False, value))
    return out


def base_values(params: list, args: list[Arg], inputs: dict[str, Any]) -> dict[str, str]:
    """The class of every literal parameter's value in the base call (omitted ones at their default)."""
    return {name: value_class(value) for name, _, _, value in _probed_params(params, args, inputs)}


def value_cases(torch_name: str, func: str, params: list, args: list[Arg], inputs: dict[str, Any], layer: bool,
                compare: str, then: str = "") -> list[Case]:
    """The base call with one literal parameter at a time set to another value torch accepts
    (``kb.probes.values.alternatives``), written with keywords; values torch refuses, warns about or
    answers with NaN are not tried."""
    out: list[Case] = []
    base = base_values(params, args, inputs)
    # parameters defaulting to None that the base call passes (``size=[4]`` for interpolate): one of
    # them at a time (torch refuses size and scale_factor together)
    none_filled = {p[0] for p in params if p[2] == "None"} & {a.name for a in args}
    for name, kind, passed, value in _probed_params(params, args, inputs):
        if kind == "POSITIONAL_ONLY" and not passed:
            continue
        has_default = next((p[2] for p in params if p[0] == name), None) is not None
        if not has_default and name not in DIM_NAMES:  # a required size (in_features=3): any size is alike
            continue
        tried, seen = 0, {base.get(name)}
        for alt in alternatives(name, value, has_default or passed):
            if tried >= MAX_ALTERNATIVES or len(out) >= MAX_VALUE_CASES:
                break
            if value_class(alt) in seen:
                continue
            seen.add(value_class(alt))
            new = [Arg(a.name, repr(alt), a.kw_only, a.pos_only) if a.name == name else a for a in args]
            if not passed:  # a None-defaulted parameter given instead of the one the base call filled
                new = [a for a in new if a.name not in none_filled] + [Arg(name, repr(alt), kw_only=True)]
            source = snippet(render_call(func, new, "keyword") + then, list(inputs), layer, typed=True)
            problem, soft = _torch_runs(source, inputs, layer)
            if problem is not None or soft:
                continue
            tried += 1
            out.append(Case(id=f"{torch_name}/value:{name}={alt!r}", source=source, inputs=inputs, layer=layer,
                            compare=compare, values=dict(base, **{name: value_class(alt)}), varied=name))
    return out


def _with_example(cases: list[Case], torch_name: str, example: dict | None, why: str) -> tuple[list[Case], str]:
    ex = _example_case(torch_name, example)
    if ex is not None:
        if any(w in torch_name.rsplit(".", 1)[-1].lower() for w in SHAPE_ONLY):
            ex.compare = "shape"  # a random op's example: shapes and dtypes
        cases.append(ex)
    return cases, ("" if cases else why or "no call could be generated")


def _example_case(torch_name: str, example: dict | None) -> Case | None:
    """The KB example's torch side as a case, its free names given tensor inputs; None if torch fails."""
    text = (example or {}).get("torch") or ""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return None
    import builtins

    names = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
                   - {"torch", "nn", "F"} - set(dir(builtins)))
    body = tree.body
    leaf = (body.func.attr if isinstance(body.func, ast.Attribute) else getattr(body.func, "id", "")) \
        if isinstance(body, ast.Call) else ""
    if leaf[:1].isupper():  # a layer: built by the example, applied to generated inputs
        if names:
            return None
        for ins in _class_inputs(leaf):
            source = snippet(text, [], True)
            if _torch_runs(source, ins, True)[0] is None:
                return Case(id=f"{torch_name}/example", source=source, inputs=ins, layer=True)
        return None
    inputs: dict[str, Any] = {}
    for n in names:
        integer = re.search(r"idx|index|indices|label|target", n)
        inputs[n] = {"shape": [2, 3, 4], "dtype": "int64", "range": [0, 1]} if integer else {"shape": [2, 3, 4]}
    source = snippet(text, names, False, typed=True)
    if _torch_runs(source, inputs, False)[0] is not None:
        return None
    return Case(id=f"{torch_name}/example", source=source, inputs=inputs)


def candidates(db: Path) -> list[dict[str, Any]]:
    """Targets the engine would rewrite automatically by relation and parameters (``db`` is a KB
    built without probe verdicts), with the torch signature and kind."""
    import sqlite3

    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    torch_version = conn.execute("SELECT value FROM meta WHERE key='torch_version'").fetchone()
    rows = conn.execute(
        "SELECT t.torch, t.family, t.api, t.example, m.kind, m.namespace, a.params FROM targets t "
        "JOIN mappings m ON m.torch=t.torch LEFT JOIN apis a ON a.name=t.torch AND a.version=? "
        "WHERE t.auto=1 AND t.api IS NOT NULL ORDER BY t.torch, t.family, t.seq",
        (torch_version[0] if torch_version else "",)).fetchall()
    out = [{"torch": r["torch"], "family": r["family"], "api": r["api"], "kind": r["kind"],
            "namespace": r["namespace"], "params": json.loads(r["params"]) if r["params"] else None,
            "example": json.loads(r["example"]) if r["example"] else None} for r in rows]
    for c in out:
        if not c["params"] and c["kind"] == "function" and c["namespace"] == "torch":
            c["params"] = _sibling_params(conn, c["torch"], torch_version[0] if torch_version else "") or c["params"]
    conn.close()
    return out


def _sibling_params(conn: Any, torch_name: str, version: str) -> list | None:
    """A signature for ``torch.X`` recorded without parameters (a C builtin): ``torch.nn.functional.X``'s,
    else ``torch.Tensor.X``'s with the tensor first (``torch.relu`` is ``F.relu``, ``torch.masked_fill``
    is ``Tensor.masked_fill`` on ``input``)."""
    leaf = torch_name.rsplit(".", 1)[-1]
    for sibling, receiver in ((f"torch.nn.functional.{leaf}", False), (f"torch.Tensor.{leaf}", True)):
        row = conn.execute("SELECT params FROM apis WHERE name=? AND version=?", (sibling, version)).fetchone()
        params = json.loads(row[0]) if row and row[0] else []
        if params:
            return ([["input", "POSITIONAL_OR_KEYWORD", None]] if receiver else []) + params
    return None


def _unprobed_reason(c: dict[str, Any]) -> str | None:
    if c["namespace"] not in NAMESPACES:
        return f"not a tensor computation ({c['namespace']}): no generated call"
    if c["kind"] not in KINDS:
        return f"a {c['kind'] or 'name'}, not a call"
    if c["params"] is None:
        return "no recorded torch signature"
    return None


def verdict(cases: list[Case]) -> tuple[str, str, list[str], list[str]]:
    """(result, detail, styles passed, styles failed) from executed cases of one target: its call
    styles and example decide (a parameter at another value is recorded per value, ``proven_values``)."""
    cases = [c for c in cases if not c.varied]
    passed = [c.id.rsplit("/", 1)[1] for c in cases if c.result == "pass"]
    bad = [c for c in cases if c.result in ("wrong", "crash")]
    failed = [c.id.rsplit("/", 1)[1] for c in bad]
    if bad:
        first = bad[0]
        return "failed", f"{first.id.rsplit('/', 1)[1]} call: {first.result}: {first.detail}"[:400], passed, failed
    if passed:
        return "proven", f"{len(passed)} of {len(cases)} call styles ran and matched torch", passed, failed
    reasons = sorted({f"{c.result}: {c.detail}" for c in cases})
    return "unprobed", ("no executed rewrite: " + "; ".join(reasons))[:400], passed, failed


def run_rewrite_probes(data: Path, only: str | None = None, jobs: int = 2,
                       tick: Callable[[str], None] = lambda s: None,
                       cache: Path | None = None, chunk: int = 0,
                       on_rows: Callable[[list[dict[str, Any]]], None] = lambda rows: None,
                       names: set[str] | None = None) -> list[dict[str, Any]]:
    """Probe every auto target (or those whose torch name contains ``only``); one row per target.
    ``cache``: a folder of stored results (``kb.probes.resultcache``); calls whose emitted code
    is unchanged since they were executed are not run again. ``chunk``: probe this many torch
    names at a time and hand each chunk's rows to ``on_rows`` (a long run records as it goes)."""
    from kb.build import build
    from kb.check.run import installed_version
    from kb.probes.resultcache import ResultCache

    versions = {"mindspore": installed_version("mindspore"), "torch": installed_version("torch")}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="msmap-rewrites-") as tmp:
        db = Path(tmp) / "kb-without-verdicts.sqlite"
        build(data, db, verdicts=False)
        cands = [c for c in candidates(db)
                 if (not only or only in c["torch"]) and (names is None or c["torch"] in names)]
        tick(f"{len(cands)} auto targets")
        known = _no_kernel_rows(results_path(data / "probes", str(versions["mindspore"])), versions)
        # what no call probes first (instant), then the namespaces most code calls
        order = {ns: i for i, ns in enumerate(("torch.nn.functional", "torch.nn", "torch", "torch.Tensor"))}
        ranked = sorted(cands, key=lambda c: (_unprobed_reason(c) is None, order.get(c["namespace"], 9), c["torch"]))
        order_names = list(dict.fromkeys(c["torch"] for c in ranked))
        size = chunk if chunk > 0 else max(len(order_names), 1)
        store = ResultCache(cache) if cache is not None else None
        try:
            for n, start in enumerate(range(0, len(order_names), size)):
                group = set(order_names[start:start + size])
                part = _probe(Path(tmp) / f"chunk{n}", db, [c for c in cands if c["torch"] in group], jobs, store,
                              tick, versions, known)
                rows += part
                on_rows(part)
                tick(f"{start + len(group)} of {len(order_names)} torch names probed")
        finally:
            if store is not None:
                store.close()
    return rows


def probe_id(c: dict[str, Any], cands: list[dict[str, Any]]) -> str:
    """``rewrite/<family>/<torch>`` for a family's first target, ``...@<api>`` for a later one (``torch.einsum``:
    ``mindspore.ops.einsum``, and on CPU the ``mindspore.ops.matmul`` composition): one row per target."""
    first = next(o for o in cands if o["torch"] == c["torch"] and o["family"] == c["family"])
    base = f"rewrite/{c['family']}/{c['torch']}"
    return base if first["api"] == c["api"] else f"{base}@{c['api']}"


def _devices(db: Path, cands: list[dict[str, Any]]) -> dict[tuple[str, str, str], tuple[str, str]]:
    """(torch, family, api) -> (device, why not probed): each target is probed on a device where the engine
    chooses it (``choose_target``), so the code that runs is its own rewrite: Ascend, which takes a family's
    first target as it is, else CPU, where a later target stands in for one without a CPU kernel
    (``torch.einsum``'s matmul composition, ``nn.RMSNorm``'s rsqrt). A target that shares its torch name and
    family with another and that the engine emits on neither device is not probed."""
    from kb.analysis.settings import EngineSettings, choose_target
    from kb.query import KB

    count: dict[tuple[str, str], int] = {}
    for c in cands:
        count[(c["torch"], c["family"])] = count.get((c["torch"], c["family"]), 0) + 1
    kb = KB(db, results=False)  # as it is: KB.open would rebuild it, with verdicts, once data/ changes
    out: dict[tuple[str, str, str], tuple[str, str]] = {}
    for c in cands:
        record = kb.mapping(c["torch"]) or {}
        chosen = {device: choose_target(record, EngineSettings(family=c["family"], device=device))
                  for device in ("Ascend", "CPU")}
        apis = {device: choice.api if choice else None for device, choice in chosen.items()}
        device = next((d for d, api in apis.items() if api == c["api"]), None)
        if device:
            out[(c["torch"], c["family"], c["api"])] = (device, "")
        elif count[(c["torch"], c["family"])] > 1:
            out[(c["torch"], c["family"], c["api"])] = (
                "Ascend", f"{NOT_EMITTED}: the engine converts it to {apis['Ascend']} (on CPU {apis['CPU']})")
    return out


def _no_kernel_rows(path: Path, versions: dict[str, Any]) -> dict[tuple[str, str], str]:
    """(probe id, MindSpore API) -> detail of recorded rows of the same versions whose emitted
    rewrite met no CPU kernel: not run again (each such error costs a fresh MindSpore process); a kernel
    missing for the inputs' dtype only (``DTYPE_KERNEL``) is run again, as other inputs may have one. A row
    recorded for one target under another's id (before ``probe_id`` told a family's targets apart)
    matches no target."""
    out = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line) if line.strip() else {}
            if r.get("result") == "unprobed" and "no_cpu_kernel" in str(r.get("detail")) and \
                    DTYPE_KERNEL not in str(r.get("detail")) and \
                    r.get("ms_version") == versions["mindspore"] and r.get("torch_version") == versions["torch"]:
                out[(r["probe"], r["ms_api"])] = str(r["detail"])
    return out


def _probe(work: Path, db: Path, cands: list[dict[str, Any]], jobs: int, store: Any,
           tick: Callable[[str], None], versions: dict[str, Any],
           known: dict[tuple[str, str], str] | None = None) -> list[dict[str, Any]]:
    """Rows for ``cands``: one call per target, then its other call styles and example; then, for
    the targets those prove, the calls with one parameter at another value. ``known``: targets a
    recorded run found without a CPU kernel (not run again)."""
    plans: list[Plan] = []
    planned: dict[str, tuple[list[Case], str]] = {}
    devices = _devices(db, cands)
    for c in cands:
        plan = Plan(c["torch"], c["family"], c["api"])
        plan.probe = probe_id(c, cands)
        plan.device, plan.why = devices.get((c["torch"], c["family"], c["api"]), ("Ascend", ""))
        plan.why = plan.why or _unprobed_reason(c) or (known or {}).get((plan.probe, c["api"]), "")
        if not plan.why:
            if c["torch"] not in planned:
                planned[c["torch"]] = plan_calls(c["torch"], c["kind"], c["params"], c["example"])
            made, plan.why = planned[c["torch"]]
            plan.cases = [replace(k, values=dict(k.values)) for k in made]
        plans.append(plan)
    tick(f"{sum(bool(p.cases) for p in plans)} targets with generated calls")
    # one call per target first: a target without a CPU kernel (or that crashes) shows it on the first
    # call, and each such MindSpore error costs a fresh worker process
    firsts = {id(p): next(k for k in p.cases if not k.varied) for p in plans if p.cases}
    _run(list(firsts.values()), plans, work / "first", db, jobs, store, tick)
    going = [p for p in plans if p.cases and firsts[id(p)].result not in ("no_cpu_kernel", "torch_error", "timeout")]
    _run([k for p in going for k in p.cases if not k.varied and id(k) != id(firsts[id(p)])], going,
         work / "styles", db, jobs, store, tick)
    for p in plans:
        if p.cases and p not in going:  # the other styles would meet the same missing kernel or broken call
            p.cases = [firsts[id(p)]]
    proven = [p for p in going if verdict(p.cases)[0] == "proven"]
    _run([k for p in proven for k in p.cases if k.varied], proven, work / "values", db, jobs, store, tick)
    for p in plans:  # value cases of targets that were not proven did not run
        p.cases = [k for k in p.cases if not k.varied or p in proven]
    return [_row(p, versions) for p in plans]


def _run(cases: list[Case], plans: list[Plan], work: Path, db: Path, jobs: int, store: Any,
         tick: Callable[[str], None]) -> None:
    chosen = {id(k) for k in cases}
    for family in ("classic", "mint"):
        for device in ("Ascend", "CPU"):
            mine = [k for p in plans if p.family == family and p.device == device for k in p.cases
                    if id(k) in chosen]
            # the device where the engine takes the target (``_devices``): Ascend takes every first
            # target as it is (with CPU a mint op without a CPU kernel is replaced by another API, which
            # would prove something else); CPU takes a later one that stands in for it there
            if mine:
                convert_cases(mine, work / family / device, family, db, device=device)
    hits = store.hits if store is not None else 0
    execute(cases, jobs=jobs, cache=store)
    fresh = (store.hits - hits) if store is not None else 0
    left = sum(c.result == "left" for c in cases)  # the engine left them: nothing ran
    tick(f"{len(cases)} calls: {len(cases) - fresh - left} executed, {fresh} unchanged since a stored run"
         + (f", {left} left by the engine" if left else ""))


def _row(plan: Plan, versions: dict[str, Any]) -> dict[str, Any]:
    styles = {}
    for c in plan.cases:
        if not c.varied:
            styles[c.id.rsplit("/", 1)[1]] = {"result": c.result, "detail": c.detail[:300],
                                              "torch": _body(c.source), "emitted": _body(c.converted)}
    if plan.cases:
        result, detail, passed, failed = verdict(plan.cases)
    else:
        result, detail, passed, failed = "unprobed", plan.why, [], []
    values, value_failures = proven_values(plan.cases) if result == "proven" else ({}, [])
    return {"probe": plan.probe or f"rewrite/{plan.family}/{plan.torch}", "kind": "rewrite", "torch": plan.torch,
            "family": plan.family, "ms_api": plan.api, "ms_version": versions["mindspore"],
            "torch_version": versions["torch"], "device": "cpu", "result": result, "detail": detail,
            "passed": passed, "failed": failed, "styles": styles, "values": values,
            "value_failures": value_failures}


def proven_values(cases: list[Case]) -> tuple[dict[str, dict[str, list[str]]], list[str]]:
    """Per parameter, the classes of values whose emitted rewrite ran and matched torch (``proven``)
    and of those whose rewrite differed or crashed (``failed``); and one line per failed value.
    A value whose case did not run (no kernel, timeout, left for a human) is neither."""
    proven: dict[str, set[str]] = {}
    failed: dict[str, set[str]] = {}
    lines = []
    for c in cases:
        for name, cls in c.values.items():
            proven.setdefault(name, set())
            failed.setdefault(name, set())
            if c.result == "pass":
                proven[name].add(cls)
        if c.varied and c.result in ("wrong", "crash"):
            failed[c.varied].add(c.values[c.varied])
            lines.append(f"{c.id.split('/value:', 1)[1]}: {c.result}: {c.detail}"[:200])
    for name in failed:
        proven[name] -= failed[name]
    return ({name: {"proven": sorted(proven[name]), "failed": sorted(failed[name])} for name in sorted(proven)},
            lines)


def _body(source: str) -> str:
    return " / ".join(ln.strip() for ln in source.splitlines() if ln.startswith("    "))[:300]


def results_path(folder: Path, ms_version: str) -> Path:
    return folder / f"rewrites-mindspore-{ms_version}-cpu.jsonl"


RETRY = ("torch fails on the generated call", "no recipe", "no recorded torch signature", "no call could be generated")


def _retry_names(path: Path) -> set[str]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {r["torch"] for r in rows if r.get("result") == "unprobed" and str(r.get("detail")).startswith(RETRY)}


def _rest_names(path: Path) -> set[str]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {r["torch"] for r in rows if r.get("values") is None}


def main(argv: list[str] | None = None) -> int:
    """``python -m kb.probes.rewrites [--only TEXT] [--chunk N] [--jobs J]``: ``msmap probe --rewrites
    --record`` that records each chunk of torch names as it finishes (a long run keeps what it did)."""
    import argparse
    import sys

    from kb import paths
    from kb.check.run import installed_version
    from kb.probes import defs
    from kb.probes.resultcache import default_folder

    parser = argparse.ArgumentParser(prog="python -m kb.probes.rewrites")
    parser.add_argument("--only")
    parser.add_argument("--chunk", type=int, default=60)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--retry", action="store_true",
                        help="only the torch names whose recorded row found no call to run (torch failed on the "
                             "generated call, no recipe, no signature)")
    parser.add_argument("--names", help="only these torch names (comma-separated)")
    parser.add_argument("--rest", action="store_true",
                        help="only the torch names with a row recorded before values were probed")
    parser.add_argument("--callforms", action="store_true",
                        help="run the curated call forms (data/probes/callforms.yaml, kb.probes.callforms) and merge "
                             "them into the recorded rows (--names: only these form ids)")
    args = parser.parse_args(argv)
    if args.callforms:
        from kb.probes import callforms

        return callforms.main(jobs=min(max(args.jobs, 1), 2), only=set(args.names.split(",")) if args.names else None)
    data = paths.data_dir()
    path = results_path(data / "probes", str(installed_version("mindspore")))
    names = _retry_names(path) if args.retry else _rest_names(path) if args.rest else None
    if args.names:
        names = set(args.names.split(","))
    done: list[dict[str, Any]] = []

    def keep(rows: list[dict[str, Any]]) -> None:
        done.extend(rows)
        defs.record(rows, path, replace_all=False, fields=RECORD_FIELDS)

    def tick(text: str) -> None:
        sys.stderr.write(f"rewrites: {text}\n")
        sys.stderr.flush()

    run_rewrite_probes(data, only=args.only, jobs=min(max(args.jobs, 1), 2), chunk=args.chunk, on_rows=keep,
                       tick=tick, cache=default_folder(), names=names)
    if not args.only and names is None:  # a full run: rows of targets that are no longer candidates go
        defs.record(done, path, replace_all=True, fields=RECORD_FIELDS)
    sys.stderr.write(f"rewrites: recorded {len(done)} targets in {path}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
