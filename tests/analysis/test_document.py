"""Documents: exact positions (UTF-16 and bytes), incremental parsing, LSP edits."""
from __future__ import annotations

import pytest

from kb.analysis import Document, LineIndex
from kb.analysis.document import parser


@pytest.mark.parametrize("prefix, character", [
    pytest.param("", 0, id="ascii"),
    pytest.param("é = 1; ", 7, id="latin-1-char-is-one-unit"),
    pytest.param("s = '中文'; ", 10, id="cjk-chars-are-one-unit-each"),
    pytest.param("s = '😀'; ", 10, id="emoji-is-two-units"),
])
def test_use_positions_count_utf16(engine, prefix, character):
    src = f"import torch\n{prefix}x = torch.cat(a)\n"
    use = engine.analyze(src).uses[0]
    start = use.range.start
    assert (start.line, start.character) == (1, character + 4)
    assert src.encode()[start.offset:use.range.end.offset] == b"torch.cat"


def test_line_index_round_trip():
    text = "a = 1\nb = '😀é'; c\n\nlast"
    index = LineIndex(text.encode())
    boundaries = [len(text[:i].encode()) for i in range(len(text) + 1)]
    for offset in boundaries:
        position = index.position(offset)
        assert index.offset(position.line, position.character) == offset
    assert index.offset(1, 7) == len("a = 1\nb = '😀".encode())
    assert index.offset(99, 0) == len(text.encode())
    assert index.offset(0, 99) == len("a = 1")


def test_update_is_incremental_and_equals_fresh_parse():
    doc = Document("import torch\nx = torch.cat([a, b])\n")
    old_tree = doc.tree
    doc.update("import torch\nx = torch.cat([a, b, c])\ny = 1\n")
    assert doc.tree is not old_tree
    fresh = parser().parse(doc.source)
    assert str(doc.tree.root_node) == str(fresh.root_node)
    assert doc.revision == 1


def test_apply_change_takes_utf16_positions():
    doc = Document("s = '😀'\nx = 1\n")
    doc.apply_change((0, 5), (0, 7), "ok")  # the emoji is characters 5..7
    assert doc.text == "s = 'ok'\nx = 1\n"
    doc.apply_change((1, 4), (1, 5), "torch.cat(a)")
    assert doc.text == "s = 'ok'\nx = torch.cat(a)\n"
    assert str(doc.tree.root_node) == str(parser().parse(doc.source).root_node)


def test_dirty_ranges():
    doc = Document("a = 1\nb = 2\n")
    doc.update("a = 10\nb = 2\n")
    assert doc.dirty_since(0) and doc.dirty_since(1) == []
    assert all(a <= 5 and b <= 7 for a, b in doc.dirty_since(0))


@pytest.mark.parametrize("text", [
    pytest.param("", id="empty"),
    pytest.param(b"\xff\xfe\x00garbage", id="binary"),
    pytest.param("x = '" + "a" * 10_000 + "'", id="long-line"),
    pytest.param("def f(:\n  torch.", id="half-typed"),
])
def test_odd_inputs_parse(engine, text):
    doc = Document(text)
    engine.analyze(doc)
    doc.update("import torch\ntorch.cat(x)\n")
    assert [u.torch_name for u in engine.analyze(doc).uses] == ["torch.cat"]


def test_incremental_analysis_matches_full(engine):
    doc = Document("import torch\nimport torch.nn as nn\nx = torch.cat(a)\ny = nn.Linear(2, 3)\nz = w.view(1)\n")
    engine.analyze(doc)
    doc.update(doc.text.replace("torch.cat(a)", "torch.cat(a, dim=1)"))
    again = engine.analyze(doc)
    assert again.environment is not None and again.imports is None  # the incremental path ran
    fresh = engine.analyze(Document(doc.text))

    def key(use):
        return (use.torch_name, use.start, use.end, use.range, use.category, [(e.start, e.end, e.new_text)
                                                                             for e in use.edits])

    assert [key(u) for u in again.uses] == [key(u) for u in fresh.uses]


def test_use_at_prefers_innermost(engine):
    src = "import torch\ny = torch.randn(3).view(3)\n"
    analysis = engine.analyze(src)
    assert analysis.use_at(src.index("randn")).torch_name == "torch.randn"
    assert analysis.use_at(src.index("view")).torch_name == "torch.Tensor.view"
    assert analysis.use_at(0) is None


def test_word_starts_matches_find_words():
    """The regex path (short words) and the find path agree with the plain definition of a whole word."""
    import re

    from kb.analysis.words import find_words, word_starts

    source = "F = F1(F)\nFalse; xF; F\nnn.inner nn  é_nn nnn nn\nself.selfish(self)\nF".encode()
    for word in (b"F", b"nn", b"self", "é_nn".encode()):
        expected = [m.start() for m in re.finditer(rb"(?<![A-Za-z0-9_])" + re.escape(word)
                                                   + rb"(?![A-Za-z0-9_])", source)]
        assert word_starts(source, word) == list(find_words(source, word)) == expected
        assert word_starts(source, word, 5, 30) == [a for a in expected if 5 <= a and a + len(word) <= 30]
    assert word_starts(source, b"") == [] and list(find_words(source, b"")) == []
