"""Census: which torch (and torch-ecosystem) names real projects use, and what msmap answers.

For every project in the census, every reference to a name imported from ``torch``,
``torchvision``, ``torchaudio``, ``torchtext``, ``einops`` or ``timm`` (``nn.Linear``,
``F.relu``, ``rearrange``, ``torch.fx.symbolic_trace``...) is read from the source with ``ast``
(import aliases followed, relative imports and a project's references to itself ignored, bare
module references and reads such as ``nn.__dict__`` not counted), plus the ``torch.Tensor`` /
``torch.nn.Module`` method uses the msmap engine finds on typed receivers.  Each name is then looked up the way the engine does
(``Catalog.longest``: the longest known prefix, implementation paths canonicalized), and its
answer classified:

- resolved: the knowledge base has a record for it;
- usable: some target maps (any relation but ``no_equivalent``), or every target is
  ``no_equivalent`` and the record carries a specific recipe (curated advice or a curated target
  note) rather than only the generic "No usable X ... Try msmap search X" text.

Projects are split in two: ``CHOSEN`` (looked at when deciding what to add to ``data/curated``)
and ``HELD_OUT`` (never looked at while curating); both are reported.

    python benchmarks/census.py --fetch          # download the sources (pip download --no-deps)
    python benchmarks/census.py [--json OUT]     # print the table (and write the results)

Sources live in ``$MSMAP_CENSUS`` (default ``/tmp/census/src``), one folder per project.
torchvision and timm are copied from the installed packages.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CENSUS = Path(os.environ.get("MSMAP_CENSUS", "/tmp/census/src"))
ROOTS = ("torch", "torchvision", "torchaudio", "torchtext", "einops", "timm")
# project folder -> (pip requirement or "installed:<package>", sub-folders kept (None = all))
PROJECTS = {
    "torchvision": ("installed:torchvision", None),
    "timm": ("installed:timm", None),
    "torchaudio": ("torchaudio==2.11.0", None),
    "lightning": ("lightning==2.6.6", None),
    "ultralytics": ("ultralytics==8.4.190", None),
    "transformers": ("transformers==5.24.0", [
        "transformers/models/bert", "transformers/models/gpt2", "transformers/models/llama",
        "transformers/models/vit", "transformers/models/t5", "transformers/models/whisper",
        "transformers/models/clip", "transformers/models/mistral", "transformers/models/wav2vec2",
        "transformers/models/detr", "transformers/modeling_utils.py", "transformers/trainer.py",
        "transformers/activations.py", "transformers/pytorch_utils.py"]),
    "diffusers": ("diffusers==0.42.1", ["diffusers/models", "diffusers/training_utils.py", "diffusers/optimization.py"]),
    "peft": ("peft==0.21.2", None),
    "vit_pytorch": ("vit-pytorch==1.26.11", None),
    "pytorch_metric_learning": ("pytorch-metric-learning==2.9.0", None),
    "torchtext": ("torchtext==0.18.0", None),
    "accelerate": ("accelerate==1.15.0", None),
    "segmentation_models_pytorch": ("segmentation-models-pytorch==0.6.0", None),
    "torchmetrics": ("torchmetrics==1.9.0", None),
    "fairseq": ("fairseq==0.12.2", None),
    "kornia": ("kornia==0.9.0", None),
    "monai": ("monai==1.6.1", None),
    "speechbrain": ("speechbrain==1.1.2", None),
    "open_clip": ("open-clip-torch==3.3.0", None),
    "ignite": ("pytorch-ignite==0.5.5", None),
    "mmengine": ("mmengine==0.10.7", None),
    "torch_geometric": ("torch-geometric==2.8.1", None),
    "sentence_transformers": ("sentence-transformers==6.2.0", None),
    "pyro": ("pyro-ppl==1.9.2", None),
    "gpytorch": ("gpytorch==1.15.2", None),
    "torchgeo": ("torchgeo==0.8.1", None),
    "stable_baselines3": ("stable-baselines3==2.9.2", None),
    "captum": ("captum==0.9.0", None),
    "opacus": ("opacus==1.6.0", None),
    "torchtune": ("torchtune==0.6.1", None),
    "flair": ("flair==0.15.1", None),
}
# The first ten were looked at when the knowledge base was first extended to real projects; the next
# six were held out then and looked at in the second round (2026-11-25); the five after them were held
# out in the second round and looked at in the third (2026-11-26); the five after those were held out in
# the third round and looked at in the fourth (2026-11-26, evening), when the last five became the
# held-out set: nobody reads their unresolved names while curating.
CHOSEN = ("torchvision", "timm", "torchaudio", "lightning", "ultralytics", "transformers",
          "diffusers", "peft", "vit_pytorch", "pytorch_metric_learning",
          "torchtext", "accelerate", "segmentation_models_pytorch", "torchmetrics", "fairseq", "kornia",
          "monai", "speechbrain", "open_clip", "ignite", "mmengine",
          "torch_geometric", "sentence_transformers", "pyro", "gpytorch", "torchgeo")
HELD_OUT = ("stable_baselines3", "captum", "opacus", "torchtune", "flair")
INTROSPECTION = ("__dict__", "__file__", "__name__", "__path__", "__spec__", "__all__", "__doc__")
GENERIC = ("No usable ", "No classic MindSpore namespace", "No mint MindSpore namespace")


# ---------------------------------------------------------------- fetching
def fetch(dest: Path) -> None:
    """Download (pip download --no-deps) and unpack every project into ``dest/<project>``."""
    import importlib.util

    dest.mkdir(parents=True, exist_ok=True)
    cache = dest.parent / "dl"
    cache.mkdir(exist_ok=True)
    for name, (req, keep) in PROJECTS.items():
        out = dest / name
        if out.exists():
            continue
        if req.startswith("installed:"):
            spec = importlib.util.find_spec(req.split(":", 1)[1])
            if spec is None or not spec.submodule_search_locations:
                print(f"census: {req} is not installed; skipped", file=sys.stderr)
                continue
            shutil.copytree(next(iter(spec.submodule_search_locations)), out / name)
            continue
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(cache), req],
                       check=True, timeout=600)
        base = req.split("==")[0].replace("-", "_").lower()
        archive = next(p for p in cache.iterdir() if p.name.replace("-", "_").lower().startswith(base + "_")
                       or p.name.replace("-", "_").lower().startswith(base + "-"))
        unpacked = dest / f".{name}"
        if archive.suffix == ".whl":
            with zipfile.ZipFile(archive) as z:
                z.extractall(unpacked, [n for n in z.namelist() if n.endswith(".py")])
        else:
            with tarfile.open(archive) as t:
                t.extractall(unpacked, [m for m in t.getmembers() if m.name.endswith(".py")], filter="data")
            inner = [p for p in unpacked.iterdir() if p.is_dir()]
            if len(inner) == 1:
                unpacked = inner[0]
        if keep is None:
            shutil.move(str(unpacked), out)
        else:
            for part in keep:
                source = unpacked / part
                target = out / part
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(source), target)
            shutil.rmtree(dest / f".{name}")


# ---------------------------------------------------------------- reading names
def module_names() -> set[str]:
    """Dotted module names of the census roots (installed packages and downloaded sources)."""
    import importlib.util

    found: set[str] = set()
    bases = []
    for root in ROOTS:
        spec = importlib.util.find_spec(root) if root not in ("torchvision", "timm") else None
        if spec and spec.submodule_search_locations:
            bases.append((root, Path(next(iter(spec.submodule_search_locations)))))
        for project in (CENSUS / root, CENSUS / root / root):
            if (project / "__init__.py").exists():
                bases.append((root, project))
        for project in CENSUS.iterdir() if CENSUS.exists() else ():
            if (project / root / "__init__.py").exists():
                bases.append((root, project / root))
    for root, base in bases:
        for path in base.rglob("*.py"):
            rel = path.relative_to(base).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            found.add(".".join([root, *parts]))
    return found


class Collector(ast.NodeVisitor):
    """Full names of the census roots referenced in one module."""

    def __init__(self, own: str) -> None:
        self.own = own
        self.aliases: dict[str, str] = {}
        self.modules: set[str] = set()  # local names bound by ``import X [as Y]``
        self.found: list[tuple[str, int]] = []  # (full name, line)

    def _root_ok(self, name: str) -> bool:
        head = name.split(".", 1)[0]
        return head in ROOTS and head != self.own

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if not self._root_ok(alias.name):
                continue
            if alias.asname:
                self.aliases[alias.asname] = alias.name
                self.modules.add(alias.asname)
            else:
                head = alias.name.split(".", 1)[0]
                self.aliases[head] = head
                self.modules.add(head)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module or not self._root_ok(node.module):
            return
        for alias in node.names:
            if alias.name != "*":
                self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def visit_Attribute(self, node: ast.Attribute) -> None:
        parts = []
        current: ast.AST = node
        while isinstance(current, ast.Attribute):
            parts.append(current.attr)
            current = current.value
        if isinstance(current, ast.Name) and current.id in self.aliases:
            self.found.append((".".join([self.aliases[current.id], *reversed(parts)]), node.lineno))
            return
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in self.aliases and node.id not in self.modules and isinstance(node.ctx, ast.Load):
            self.found.append((self.aliases[node.id], node.lineno))


def names_in(path: Path, own: str) -> list[tuple[str, int]]:
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError, OSError):
        return []
    collector = Collector(own)
    for node in ast.walk(tree):  # imports anywhere in the file, before the uses
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            collector.visit(node)
    collector.visit(tree)
    return collector.found


def api_part(name: str, modules: set[str]) -> str:
    """The deepest module of ``name`` plus one part: ``torch.fx.Graph.nodes`` -> ``torch.fx.Graph``."""
    parts = name.split(".")
    for end in range(len(parts) - 1, 0, -1):
        if ".".join(parts[:end]) in modules:
            return ".".join(parts[:end + 1])
    return name


# ---------------------------------------------------------------- answers
def classify(record: dict | None) -> str:
    """'unresolved', 'mapped', 'recipe' (no equivalent, specific recipe) or 'generic'."""
    if record is None:
        return "unresolved"
    targets = record["targets"]
    if any(t["relation"] != "no_equivalent" for t in targets):
        return "mapped"
    advice = record.get("advice") or ""
    specific_advice = advice and not advice.startswith(GENERIC)
    specific_note = any(t["note"] and not t["note"].startswith(GENERIC) and t["source"] == "curated"
                        for t in targets)
    return "recipe" if specific_advice or specific_note else "generic"


def census(projects: tuple[str, ...], catalog, modules: set[str], engine_uses: dict) -> dict:
    sites: Counter = Counter()  # (name, answer) -> use sites
    per_project: dict[str, Counter] = {}
    for project in projects:
        folder = CENSUS / project
        if not folder.exists():
            continue
        counts: Counter = Counter()
        for path in sorted(folder.rglob("*.py")):
            for name, _line in names_in(path, project):
                if name in modules or any(part in INTROSPECTION for part in name.split(".")):
                    continue  # a module passed around, or a module's namespace read (nn.__dict__), not an API
                parts = name.split(".")
                found = catalog.longest(parts[0], tuple(parts[1:]))
                if found is not None:
                    name, answer = found[1], classify(found[2])
                else:
                    name, answer = api_part(name, modules), "unresolved"
                sites[(name, answer)] += 1
                counts[answer] += 1
        for name, count in engine_uses.get(project, {}).items():
            answer = classify(catalog.lookup(name))
            sites[(name, answer)] += count
            counts[answer] += count
        per_project[project] = counts
    return figures(sites, per_project)


def figures(sites: Counter, per_project: dict[str, Counter]) -> dict:
    names: dict[str, str] = {name: answer for name, answer in sites}
    total_sites = sum(sites.values())
    by_answer: Counter = Counter()
    for (_name, answer), count in sites.items():
        by_answer[answer] += count
    name_answers = Counter(names.values())

    def share(part: int, whole: int) -> float:
        return round(part / whole, 4) if whole else 0.0

    def top(answers: tuple[str, ...], n: int = 400) -> list[list]:
        rows = Counter({name: count for (name, answer), count in sites.items() if answer in answers})
        return [[name, count] for name, count in rows.most_common(n)]

    resolved_sites = total_sites - by_answer["unresolved"]
    return {
        "names": len(names), "names_resolved": len(names) - name_answers["unresolved"],
        "names_resolved_share": share(len(names) - name_answers["unresolved"], len(names)),
        "sites": total_sites, "sites_resolved": resolved_sites,
        "sites_resolved_share": share(resolved_sites, total_sites),
        "sites_usable": by_answer["mapped"] + by_answer["recipe"],
        "sites_usable_share": share(by_answer["mapped"] + by_answer["recipe"], total_sites),
        "sites_by_answer": dict(sorted(by_answer.items())),
        "generic_names": sorted(n for n, a in names.items() if a == "generic"),
        "top_unresolved": top(("unresolved",)), "top_generic": top(("generic",)),
        "projects": {p: dict(sorted(c.items())) for p, c in per_project.items()},
    }


def frequency(folders: list[Path], catalog, modules: set[str], kb_path: Path | None = None) -> dict[str, int]:
    """Use sites per knowledge-base name in ``folders`` (read as in ``census``): how common each
    API is in real code.  ``--frequency`` writes it to data/usage/, where search and lookup's
    suggestions use it to order equally close names."""
    counts: Counter = Counter()
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            for name, _line in names_in(path, ""):
                if name in modules or any(part in INTROSPECTION for part in name.split(".")):
                    continue
                parts = name.split(".")
                found = catalog.longest(parts[0], tuple(parts[1:]))
                if found is not None:
                    counts[found[1]] += 1
    if kb_path is not None:  # torch.Tensor / torch.nn.Module methods on receivers the engine types
        from kb.analysis.project import python_files, scan_files
        from kb.analysis.settings import EngineSettings

        for report in scan_files(list(python_files(folders)), kb_path, EngineSettings(tensor_method_guesses=False)):
            for use in report.uses:
                if use["torch"].startswith(("torch.Tensor.", "torch.nn.Module.")) and not use["guess"]:
                    counts[use["torch"]] += 1
    return dict(sorted(counts.items()))


def engine_method_uses(projects: tuple[str, ...], kb_path: Path) -> dict[str, Counter]:
    """torch.Tensor / torch.nn.Module method uses the engine finds on typed receivers (no guesses)."""
    from kb.analysis.project import python_files, scan_files
    from kb.analysis.settings import EngineSettings

    out: dict[str, Counter] = {}
    settings = EngineSettings(tensor_method_guesses=False)
    for project in projects:
        folder = CENSUS / project
        if not folder.exists():
            continue
        counts: Counter = Counter()
        for report in scan_files(list(python_files([folder])), kb_path, settings):
            for use in report.uses:
                if use["torch"].startswith(("torch.Tensor.", "torch.nn.Module.")) and not use["guess"]:
                    counts[use["torch"]] += 1
        out[project] = counts
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fetch", action="store_true", help="download the census sources first")
    parser.add_argument("--json", metavar="OUT", help="write the results as JSON")
    parser.add_argument("--frequency", metavar="OUT",
                        help="write use sites per API (data/usage/frequency.json) counted in the census "
                        "sources and in --corpus folders")
    parser.add_argument("--corpus", metavar="DIR", nargs="*", default=[],
                        help="more folders of real torch code for --frequency (e.g. benchmarks/corpus)")
    args = parser.parse_args(argv)
    if args.frequency:
        from kb.analysis.catalog import Catalog
        from kb.query import KB, ensure_db

        folders = [CENSUS / p for p in CHOSEN + HELD_OUT if (CENSUS / p).exists()] + [Path(d) for d in args.corpus]
        kb_path = ensure_db()
        counts = frequency(folders, Catalog(KB.open(kb_path)), module_names(), kb_path)
        shown = [str(f.resolve().relative_to(ROOT)) if f.resolve().is_relative_to(ROOT) else f.name for f in folders]
        about = ("Use sites per API in real code, written by 'python benchmarks/census.py --frequency'; "
                 "msmap search and lookup's suggestions order equally close names by it.")
        Path(args.frequency).write_text(json.dumps({"about": about, "sources": shown, "counts": counts},
                                                   indent=0, sort_keys=True) + "\n")
        print(f"{args.frequency}: {len(counts)} APIs, {sum(counts.values())} use sites from {len(folders)} folders")
        return 0
    if args.fetch:
        fetch(CENSUS)
    if not CENSUS.exists():
        print(f"census: no sources in {CENSUS} (run with --fetch)", file=sys.stderr)
        return 2
    from kb.analysis.catalog import Catalog
    from kb.query import KB, ensure_db

    kb_path = ensure_db()
    catalog = Catalog(KB.open(kb_path))
    modules = module_names()
    uses = engine_method_uses(CHOSEN + HELD_OUT, kb_path)
    results = {"sources": {p: PROJECTS[p][0] for p in CHOSEN + HELD_OUT},
               "chosen": census(CHOSEN, catalog, modules, uses),
               "held_out": census(HELD_OUT, catalog, modules, uses)}
    print(f"{'split':<9} {'names':>6} {'resolved':>9} {'sites':>7} {'resolved':>9} {'usable':>7}  generic names")
    for split in ("chosen", "held_out"):
        r = results[split]
        print(f"{split:<9} {r['names']:>6} {r['names_resolved_share']:>9.1%} {r['sites']:>7} "
              f"{r['sites_resolved_share']:>9.1%} {r['sites_usable_share']:>7.1%}  {len(r['generic_names'])}")
    print("targets: names resolved >= 95%, sites resolved >= 99%, sites usable >= 97%, no generic answer")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
