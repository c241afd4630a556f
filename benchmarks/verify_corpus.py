"""``msmap verify``'s verdict on every converted corpus case, next to bench_models' stage.

    python benchmarks/bench_models.py --keep DIR --json RESULTS.json     # convert and run the corpus
    python benchmarks/verify_corpus.py --keep DIR --results RESULTS.json  # verify the same pairs

For each case and family the torch sources and the converted package that bench_models kept are
given to kb.verify (the code behind ``msmap verify``: two processes per family, the case's build
expression and input specs).  The two must agree: PASS <-> match, mismatch <-> mismatch, a stage
where the harness stopped <-> an error at that stage (import, init = build, weights, forward; a
torch-side failure is the torch side's error).  Exit 1 when any case disagrees.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "benchmarks" / "corpus"
sys.path.insert(0, str(ROOT))

from kb.verify.inputs import parse_spec
from kb.verify.run import Pair, Verdict, verify_many


def agrees(stage: str, v: Verdict) -> bool:
    if stage == "PASS":
        return v.verdict == "match"
    if stage == "mismatch":
        return v.verdict == "mismatch"
    if v.verdict != "error":
        return False
    if v.side == "torch":
        return stage in ("init", "weights")  # the harness builds the torch model for its weights stage
    return {"import": "import", "init": "build", "weights": "weights", "forward": "forward"}.get(stage) == v.stage


BUILDER = "_msmap_verify_build"


def _target(folder: Path, module: str, build: str) -> tuple[Path, str]:
    """FILE:EXPR for a case's build code; several statements go into a small builder module
    written beside the case's module (in the kept work folder) whose build() runs them."""
    if build.startswith("model = ") and "\n" not in build:
        return folder / f"{module}.py", build[len("model = "):]
    body = "".join(f"    {line}\n" for line in build.splitlines())
    (folder / f"{BUILDER}.py").write_text(
        f"from . import {module} as _case\n\nglobals().update(vars(_case))\n\n\n"
        f"def build():\n{body}    return model\n")
    return folder / f"{BUILDER}.py", "build()"


def pair_for(case: dict, kept: Path, family: str) -> Pair | None:
    package = next((p.name for p in (kept / "torch-src").iterdir() if p.is_dir()), None)
    ms_folder = kept / family / "out" / str(package)
    if package is None or not (ms_folder / f"{case['module']}.py").is_file():
        return None
    build = case["build"].strip()
    return Pair(_target(kept / "torch-src" / package, case["module"], build),
                _target(ms_folder, case["module"], build), [parse_spec(s) for s in case["inputs"]])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", required=True, type=Path, help="the --keep folder of bench_models")
    parser.add_argument("--results", required=True, type=Path, help="the --json file of bench_models")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per family (default 900)")
    parser.add_argument("--only", action="append", help="only this case (repeatable)")
    args = parser.parse_args(argv)
    report = json.loads(args.results.read_text())
    disagree = total = 0
    print(f"{'case':<24}{'family':<9}{'harness':<11}{'msmap verify':<34}agree")
    for family, data in report["families"].items():
        rows, pairs = [], []
        for row in data["rows"]:
            if args.only and row["case"] not in args.only:
                continue
            case = json.loads((CORPUS / row["case"] / "case.json").read_text())
            kept = next(args.keep.glob(f"bench-models-{row['case']}-*"), None)
            pair = pair_for(case, kept, family) if kept else None
            if pair is None:
                print(f"{row['case']:<24}{family:<9}{row['ran_to']:<11}(no kept files)")
                continue
            rows.append(row)
            pairs.append(pair)
        for row, v in zip(rows, verify_many(pairs, timeout=args.timeout)):
            ok = agrees(row["ran_to"], v)
            total += 1
            disagree += not ok
            shown = v.verdict if v.verdict != "error" else f"error {v.stage} ({v.side})"
            print(f"{row['case']:<24}{family:<9}{row['ran_to']:<11}{shown:<34}{'yes' if ok else 'NO: ' + v.message[:80]}")
    print(f"{total - disagree}/{total} agree")
    return 1 if disagree else 0


if __name__ == "__main__":
    raise SystemExit(main())
