"""Search puts the API whose name is the query (or ends with it) first: "Look up API" with
`Dropout` must offer torch.nn.Dropout before anything else that mentions dropout."""
from __future__ import annotations

import pytest

from kb.search import exact_name


def test_exact_name_matches_the_name_or_its_last_parts():
    assert exact_name("torch.nn.Dropout", "Dropout")
    assert exact_name("torch.nn.Dropout", " nn.dropout ")
    assert exact_name("torch.nn.Dropout", "torch.nn.Dropout")
    assert not exact_name("torch.nn.Dropout", "out")  # a whole part, not a piece of one
    assert not exact_name("torch.alpha_dropout", "Dropout")
    assert not exact_name("torch.nn.Dropout", "")


@pytest.mark.parametrize("query, first", [
    ("Dropout", "torch.nn.Dropout"),
    ("repeat", "torch.Tensor.repeat"),  # full-text ranking alone puts repeat_interleave first
    ("nn.Linear", "torch.nn.Linear"),
])
def test_search_ranks_the_exact_name_first(real_kb, query, first):
    hits = [h["ref"] for h in real_kb.search(query, 20)]
    assert hits[0] == first, hits


def test_every_api_found_by_its_last_name_comes_first(real_kb):
    """For any torch API, searching its last name never ranks a mere prefix match above a name that
    ends with it."""
    wrong = []
    for name in sorted(real_kb.torch_names)[::9]:
        query = name.rsplit(".", 1)[-1]
        hits = [h["ref"] for h in real_kb.search(query, 20)]
        if any(exact_name(h, query) for h in hits) and not exact_name(hits[0], query):
            wrong.append((query, hits[0]))
    assert not wrong
