"""Rules run again only in the piece of their scope an edit touches (kb/analysis/reruns.py, ``rules.region``), and
everywhere when what they read beyond it changed (``Rule.inputs``/``reaches``): after edits inside every registered
rule's findings and around them, the editor's analysis equals a fresh analysis of the same text, with the bundled
knowledge base; and edits that change a rule's inputs (a call that makes a helper compiled, a training step that no
longer converts) change its findings elsewhere, as a fresh analysis does."""
from __future__ import annotations

from pathlib import Path

import pytest

from kb.analysis import Document, Engine, EngineSettings, rules

TRAIN_LOOP = (Path(__file__).resolve().parents[1] / "fixtures" / "train_loop.py").read_text()
DOCUMENT = "import torch\n\n" + "\n\n".join(item.example for item in rules.everything()) + "\n\n" + TRAIN_LOOP
# (inserted, cut): a word typed, a space, a character deleted, a digit, spaces typed after the lines around
EDITS = [("x", 0), (" ", 0), ("", 1), ("1", 0), (" ", 0), (" ", 0)]


@pytest.fixture(scope="module")
def engine(real_kb):
    return Engine(real_kb, EngineSettings(device="CPU"))


@pytest.fixture(scope="module")
def fresh(engine):
    return engine.analyze(DOCUMENT)


def _key(use):
    return (use.torch_name, use.kind, use.start, use.end, use.range, use.category, use.reason, use.call_span,
            use.rule, use.extended_by, use.reach, [(e.start, e.end, e.new_text) for e in use.edits])


def _same_as_fresh(engine, text_before, position, cut, inserted):
    """Edit ``text_before`` in the editor, then compare with a fresh analysis; the editor's analysis."""
    document = Document(text_before)
    engine.analyze(document)
    document.update(text_before[:position] + inserted + text_before[position + cut:])
    edited = engine.analyze(document)
    fresh = Engine(engine.catalog, engine.settings).analyze(document.text)
    assert edited.error is None and fresh.error is None
    assert [_key(u) for u in edited.uses] == [_key(u) for u in fresh.uses]
    return edited


@pytest.mark.parametrize("rule", rules.registered(), ids=lambda rule: rule.name)
def test_edits_in_a_rules_findings_equal_a_fresh_analysis(engine, fresh, rule):
    found = [u for u in fresh.uses if u.rule == rule.name]
    assert found, f"{rule.name} finds nothing in the document"
    source = DOCUMENT.encode()
    incremental = 0
    for use in found[:2]:
        # inside what it underlines, at its end, just past its line and the lines around it
        line_end = source.find(b"\n", use.end)
        around = (source.rfind(b"\n", 0, use.start), source.find(b"\n", line_end + 1))
        for offset, (inserted, cut) in zip((use.start + 1, use.end, line_end, use.start) + around, EDITS, strict=True):
            position = len(source[:offset].decode())
            edited = _same_as_fresh(engine, DOCUMENT, position, cut, inserted)
            incremental += edited.imports is None  # (an incremental re-analysis keeps no import table)
    assert incremental, f"no edit of {rule.name}'s findings was re-analysed incrementally"


GRAPH = """\
import torch.nn as nn


class Net(nn.Module):
    def forward(self, x):
        return x

    def helper(self, x):
        flat = x.ndim > 2
        if flat:
            shape = x.shape
        x = x * 2
        if flat:
            x = x.reshape(shape)
        return x
"""


def test_a_call_that_makes_a_function_compiled_reruns_the_rule_there(engine):
    """``graph-branch-names`` runs in the edited function only, but a call added there makes another function
    compiled (``reaches``): its finding appears in the editor as in a fresh analysis."""
    before = Document(GRAPH)
    assert not [u for u in engine.analyze(before).uses if u.rule == "graph-branch-names"]
    at = GRAPH.index("return x\n")
    edited = _same_as_fresh(engine, GRAPH, at + len("return "), 1, "self.helper(x)")
    assert edited.imports is None
    assert [u for u in edited.uses if u.rule == "graph-branch-names"]


ZERO = """\
import torch


def train(model, data, target, loss_fn, opt):
    output = model(data)
    loss = loss_fn(output, target)
    loss.backward()
    opt.step()


def reset(holder):
    holder.zero_grad()
"""


def test_a_training_step_that_no_longer_converts_keeps_the_other_functions_zero_grad(engine):
    """``zero-grad`` removes ``holder.zero_grad()`` in a file whose training step converts (its inputs): an edit
    of the step in another function changes that, in the editor as in a fresh analysis."""
    assert [u for u in engine.analyze(ZERO).uses if u.rule == "zero-grad"]
    at = ZERO.index("opt.step()")
    edited = _same_as_fresh(engine, ZERO, at + len("opt.st"), 2, "art")
    assert not [u for u in edited.uses if u.rule == "zero-grad"]


@pytest.mark.parametrize("scope, piece", [
    ("expression", "        y = x + 1"), ("statement", "        y = x + 1"),
    ("function", "    def f(self, x):"), ("class", "class A:"),
])
def test_the_piece_a_rule_runs_again_in(scope, piece):
    source = b"import torch\n\n\nclass A:\n    def f(self, x):\n        y = x + 1\n        return y\n"
    root = Document(source).tree.root_node
    at = source.index(b"x + 1")
    start, end = rules.region(scope, root, at, at + 5)
    assert source[start:end].decode().splitlines()[0] == piece.strip()
    assert rules.region("file", root, at, at + 5) is None
    # a window over two statements of the body is the function's
    two = rules.region("statement", root, at, source.index(b"return y") + 3)
    assert source[two[0]:two[1]].startswith(b"def f")


def test_a_name_its_rewrite_needs_taken_elsewhere_reruns_the_training_step(engine):
    """``train-step`` names its gradients ``grads`` unless the file says ``grads`` (its inputs): typing that word
    in another function renames them in the step's fix, in the editor as in a fresh analysis."""
    text = ZERO + "\n\ndef label():\n    return 'loss'\n"
    before = [e.new_text for u in engine.analyze(text).uses if u.rule == "train-step" for e in u.edits]
    assert any("grads" in t for t in before) and not any("grads_" in t for t in before)
    at = text.index("'loss'")
    edited = _same_as_fresh(engine, text, at + 1, 4, "grads")
    assert edited.imports is None
    assert any("grads_" in e.new_text for u in edited.uses if u.rule == "train-step" for e in u.edits)
