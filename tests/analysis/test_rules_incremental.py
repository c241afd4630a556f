"""The rule registry (kb/analysis/rules): every rule finds its own example, every extension changes its own
example's output, and after any run of edits the editor's analysis (incremental) equals a fresh analysis of
the same text, for every rule's and extension's idiom: its uses, their quick-fixes and fix-all. The document
is every registered item's example (rules, extensions, site finders, fallbacks, rename followers) plus a
real training script, analysed with the bundled knowledge base, so a new item is covered by adding it."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.analysis import Document, Engine, EngineSettings, rules

TRAIN_LOOP = (Path(__file__).resolve().parents[1] / "fixtures" / "train_loop.py").read_text()
EXAMPLES = [item.example for item in rules.everything()]  # rules, extensions, site finders, fallbacks ...
DOCUMENT = "import torch\n\n" + "\n\n".join(EXAMPLES) + "\n\n" + TRAIN_LOOP
TOKENS = ["opt", "optimizer", "o", "loss", "lr", "'lr'", "device", "'device'", "dtype", "'dtype'", "F", "nn",
          "hasattr", "getattr", "packed", "out", "step", "backward", "zero_grad", "x", "1", "(", ")", ".", ",",
          "[", "]", ":", " ", "    ", "\n", "#", "'", "=", "try", "import torch", "super()", "forward", "view", "abs_",
          "torch.device", "y"]
EDITS = st.lists(st.tuples(st.integers(0, 100_000), st.integers(0, 6), st.sampled_from(TOKENS + [""])),
                 min_size=1, max_size=6)


@pytest.fixture(scope="module")
def engine(real_kb):
    return Engine(real_kb, EngineSettings(device="CPU"))


def _key(use):
    return (use.torch_name, use.kind, use.start, use.end, use.range, use.category, use.reason, use.call_span,
            use.rule, use.extended_by, use.reach, [(e.start, e.end, e.new_text) for e in use.edits])


@pytest.mark.parametrize("rule", rules.registered(), ids=lambda rule: rule.name)
def test_each_rule_finds_its_example(engine, rule):
    analysis = engine.analyze("import torch\n\n" + rule.example)
    found = [u for u in analysis.uses if u.rule == rule.name]
    assert found, f"{rule.name} finds nothing in its own example"
    assert rule.scope in rules.SCOPES


@pytest.mark.parametrize("extension", rules.extensions(), ids=lambda extension: extension.name)
def test_each_extension_changes_its_example(engine, extension):
    analysis = engine.analyze("import torch\n\n" + extension.example)
    extended = [u for u in analysis.uses if extension.name in u.extended_by]
    assert extended, f"{extension.name} adds nothing to its own example"
    assert all(u.kind == extension.extends and u.reach is not None for u in extended)


def test_the_registry_refuses_a_rule_without_an_example():
    class Nameless(rules.Rule):
        name, record, title = "nameless", {"torch": "x"}, "x"

    with pytest.raises(ValueError, match="no example"):
        rules.register(Nameless)


def test_the_registry_refuses_an_extension_of_another_kind():
    class Everywhere(rules.Extension):
        name, extends, example = "everywhere", "call", "import torch\nx = torch.ones(1)\n"

    with pytest.raises(ValueError, match="extends 'call'"):
        rules.register(Everywhere)


@pytest.mark.parametrize("name, old, new", [
    pytest.param("branch-renames", "m.weight, 1)", "m.weight, 2)", id="branch-argument"),
    pytest.param("branch-renames", "m.weight, 1)", "m.bias, 1)", id="branch-renamed-name"),
    pytest.param("branch-renames", "(m.bias, 0)", "(m, 0)", id="branch-name-gone"),
    pytest.param("sequential-assignments", "BatchNorm2d(cin)", "BatchNorm2d(cin + 1)", id="sequential-argument"),
    pytest.param("sequential-assignments", "        self.norm = nn.BatchNorm2d(cin)\n", "", id="sequential-gone"),
    pytest.param("layer-subclasses", "self.eps)", "self.weight)", id="subclass-attribute"),
    pytest.param("layer-subclasses", "        return x.permute", "        y = self.eps\n        return x.permute",
                 id="subclass-line-added"),
])
def test_an_edit_an_extension_reads_equals_a_fresh_analysis(engine, name, old, new):
    """Found for issue 27: after an edit inside an isinstance branch, a Sequential subclass or a layer subclass,
    the editor kept the extension's edits from before the edit, or lost them."""
    example = next(extension.example for extension in rules.extensions() if extension.name == name)
    _, edited, fresh = _edited_and_fresh(engine, example, old, new)
    assert [_key(u) for u in edited.uses] == [_key(u) for u in fresh.uses]


def _edited_and_fresh(engine, example, old, new):
    """(the edited document, its analysis after the edit, a fresh analysis of the same text) of ``example``
    analysed, then edited by replacing ``old`` with ``new``."""
    document = Document("import torch\n\n" + example)
    engine.analyze(document)
    document.update(document.text.replace(old, new, 1))
    return document, engine.analyze(document), Engine(engine.catalog, engine.settings).analyze(document.text)


# (cost: each example is a fresh analysis per edit and two fix-alls, about 0.5 s of CPU: a dozen examples in CI)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EDITS)
def test_an_edited_document_equals_a_fresh_analysis(engine, edits):
    document = Document(DOCUMENT)
    engine.analyze(document)
    for position, cut, insert in edits:
        text = document.text
        position %= len(text) + 1
        document.update(text[:position] + insert + text[position + cut:])
        edited = engine.analyze(document)
        # (the text, not the document: a new engine's analysis cached on the document under a reused id would
        # be re-analysed incrementally)
        fresh = Engine(engine.catalog, engine.settings).analyze(document.text)
        assert edited.error is None and fresh.error is None
        assert [_key(u) for u in edited.uses] == [_key(u) for u in fresh.uses]
        assert edited.alias_edit == fresh.alias_edit
        assert {k: v for k, v in edited.ref_counts.items() if v} == {k: v for k, v in fresh.ref_counts.items() if v}
    for use, again in zip(edited.uses, fresh.uses, strict=True):
        fixed, wanted = edited.fix(use), fresh.fix(again)
        assert (fixed and fixed.edits) == (wanted and wanted.edits)
    # fix-all from the editor's state equals fix-all of the same text opened fresh
    assert engine.fix_all(document).source == Engine(engine.catalog, engine.settings).fix_all(document.text).source


def test_renaming_the_optimizer_keeps_the_train_step(engine):
    """Found by a random-edit check (issue 27): renaming ``opt`` left the step unconverted in the editor."""
    document = Document(DOCUMENT)
    engine.analyze(document)
    document.update(document.text.replace("    opt.step()\n", "    optim.step()\n", 1))
    document.update(document.text.replace("    optim.step()\n", "    opt.step()\n", 1))
    edited = engine.analyze(document)
    fresh = Engine(engine.catalog, engine.settings).analyze(document.text)
    assert [u.rule for u in edited.uses if u.rule] == [u.rule for u in fresh.uses if u.rule]
    assert "train-step" in {u.rule for u in edited.uses}


@pytest.mark.parametrize("old, new", [
    pytest.param("super().forward(x)", "optsuper().forward(x)", id="receiver-renamed"),
    pytest.param("super().forward(x)", "super().optforward(x)", id="method-renamed"),
    pytest.param("super().forward(x)", "super().forwardx(x)", id="typed-after-the-name"),
    pytest.param("super().forward(x) * 2", "super().forward(x) * 2 + super().forward(x)", id="another-call"),
])
def test_an_edit_of_a_call_a_class_migration_renames_equals_a_fresh_analysis(engine, old, new):
    """Found by the random-edit check above (issue 27): the class migration's rename of ``super().forward``
    (planned with the method definition, above the edit) was kept after the call was edited into another."""
    example = next(follower.example for follower in rules.rename_followers() if follower.name == "super-calls")
    document, edited, fresh = _edited_and_fresh(engine, example, old, new)
    assert [_key(u) for u in edited.uses] == [_key(u) for u in fresh.uses]
    assert engine.fix_all(document).source == Engine(engine.catalog, engine.settings).fix_all(document.text).source
