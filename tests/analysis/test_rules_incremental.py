"""The rule registry (kb/analysis/rules): every rule finds its own example, and after any run of edits
the editor's analysis (incremental) equals a fresh analysis of the same text, for every rule's idiom:
its uses, their quick-fixes and fix-all. The document is every registered rule's example plus a real
training script, analysed with the bundled knowledge base, so a new rule is covered by adding it."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.analysis import Document, Engine, EngineSettings, rules

TRAIN_LOOP = (Path(__file__).resolve().parents[1] / "fixtures" / "train_loop.py").read_text()
DOCUMENT = "import torch\n\n" + "\n\n".join(rule.example for rule in rules.registered()) + "\n\n" + TRAIN_LOOP
TOKENS = ["opt", "optimizer", "o", "loss", "lr", "'lr'", "device", "'device'", "dtype", "'dtype'", "F", "nn",
          "hasattr", "getattr", "packed", "out", "step", "backward", "zero_grad", "x", "1", "(", ")", ".", ",",
          "[", "]", ":", " ", "    ", "\n", "#", "'", "=", "try", "import torch"]
EDITS = st.lists(st.tuples(st.integers(0, 100_000), st.integers(0, 6), st.sampled_from(TOKENS + [""])),
                 min_size=1, max_size=8)


@pytest.fixture(scope="module")
def engine(real_kb):
    return Engine(real_kb, EngineSettings(device="CPU"))


def _key(use):
    return (use.torch_name, use.kind, use.start, use.end, use.range, use.category, use.reason, use.call_span,
            use.rule, [(e.start, e.end, e.new_text) for e in use.edits])


@pytest.mark.parametrize("rule", rules.registered(), ids=lambda rule: rule.name)
def test_each_rule_finds_its_example(engine, rule):
    analysis = engine.analyze("import torch\n\n" + rule.example)
    found = [u for u in analysis.uses if u.rule == rule.name]
    assert found, f"{rule.name} finds nothing in its own example"
    assert rule.scope in rules.SCOPES


def test_the_registry_refuses_a_rule_without_an_example():
    class Nameless(rules.Rule):
        name, record, title = "nameless", {"torch": "x"}, "x"

    with pytest.raises(ValueError, match="no example"):
        rules.register(Nameless)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EDITS)
def test_an_edited_document_equals_a_fresh_analysis(engine, edits):
    document = Document(DOCUMENT)
    engine.analyze(document)
    for position, cut, insert in edits:
        text = document.text
        position %= len(text) + 1
        document.update(text[:position] + insert + text[position + cut:])
        edited = engine.analyze(document)
        fresh = Engine(engine.catalog, engine.settings).analyze(document)
        assert edited.error is None and fresh.error is None
        assert [_key(u) for u in edited.uses] == [_key(u) for u in fresh.uses]
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
