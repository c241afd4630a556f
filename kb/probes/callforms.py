"""Curated call forms as rewrite proofs (``python -m kb.probes.rewrites --callforms``).

Generated rewrite probes (``kb.probes.rewrites``) call a target with recipe values; a user writes
other forms (``F.elu(x, alpha=2.0)``, ``torch.roll(x, shifts=(1, -1), dims=(0, 1))``, a
``torch.autocast`` turned off). ``data/probes/callforms.yaml`` lists such forms: ``id``, ``torch``
(the torch API the form proves), ``expr`` (the expression as written), ``inputs`` (name -> shape or
spec), ``layer``, optional ``setup`` (statements before the ``return``), ``compare`` and ``typed`` (the inputs
annotated ``torch.Tensor``, as the generated probes write them: a tensor method's receiver is then known to be a
tensor, so the engine applies its rewrite instead of leaving a guess).

Each form is converted per family at device CPU with the KB built without recorded verdicts (the
rewrite the engine emits once proven, as the generated probes do), torch and the emitted code run
next to each other (``kb.probes.calls.execute``, result cache), and the outcome is merged into the
recorded row of the target the engine chooses there (``merge``): each literal argument's value class
becomes proven (passed) or failed (wrong, crash); an ``unprobed`` or absent row whose forms all
passed becomes ``proven``. A ``failed`` row stays failed.
"""
from __future__ import annotations

import ast
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kb.probes.calls import Case, convert_cases, execute, snippet
from kb.probes.values import DIM_NAMES, combo_key, literal_value, value_class

FAMILIES = ("classic", "mint")
ALIASES = {"F": "torch.nn.functional", "nn": "torch.nn", "torch": "torch"}
BAD = ("wrong", "crash")
PROMOTED = "curated call forms ran and matched torch"


@dataclass
class Form:
    """One curated call form (an entry of ``data/probes/callforms.yaml``)."""

    id: str
    torch: str
    expr: str
    inputs: dict[str, Any] = field(default_factory=dict)
    layer: bool = False
    setup: str = ""
    compare: str = "values"
    typed: bool = False


@dataclass
class Outcome:
    """A form run for one family: the target the engine chose, the result and the literal values."""

    form: str
    torch: str
    family: str
    api: str
    result: str
    detail: str
    values: dict[str, str]  # param -> value class of each literal argument


def load(path: Path) -> list[Form]:
    import yaml

    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    forms = []
    for e in entries:
        unknown = set(e) - {"id", "torch", "expr", "inputs", "layer", "setup", "compare", "typed"}
        if unknown:
            raise ValueError(f"call form {e.get('id')!r}: unknown keys {sorted(unknown)}")
        forms.append(Form(id=str(e["id"]), torch=str(e["torch"]), expr=str(e["expr"]), inputs=e.get("inputs") or {},
                          layer=bool(e.get("layer", False)), setup=str(e.get("setup") or ""),
                          compare=str(e.get("compare") or "values"), typed=bool(e.get("typed", False))))
    ids = [f.id for f in forms]
    if len(ids) != len(set(ids)):
        raise ValueError("call forms: duplicate ids")
    return forms


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def target_call(form: Form) -> tuple[ast.Call, bool] | None:
    """The call of ``form.torch`` in the form's code and whether it is a method call (receiver not an argument):
    a call spelt with torch's own aliases (``F.``, ``nn.``, ``torch.``), else a method of that leaf name."""
    tree = ast.parse(form.setup + "\n" + form.expr)
    leaf = form.torch.rsplit(".", 1)[-1]
    method = None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        if name:
            head, _, rest = name.partition(".")
            if head in ALIASES and f"{ALIASES[head]}.{rest}".replace("torch.torch.", "torch.") == form.torch:
                return node, False
        if method is None and isinstance(node.func, ast.Attribute) and node.func.attr == leaf \
                and form.torch.startswith("torch.Tensor."):
            method = node
    return (method, True) if method is not None else None


def literal_values(form: Form, signature_text: str | None) -> dict[str, str]:
    """{param: value class} of the target call's literal arguments, bound as the engine's value gate binds
    them (``kb.analysis.rewrite.value_blocker``: positionals by the torch signature's order; required sizes
    skipped)."""
    from kb.analysis.transforms import parse_signature

    found = target_call(form)
    if found is None:
        return {}
    call, _ = found
    signature = parse_signature(signature_text)
    order = signature.positional if signature is not None else []
    required = {p.name for p in signature.parameters if p.default is None} - DIM_NAMES if signature else set()
    named: list[tuple[str, ast.expr]] = []
    positional = [a for a in call.args if not isinstance(a, ast.Starred)]
    if len(positional) == len(call.args):
        named += [(order[i], a) for i, a in enumerate(positional) if i < len(order)]
    named += [(k.arg, k.value) for k in call.keywords if k.arg is not None]
    out = {}
    for param, node in named:
        ok, value = literal_value(ast.unparse(node))
        if ok and param not in required:
            out[param] = value_class(value)
    return out


def merge(rows: dict[str, dict[str, Any]], outcomes: list[Outcome], versions: dict[str, Any]) -> list[dict[str, Any]]:
    """Fold ``outcomes`` into ``rows`` (probe id -> recorded row; changed in place, new rows added) and return
    the rows touched. Per target (torch, family, api): a literal's class joins ``proven`` when its form passed,
    ``failed`` (with a ``value_failures`` line) when it differed or crashed. A parameter the generated probe did
    not vary is added only to a row these forms make proven (elsewhere the gate does not check it, and
    recording it would block its other values). An ``unprobed`` or absent row becomes ``proven`` when at least
    one form passed and none failed; a ``failed`` row is never made proven."""
    by_target: dict[tuple[str, str, str], list[Outcome]] = {}
    for o in outcomes:
        if o.api:
            by_target.setdefault((o.torch, o.family, o.api), []).append(o)
    touched = []
    for (torch, family, api), mine in sorted(by_target.items()):
        row = next((r for r in rows.values() if (r.get("torch"), r.get("family"), r.get("ms_api"))
                    == (torch, family, api)), None)
        if row is None:
            first = any(r.get("torch") == torch and r.get("family") == family for r in rows.values())
            probe = f"rewrite/{family}/{torch}" + (f"@{api}" if first else "")
            row = {"probe": probe, "kind": "rewrite", "torch": torch, "family": family, "ms_api": api,
                   "ms_version": versions["mindspore"], "torch_version": versions["torch"], "device": "cpu",
                   "result": "unprobed", "detail": "no rewrite probe recorded", "passed": [], "failed": [],
                   "styles": {}, "values": {}, "value_failures": []}
            rows[probe] = row
        passed = sorted({o.form for o in mine if o.result == "pass"})
        bad = [o for o in mine if o.result in BAD]
        was = row.get("result")
        # made proven by an earlier run of these forms: re-derived from this run
        ours = was == "proven" and PROMOTED in str(row.get("detail") or "")
        promote = (was in ("unprobed", None) or ours) and bool(passed) and not bad
        values = row.get("values") or {}
        failures = list(row.get("value_failures") or [])
        for o in [o for o in mine if o.result == "pass"]:
            for param, cls in o.values.items():
                if param in values or promote:
                    entry = values.setdefault(param, {"proven": [], "failed": []})
                    entry["proven"] = sorted({*entry["proven"], cls})
        for o in bad:
            # the values no passing call proved are the suspects; when every one was proven, the combination is
            blamed = {p: c for p, c in o.values.items() if c not in (values.get(p) or {}).get("proven", [])} \
                or dict(o.values)
            for param, cls in blamed.items():
                if param in values or promote:
                    entry = values.setdefault(param, {"proven": [], "failed": []})
                    entry["failed"] = sorted({*entry["failed"], cls})
            written = ", ".join(f"{p}={c}" for p, c in o.values.items()) or "no literal"
            line = f"callform {o.form} ({written}): {o.result}: {o.detail}"[:200]
            if line not in failures:
                failures.append(line)
        for entry in values.values():  # a class some call found different is not proven (as proven_values)
            entry["proven"] = [c for c in entry["proven"] if c not in entry["failed"]]
        row["values"], row["value_failures"] = values, failures
        # the literal values of each passing form together: a call that writes the same ones is proven even where
        # one of them failed in another combination (argmin keepdim=True differs only without a dim)
        combos = {combo_key(o.values) for o in mine if o.result == "pass" and o.values}
        if combos or row.get("combos"):
            row["combos"] = sorted(set(row.get("combos") or []) | combos)
        note = f"curated call forms (data/probes/callforms.yaml) passed: {', '.join(passed) or 'none'}" + (
            f"; differed or crashed: {', '.join(sorted({o.form for o in bad}))}" if bad else "")
        if promote:
            row["result"] = "proven"
            row["detail"] = f"{len(passed)} {PROMOTED} ({note})"[:400]
            row["passed"] = sorted(set(row.get("passed") or []) | {f"callform:{f}" for f in passed})
        elif ours and bad:
            row["result"] = "failed"
            row["detail"] = f"curated call form {bad[0].form}: {bad[0].result}: {bad[0].detail} ({note})"[:400]
        else:
            base = str(row.get("detail") or "").split(" [curated call forms", 1)[0]
            row["detail"] = f"{base} [{note}]"[:600]
        touched.append(row)
    return touched


def _cases(forms: list[Form], family: str) -> list[Case]:
    return [Case(id=f"{family}/{f.id}", source=snippet(f.expr, list(f.inputs), f.layer, setup=f.setup, typed=f.typed),
                 inputs=f.inputs, layer=f.layer, compare=f.compare) for f in forms]


def run_callforms(data: Path, forms: list[Form], jobs: int = 2, cache: Path | None = None,
                  tick: Callable[[str], None] = lambda s: None) -> list[Outcome]:
    """Each form converted per family (CPU, KB without verdicts) and run next to torch."""
    from kb.analysis.settings import EngineSettings, choose_target
    from kb.build import build
    from kb.probes.resultcache import ResultCache
    from kb.query import KB

    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="msmap-callforms-") as tmp:
        db = Path(tmp) / "kb-without-verdicts.sqlite"
        build(data, db, verdicts=False)
        kb = KB(db, results=False)
        store = ResultCache(cache) if cache is not None else None
        try:
            cases: list[tuple[Form, str, Case]] = []
            for family in FAMILIES:
                batch = _cases(forms, family)
                convert_cases(batch, Path(tmp) / family, family, db, device="CPU")
                cases += [(f, family, c) for f, c in zip(forms, batch, strict=True)]
            tick(f"{len(cases)} calls converted")
            execute([c for _, _, c in cases], jobs=jobs, cache=store)
        finally:
            if store is not None:
                store.close()
        for form, family, case in cases:
            record = kb.mapping(form.torch) or {}
            choice = choose_target(record, EngineSettings(family=family, device="CPU")) if record else None  # type: ignore[arg-type]
            # a fallback is the other family's target: its row is that family's
            owner = str(choice.target.get("family") or family) if choice is not None else family
            outcomes.append(Outcome(form.id, form.torch, owner, (choice.api if choice else "") or "", case.result,
                                    case.detail,
                                    literal_values(form, record.get("torch_signature"))))
    return outcomes


def main(jobs: int = 2, only: set[str] | None = None) -> int:
    """Run the curated forms (``only``: these ids) and merge them into the recorded rewrite rows."""
    import sys

    from kb import paths
    from kb.check.run import installed_version
    from kb.probes import defs
    from kb.probes.resultcache import default_folder
    from kb.probes.rewrites import RECORD_FIELDS, results_path

    data = paths.data_dir()
    forms = [f for f in load(data / "probes" / "callforms.yaml") if only is None or f.id in only]
    versions = {"mindspore": installed_version("mindspore"), "torch": installed_version("torch")}
    path = results_path(data / "probes", str(versions["mindspore"]))

    def tick(text: str) -> None:
        sys.stderr.write(f"callforms: {text}\n")

    outcomes = run_callforms(data, forms, jobs=jobs, cache=default_folder(), tick=tick)
    for o in outcomes:
        tick(f"{o.family}/{o.form} -> {o.api or '(no target)'}: {o.result} {o.detail[:150]}")
    rows = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            rows[r["probe"]] = r
    touched = merge(rows, outcomes, versions)
    defs.record(touched, path, replace_all=False, fields=RECORD_FIELDS)
    tick(f"merged into {len(touched)} rows of {path}")
    return 0
