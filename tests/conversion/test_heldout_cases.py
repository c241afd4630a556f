"""The held-out batches (benchmarks/heldout/*.json) are well-formed, and the case copier lays out a
listed package under its own name; no download: a package is generated here."""
from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_models  # noqa: E402
import census  # noqa: E402

BATCHES = sorted((ROOT / "benchmarks" / "heldout").glob("batch*.json"))
CORPUS_SOURCES = {json.loads(p.read_text())["source"]["package"]
                  for p in (ROOT / "benchmarks" / "corpus").glob("*/case.json")}


@pytest.mark.parametrize("path", BATCHES, ids=lambda p: p.stem)
def test_batch_is_well_formed_and_held_out(path):
    batch = json.loads(path.read_text())
    pinned = batch["packages"]
    census_packages = {re.split(r"[=<>]", spec)[0].lower() for spec, _ in census.PROJECTS.values()}
    assert not set(pinned) & (census_packages | CORPUS_SOURCES | {"torchvision", "timm", "vit-pytorch"})
    assert all(re.fullmatch(r"\d+(\.\d+)*\w*", v) for v in pinned.values())
    names = [c["name"] for c in batch["cases"]]
    assert len(names) == len(set(names))
    for case in batch["cases"]:
        src = case["source"]
        assert pinned[src["package"]] == src["version"], case["name"]
        assert src["paths"] and all(not p.startswith("/") and ".." not in p for p in src["paths"])
        ast.parse(case["build"])
        assert "model =" in case["build"]
        assert bench_models.make_inputs(case["inputs"])


def test_listed_files_are_copied_under_the_package_name(tmp_path):
    root = tmp_path / "src" / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "model.py").write_text("from pkg.sub.util import K\n")
    (root / "sub" / "util.py").write_text("K = 1\n")
    (root / "other.py").write_text("raise ImportError\n")
    case = {"name": "x", "package": "pkg", "dir": str(root), "files": ["sub/model.py", "sub/util.py"]}
    dst = bench_models.copy_case(case, tmp_path / "out")
    assert dst.name == "pkg"
    assert sorted(str(p.relative_to(dst)) for p in dst.rglob("*.py")) == [
        "__init__.py", "sub/__init__.py", "sub/model.py", "sub/util.py"]
    assert bench_models.module_path({"package": "pkg", "module": "sub.model"}) == "pkg.sub.model"
    assert bench_models.module_path({"package": "pkg", "module": ""}) == "pkg"
