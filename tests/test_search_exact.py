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


def test_distance_counts_a_swap_of_neighbours_as_one_edit():
    from kb.search import distance

    assert distance("dropuot", "dropout") == 1
    assert distance("dropout", "dropout") == 0
    assert distance("dropout_", "dropuot") == 2
    assert distance("", "relu") == 4


def test_equally_close_names_come_in_order_of_use_in_real_code():
    from kb.search import closeness

    sites = {"torch.nn.Dropout": 65, "torch.dropout": 2}
    names = ["torch.ao.nn.quantized.Dropout", "torch.dropout", "torch.nn.Dropout", "torch.dropout_"]
    assert sorted(names, key=lambda n: closeness("dropuot", n, sites)) == [
        "torch.nn.Dropout", "torch.dropout", "torch.ao.nn.quantized.Dropout", "torch.dropout_"]


def test_a_misspelt_name_finds_the_common_api_first(real_kb):
    """`msmap search dropuot`: torch.nn.Dropout, not torch.dropout_ or an attention function."""
    hits = [h["ref"] for h in real_kb.search("dropuot", 20)]
    assert hits[0] == "torch.nn.Dropout", hits
    assert hits.index("torch.dropout_") > hits.index("torch.nn.functional.dropout")
    assert real_kb.suggest("torch.nn.Dropuot")[0] == "torch.nn.Dropout"  # not a quantized Dropout
    assert real_kb.suggest("nn.Linaer")[0] == "torch.nn.Linear"


def test_usage_counts_are_build_data(small_data, tmp_path):
    import json

    from kb.errors import DataError
    from kb.query import KB

    usage = small_data / "usage"
    usage.mkdir()
    (usage / "frequency.json").write_text(json.dumps({"counts": {"torch.nn.Dropout": 7}}))
    kb = KB.open(db=tmp_path / "kb.sqlite", data=small_data)
    from kb.search import usage as read_usage

    assert read_usage(kb.conn) == {"torch.nn.Dropout": 7}
    (usage / "frequency.json").write_text(json.dumps({"counts": {"torch.nn.Dropout": "many"}}))
    with pytest.raises(DataError, match="frequency.json:1: a usage file needs 'counts'"):
        KB.open(db=tmp_path / "kb2.sqlite", data=small_data)
