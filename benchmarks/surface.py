"""Surface: what msmap answers for every public name of the installed torch.

The census (``census.py``) counts the names real projects use; this counts the names torch
offers, so that a project nobody has censused still finds its names answered.  The public
surface is every importable ``torch`` module whose dotted path has no ``_`` part (tests and
``torch.testing`` internals left out), each module's ``__all__`` (or, without one, the names it
defines itself), plus the public attributes of ``torch.Tensor`` and ``torch.nn.Module``.
Each name is looked up as the engine looks it up (``Catalog.longest``) and classified as in
the census: mapped, recipe (no equivalent, with a specific answer), generic (only "No usable X
... Try msmap search X") or unresolved.

    python benchmarks/surface.py [--json OUT] [--rows 30]
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import pkgutil
import sys
import warnings
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

SKIPPED_PARTS = ("test", "tests", "benchmarks", "testing")


def public_modules(torch) -> list[str]:
    found = ["torch"]
    for info in pkgutil.walk_packages(torch.__path__, "torch."):
        parts = info.name.split(".")[1:]
        if any(p.startswith("_") or p in SKIPPED_PARTS for p in parts):
            continue
        found.append(info.name)
    return found


def surface() -> list[str]:
    """The public names of the installed torch (importing every public module)."""
    import torch

    names: set[str] = set()
    for module_name in public_modules(torch):
        try:
            with warnings.catch_warnings():  # deprecated modules warn when imported
                warnings.simplefilter("ignore")
                module = importlib.import_module(module_name)
        except Exception:  # optional dependencies (onnx, tensorboard, ...) or platform-only modules
            continue
        public = getattr(module, "__all__", None)
        if public is None:
            with warnings.catch_warnings():  # reading a deprecated attribute warns
                warnings.simplefilter("ignore")
                public = [n for n in dir(module) if getattr(getattr(module, n), "__module__", None) == module_name]
        for name in public:
            if isinstance(name, str) and not name.startswith("_"):
                if type(getattr(module, name, None)).__name__ != "module":
                    names.add(f"{module_name}.{name}")
    for cls, prefix in ((torch.Tensor, "torch.Tensor"), (torch.nn.Module, "torch.nn.Module")):
        names.update(f"{prefix}.{n}" for n in dir(cls) if not n.startswith("_"))
    return sorted(names)


def classify_all(names: list[str]) -> tuple[Counter, dict[str, Counter], dict[str, list[str]]]:
    from census import classify

    from kb.analysis.catalog import Catalog
    from kb.query import KB, ensure_db

    catalog = Catalog(KB.open(ensure_db()))
    totals: Counter = Counter()
    by_namespace: dict[str, Counter] = defaultdict(Counter)
    gaps: dict[str, list[str]] = {"unresolved": [], "generic": []}
    for name in names:
        parts = name.split(".")
        found = catalog.longest(parts[0], tuple(parts[1:]))
        answer = "unresolved" if found is None else classify(found[2])
        totals[answer] += 1
        by_namespace[".".join(parts[:2])][answer] += 1
        if answer in gaps:
            gaps[answer].append(name)
    return totals, by_namespace, gaps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", metavar="OUT", help="write the figures and the unanswered names as JSON")
    parser.add_argument("--rows", type=int, default=30, help="namespaces to list, most gaps first")
    args = parser.parse_args(argv)
    import torch

    # walking and importing deprecated torch modules warns (some reset the warning filters): not this table's news
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        names = surface()
    totals, by_namespace, gaps = classify_all(names)
    whole = len(names)
    resolved = whole - totals["unresolved"]
    usable = totals["mapped"] + totals["recipe"]
    print(f"torch {torch.__version__}: {whole} public names; resolved {resolved} ({resolved / whole:.1%}), "
          f"usable answer {usable} ({usable / whole:.1%}), generic only {totals['generic']}, "
          f"unresolved {totals['unresolved']}")
    rows = sorted(by_namespace.items(), key=lambda kv: -(kv[1]["unresolved"] + kv[1]["generic"]))
    print(f"{'namespace':<28} {'names':>6} {'mapped':>7} {'recipe':>7} {'generic':>8} {'unresolved':>11}")
    for namespace, counts in rows[:args.rows]:
        print(f"{namespace:<28} {sum(counts.values()):>6} {counts['mapped']:>7} {counts['recipe']:>7} "
              f"{counts['generic']:>8} {counts['unresolved']:>11}")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "torch": torch.__version__, "names": whole, "answers": dict(totals),
            "resolved_share": round(resolved / whole, 4), "usable_share": round(usable / whole, 4),
            "namespaces": {k: dict(v) for k, v in sorted(by_namespace.items())}, **gaps}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
