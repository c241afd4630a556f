"""The parameter table's view model: which rows, and what each says (kb.views)."""
from __future__ import annotations

import pytest

from kb import views
from kb.render import param_table as terminal_table
from lsp.markdown import param_table as hover_table

DROPOUT = [
    {"torch": "p", "ms": "keep_prob", "kind": "transformed", "torch_default": "0.5", "ms_default": "0.5",
     "transform": "1 - v", "note": None},
    {"torch": "inplace", "ms": None, "kind": "dropped", "torch_default": "False", "ms_default": None},
    {"torch": "training", "ms": "training", "kind": "same", "torch_default": "True", "ms_default": "True"},
]


def test_rows_keep_the_record_order_and_compute_the_assignment():
    rows = views.param_rows(DROPOUT)
    assert [r.torch for r in rows] == ["p", "inplace", "training"]
    assert rows[0].assignment == "keep_prob = 1 - p"
    assert rows[1].values == ("inplace", None, "False", None)


def test_differing_only_leaves_out_identical_parameters():
    assert [r.torch for r in views.param_rows(DROPOUT, differing_only=True)] == ["p", "inplace"]


@pytest.mark.parametrize("torch_default, ms_default, other", [
    pytest.param("0", "0.0", False, id="same-number"),
    pytest.param("torch.int64", "mindspore.int64", False, id="same-dtype"),
    pytest.param("True", "1", True, id="bool-is-not-int"),
    pytest.param("-1", "None", True, id="other-default"),
    pytest.param("", None, False, id="empty-is-none"),
])
def test_other_default_compares_defaults_by_meaning(torch_default, ms_default, other):
    p = {"torch": "x", "ms": "x", "kind": "same", "torch_default": torch_default, "ms_default": ms_default}
    assert views.param_row(p).other_default is other
    assert len(views.param_rows([p], differing_only=True)) == int(other)


def test_terminal_and_hover_show_the_same_rows():
    rows = views.param_rows(DROPOUT, differing_only=True)
    terminal, hover = terminal_table(rows), hover_table(rows)
    assert terminal[0] == list(views.PARAM_COLUMNS)
    assert terminal[1] == ["p", "keep_prob", "0.5", "0.5", "transformed: keep_prob = 1 - p"]
    assert hover[2] == "| `p` | `keep_prob` | `0.5` | `0.5` | transformed: `keep_prob = 1 - p` |"
    assert hover[3] == "| `inplace` | — | `False` | — | dropped |"
    assert len(terminal) - 1 == len(hover) - 2 == 2
