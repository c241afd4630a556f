"""The knowledge real projects need: answers that agree with their targets, and recipes, not shrugs."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
NEW_FILES = ("namespaces.yaml", "tooling.yaml", "torchvision.yaml", "torchaudio_text.yaml", "distributed_more.yaml",
             "third_party.yaml", "recipes.yaml", "implementation_paths.yaml", "internals.yaml")


def _census():
    spec = importlib.util.spec_from_file_location("census", ROOT / "benchmarks" / "census.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _records(kb):
    for (name,) in kb.conn.execute("SELECT torch FROM mappings ORDER BY torch"):
        yield kb.mapping(name)


def test_advice_never_says_no_equivalent_while_a_target_maps(real_kb):
    census = _census()
    bad = [r["torch"] for r in _records(real_kb)
           if (r["advice"] or "").startswith(census.GENERIC)
           and any(t["relation"] != "no_equivalent" for t in r["targets"])]
    assert bad == []


def test_a_derived_no_equivalent_target_names_the_family_that_maps(real_kb):
    record = real_kb.mapping("torch.Tensor.size")
    classic = next(t for t in record["targets"] if t["family"] == "classic")
    mint = next(t for t in record["targets"] if t["family"] == "mint")
    assert classic["api"] == "mindspore.Tensor.shape"
    assert mint["relation"] == "no_equivalent" and "mindspore.Tensor.shape" in mint["note"]
    assert record["advice"] is None or not record["advice"].startswith("No usable")


@pytest.mark.parametrize("name", NEW_FILES)
def test_every_new_entry_gives_a_specific_answer(real_kb, name):
    census = _census()
    entries = yaml.safe_load((ROOT / "data" / "curated" / name).read_text())["mappings"]
    assert len(entries) >= 9
    answers = {e["torch"]: census.classify(real_kb.mapping(e["torch"])) for e in entries}
    assert {n: a for n, a in answers.items() if a not in ("mapped", "recipe")} == {}


def test_no_record_in_the_knowledge_base_answers_only_no_usable_x(real_kb):
    """Issue 17: every record says what to write (a target or a specific recipe), never only the generic
    "No usable X ... Try msmap search X" (458 records did before the 2026-11-26 round)."""
    census = _census()
    generic = [name for name, in real_kb.conn.execute("SELECT torch FROM mappings ORDER BY torch")
               if census.classify(real_kb.mapping(name)) == "generic"]
    assert generic == []


@pytest.mark.parametrize("query, expected", [
    ("torchvision.ops.nms", "mindspore.ops.NMSWithMask"),
    ("torchvision.transforms.ColorJitter", "mindspore.dataset.vision.RandomColorAdjust"),
    ("torchaudio.transforms.MelSpectrogram", "mindspore.dataset.audio.MelSpectrogram"),
    ("torch.distributions.Normal", "mindspore.nn.probability.distribution.Normal"),
    ("torch.profiler.profile", "mindspore.profiler.profile"),
    ("einops.rearrange", "mindspore.ops.permute"),
    ("timm.layers.trunc_normal_", "mindspore.common.initializer.TruncatedNormal"),
])
def test_ecosystem_names_resolve_to_their_counterpart(real_kb, query, expected):
    assert real_kb.resolve(query) == query
    apis = [t["api"] for t in real_kb.mapping(query)["targets"]]
    assert expected in apis


def test_classify_tells_generic_from_specific():
    census = _census()
    generic = {"advice": "No usable `x` in mindspore.ops (MindSpore 2.10.0). Try `msmap search x`.",
               "targets": [{"relation": "no_equivalent", "note": "No usable `x`.", "source": "derived"}]}
    recipe = {"advice": "Replace with `False`.", "targets": [{"relation": "no_equivalent", "note": None, "source": "curated"}]}
    mapped = {"advice": None, "targets": [{"relation": "renamed", "note": None, "source": "derived"}]}
    assert [census.classify(r) for r in (None, generic, recipe, mapped)] == ["unresolved", "generic", "recipe", "mapped"]


def test_census_reads_names_through_import_aliases(tmp_path):
    census = _census()
    src = tmp_path / "m.py"
    src.write_text("import torch.nn as nn\nfrom einops import rearrange\nimport torch\nfrom . import local\n"
                   "x = nn.Linear(2, 3)\ny = rearrange(x, 'a b -> b a')\nif torch.jit.is_scripting(): pass\nlocal.f()\n")
    assert sorted(n for n, _ in census.names_in(src, "proj")) == ["einops.rearrange", "torch.jit.is_scripting", "torch.nn.Linear"]
    assert census.names_in(src, "einops") and "einops.rearrange" not in [n for n, _ in census.names_in(src, "einops")]
