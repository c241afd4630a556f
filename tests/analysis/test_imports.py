"""Import statements: the text fast path of ``bound_names`` reads exactly what the tree says."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from kb.analysis.document import Document
from kb.analysis.imports import ImportedName, _simple_bound_names, bound_names

ROOT = Path(__file__).resolve().parent.parent.parent
IMPORTS = ("import_statement", "import_from_statement", "future_import_statement")


def statements(source: bytes) -> list:
    found, stack = [], [Document(source).tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in IMPORTS:
            found.append(node)
        else:
            stack.extend(reversed(node.children))
    return found


@pytest.mark.parametrize("src, simple", [
    ("import torch", True),
    ("import torch.nn as nn, os", True),
    ("import  a.b.c ,d", True),
    ("from . import x", True),
    ("from .m import y as z, w", True),
    ("from ..pkg.sub import a", True),
    ("from torch import nn as n2, optim", True),
    ("from torch.nn import functional as F", True),
    ("from torch import *", False),
    ("from x import (a, b as c)", False),
    ("from x import (\n    a,  # why\n    b,\n)", False),
    ("import a \\\n    , b", False),
    ("import a; import b as c", True),  # two statements, each simple
    ("import a  # trailing comment", True),
    ("from __future__ import annotations", False),
    ("import é, torch", False),
    ("import torch.", None),  # broken: tree-sitter may make no import statement of these at all
    ("from m import", None),
    ("import a as", None),
    ("import a as b as c", None),
    ("if x:\n    import torch.nn as nn\n    from torch import optim", True),
])
def test_text_reading_equals_tree_reading(src, simple):
    source = (src + "\n").encode()
    found = statements(source)
    for stmt in found:
        assert bound_names(stmt, source) == bound_names(stmt)
    if simple is None:
        return
    text = source[found[0].start_byte:found[0].end_byte]
    fast = found[0].type != "future_import_statement" and not found[0].has_error \
        and not any(c in text for c in (b"\n", b"(", b"\\", b";", b"#")) \
        and _simple_bound_names(found[0], text) is not None
    assert fast == simple


def test_spans_and_targets_of_a_simple_from_import():
    source = b"x = 1\nfrom torch.nn import Linear as L, ReLU\n"
    (stmt,) = statements(source)
    assert bound_names(stmt, source) == [
        ImportedName("L", "torch.nn.Linear", source.index(b"Linear"), source.index(b" as"), source.index(b"L,")),
        ImportedName("ReLU", "torch.nn.ReLU", source.index(b"ReLU"), source.index(b"ReLU") + 4, source.index(b"ReLU")),
    ]


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_every_import_of_a_torch_sample_reads_the_same_both_ways():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import convert_corpus

    checked = fast = 0
    for path in convert_corpus.corpus(sample=300):
        source = Path(path).read_bytes()
        for stmt in statements(source):
            assert bound_names(stmt, source) == bound_names(stmt), (path, stmt.start_point)
            checked += 1
            fast += _simple_bound_names(stmt, source[stmt.start_byte:stmt.end_byte]) is not None
    assert checked > 2000 and fast > checked * 0.8
