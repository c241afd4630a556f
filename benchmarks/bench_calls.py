"""Single torch calls, four call styles each, converted and executed next to torch.

    python benchmarks/bench_calls.py [--family classic|mint|both] [--device CPU|GPU|Ascend] [--json]
                                     [--only TEXT] [--out FILE] [--convert-only]

The calls are hand-written data (benchmarks/calls/calls.yaml, not the KB's examples). Each call
is written all positional, all keyword, keywords shuffled and with defaults omitted; every
variant becomes a tiny torch file that the real converter rewrites (the engine library
``msmap convert`` runs: ``kb.analysis.project.convert_files``, ``--device CPU`` unless ``--device``
says otherwise; ``--convert-only`` stops there and counts what converts automatically). torch and the
converted code then run in separate subprocesses (the MindSpore one cannot import torch), and
outputs are compared on values, shapes and dtypes (int32 vs int64 is wrong). Layers are built,
filled with seeded random weights and statistics in torch, and those are copied into the
MindSpore cell (by name with MindSpore's aliases, else by order and shape); a layer whose
weights cannot be copied is counted as "weights" (not compared), never as a pass.

Per family: converted automatically (no marker and no torch reference left), among those
pass / wrong (values, shape, dtype: silent) / crash / no CPU kernel / timeout / weights, and
what was left for a human with the diagnostic reasons.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GLOG_v", "3")

from kb.probes.calls import (  # noqa: E402
    STYLES,
    Arg,
    Case,
    convert_cases,
    execute,
    render_call,
    snippet,
)

DATA = ROOT / "benchmarks" / "calls" / "calls.yaml"


def load_calls(path: Path = DATA) -> list[dict[str, Any]]:
    import yaml

    calls = yaml.safe_load(path.read_text(encoding="utf-8"))["calls"]
    seen: Counter = Counter()
    for i, call in enumerate(calls):
        if not call.get("api") or "args" not in call:
            raise SystemExit(f"{path}: call #{i}: needs api and args")
        seen[call["api"]] += 1
        call["id"] = f"{call['api']}#{seen[call['api']]}"
        call["args"] = [Arg.parse(a) for a in call["args"]]
    return calls


def is_layer(api: str) -> bool:
    return api.rsplit(".", 1)[-1][:1].isupper()


def cases_for(call: dict[str, Any]) -> list[Case]:
    layer = is_layer(call["api"])
    inputs = call.get("in") or {}
    out = []
    for style in STYLES:
        expr = render_call(call["api"], call["args"], style, seed=len(call["id"]))
        out.append(Case(id=f"{call['id']}/{style}", source=snippet(expr, list(inputs), layer), inputs=inputs,
                        layer=layer, compare=call.get("compare", "values")))
    return out


def summarize(cases: list[Case]) -> dict[str, Any]:
    total = len(cases)
    auto = [c for c in cases if c.automatic]
    left = [c for c in cases if not c.automatic]
    results = Counter(c.result for c in auto)
    wrong = [c for c in auto if c.result == "wrong"]
    reasons = Counter(c.why_left() for c in left)
    return {
        "cases": total, "calls": len({c.id.split("/")[0] for c in cases}),
        "automatic": len(auto), "automatic_pct": round(100 * len(auto) / total, 1) if total else 0.0,
        "results": dict(sorted(results.items())),
        "wrong": len(wrong), "wrong_by_kind": dict(Counter(c.detail.split(":", 1)[0] for c in wrong)),
        "dtype_mismatch": sum(c.detail.startswith("dtype") for c in wrong),
        "crash": results.get("crash", 0), "no_cpu_kernel": results.get("no_cpu_kernel", 0),
        "not_compared_weights": results.get("weights", 0), "torch_error": results.get("torch_error", 0),
        "left": len(left), "left_reasons": reasons.most_common(),
        "wrong_cases": [_case_row(c) for c in wrong],
        "crash_cases": [_case_row(c) for c in auto if c.result in ("crash", "timeout", "weights", "torch_error")],
        "no_kernel_cases": [_case_row(c) for c in auto if c.result == "no_cpu_kernel"],
    }


def _case_row(c: Case) -> dict[str, Any]:
    return {"id": c.id, "result": c.result, "detail": c.detail, "torch": _body(c.source), "emitted": _body(c.converted)}


def _body(source: str) -> str:
    lines = [ln.strip() for ln in source.splitlines() if ln.startswith("    ")]
    return " / ".join(lines)


def run_families(calls: list[dict[str, Any]], families: tuple[str, ...], db: Any, workdir: Path,
                 device: str = "CPU", run: bool = True) -> list[dict[str, Any]]:
    """Convert every case per family, run them all (torch once per snippet), summarize per family."""
    started = time.perf_counter()
    per = {fam: [c for call in calls for c in cases_for(call)] for fam in families}
    for fam, cases in per.items():
        convert_cases(cases, workdir / fam, fam, db, device=device)
    converted_s = time.perf_counter() - started
    if run:
        execute([c for cases in per.values() for c in cases])
    out = []
    for fam, cases in per.items():
        summary = summarize(cases)
        summary.update(family=fam, seconds_convert=round(converted_s, 1),
                       seconds_total=round(time.perf_counter() - started, 1))
        out.append(summary)
    return out


def render(s: dict[str, Any]) -> str:
    n = s["cases"]
    res = s["results"]
    lines = [f"== {s['family']}: {s['calls']} calls x {len(STYLES)} styles = {n} cases "
             + f"({s['seconds_total']:.0f} s, all families)",
             f"  converted automatically: {s['automatic']}/{n} ({s['automatic_pct']}%)",
             f"    pass {res.get('pass', 0)}, wrong (silent) {s['wrong']} {s['wrong_by_kind'] or ''}, "
             + f"crash {s['crash']}, no CPU kernel {s['no_cpu_kernel']}, timeout {res.get('timeout', 0)}, "
             f"weights not copied (not compared) {s['not_compared_weights']}, torch side failed {s['torch_error']}"
             + f", dtype mismatches {s['dtype_mismatch']}",
             f"  left for a human: {s['left']}/{n}"]
    lines += [f"    {count:>4}  {reason[:150]}" for reason, count in s["left_reasons"][:12]]
    for title, key in (("wrong", "wrong_cases"), ("crash / not compared", "crash_cases"),
                       ("no CPU kernel", "no_kernel_cases")):
        if s[key]:
            lines.append(f"  {title}:")
            lines += [f"    {r['id']}: {r['detail'][:160]}\n      torch: {r['torch'][:150]}\n"
                      f"      emitted: {r['emitted'][:150]}" for r in s[key]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", choices=("classic", "mint", "both"), default="both")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--only", metavar="TEXT", help="only calls whose api contains TEXT")
    parser.add_argument("--out", metavar="FILE", help="also write the JSON summary to FILE")
    parser.add_argument("--device", choices=("CPU", "GPU", "Ascend"), default="CPU",
                        help="the device the converter targets (the calls still run on this machine's CPU)")
    parser.add_argument("--convert-only", action="store_true",
                        help="convert and count what converts automatically; run nothing")
    args = parser.parse_args(argv)
    from kb.query import ensure_db

    db = ensure_db(quiet=True)
    calls = [c for c in load_calls() if not args.only or args.only in c["api"]]
    families = ("classic", "mint") if args.family == "both" else (args.family,)
    with tempfile.TemporaryDirectory(prefix="bench-calls-") as tmp:
        summaries = run_families(calls, families, db, Path(tmp), args.device, run=not args.convert_only)
    from kb.check.run import installed_version
    from kb.query import KB

    report = {"date": time.strftime("%Y-%m-%d"), "torch": installed_version("torch"),
              "mindspore": installed_version("mindspore"),
              "device": args.device, "executed": not args.convert_only, "families": summaries,
              "rewrite_proofs": KB(db).rewrite_proofs()}  # the KB's automatic/proven targets (msmap stats)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(report, indent=1, ensure_ascii=False))
    else:
        print("\n\n".join(render(s) for s in summaries))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
