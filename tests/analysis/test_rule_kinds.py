"""The registry's kinds that hook the engine's own steps (kb/analysis/rules): site finders (tensor-method
guesses), fallbacks (in-place methods, annotation types) and rename followers (``super().forward``). Each is
registered with an example; the engine names none of them, and the incremental property test
(test_rules_incremental.py) covers every registered item of every kind."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kb.analysis import Document, Engine, EngineSettings, rules
from kb.analysis.resolver import Resolver

ROOT = Path(__file__).resolve().parents[2]
CORE = {"rules", "resolver", "document", "text", "settings", "rewrite", "uses", "imports", "catalog", "incremental"}


@pytest.fixture(scope="module")
def engine(real_kb):
    return Engine(real_kb, EngineSettings(device="CPU"))


def test_the_engine_imports_only_the_registry_and_core_modules():
    tree = ast.parse((ROOT / "kb" / "analysis" / "engine.py").read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "kb.analysis":
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kb.analysis."):
            imported.add(node.module.split(".")[2])
    assert imported - CORE == {"fixall"}  # (fix_all's own module, imported where it is called)


def test_every_registered_item_has_a_unique_name_and_an_example():
    items = rules.everything()
    names = [item.name for item in items]
    assert len(names) == len(set(names))
    assert all(item.example.strip() for item in items)
    kinds = {type(item).__mro__[1] for item in items}
    assert kinds == {rules.Rule, rules.Extension, rules.SiteFinder, rules.Fallback, rules.RenameFollower}


def test_the_property_test_covers_every_registered_item():
    from tests.analysis.test_rules_incremental import DOCUMENT

    missing = [item.name for item in rules.everything() if item.example not in DOCUMENT]
    assert not missing


@pytest.mark.parametrize("finder", rules.site_finders(), ids=lambda finder: finder.name)
def test_each_site_finder_finds_sites_in_its_example(engine, finder):
    document = Document("import torch\n\n" + finder.example)
    root, source = document.tree.root_node, document.source
    resolved = Resolver(root, source, engine.catalog).run()
    context = rules.SiteContext(root, source, engine.catalog, engine.settings, True, set(), set())
    found = finder.find(context)
    assert found and all(site.record for site in found)
    taken = {(s.node.start_byte, s.node.end_byte) for s in resolved if s.node is not None}
    assert not taken & {(s.node.start_byte, s.node.end_byte) for s in found}
    # without tensors in reach (no torch import, no project tensors) it finds nothing
    assert finder.find(rules.SiteContext(root, source, engine.catalog, engine.settings, False, set(), set())) == []


@pytest.mark.parametrize("fallback", rules.fallbacks(), ids=lambda fallback: fallback.name)
def test_each_fallback_plans_its_example(engine, fallback):
    analysis = engine.analyze("import torch\n\n" + fallback.example)
    planned = [u for u in analysis.uses if fallback.name in u.extended_by]
    assert planned and all(u.edits and not u.reason.startswith("no ") for u in planned)


@pytest.mark.parametrize("follower", rules.rename_followers(), ids=lambda follower: follower.name)
def test_each_rename_follower_adds_to_its_example_migrations(engine, follower):
    source = "import torch\n\n" + follower.example
    analysis = engine.analyze(source)
    document = Document(source)
    root = document.tree.root_node
    migrations = [u for u in analysis.uses if u.kind in ("class_base", "method_def") and u.edits]
    followed = []
    for site in Resolver(root, document.source, engine.catalog).run():
        if site.kind != "method_def" or site.local_class is None:
            continue
        old = site.node.text.decode()
        renamed = [e.new_text for u in migrations for e in u.edits
                   if (e.start, e.end) == (site.node.start_byte, site.node.end_byte)]
        for new in renamed:
            followed += follower.follow(site.local_class, old, new)
    assert followed
    every_edit = {(e.start, e.end, e.new_text) for u in migrations for e in u.edits}
    assert {(e.start, e.end, e.new_text) for e in followed} <= every_edit


def test_no_op_examples_stay_as_they_are(engine):
    """What the new kinds must not touch: a NumPy array's in-place method, a torch type tested in isinstance
    (not an annotation), a super() call of a method no migration renames, a method of ``self``."""
    source = ("import numpy as np\nimport torch\nimport torch.nn as nn\n\n"
              "def f(d):\n    a = np.zeros(3)\n    a.abs_()\n    return isinstance(d, torch.device)\n\n"
              "class Net(nn.Module):\n    def helper(self, x):\n        return super().helper(x) + self.view(x)\n")
    fixed = engine.fix_all(source).source.decode()
    assert "    a = np.zeros(3)\n    a.abs_()\n    return isinstance(d, torch.device)\n" in fixed
    assert "class Net(ms.nn.Cell):\n    def helper(self, x):\n" \
        "        return super().helper(x) + self.view(x)\n" in fixed
