"""The read path: name resolution, records, reverse lookup, search, stats."""
from __future__ import annotations

import pytest

from kb import names
from kb.versions import in_range


@pytest.mark.parametrize(
    "typed, expected",
    [
        pytest.param("torch.nn.Linear", "torch.nn.Linear", id="full"),
        pytest.param("nn.Linear", "torch.nn.Linear", id="nn-alias"),
        pytest.param("Linear", "torch.nn.Linear", id="bare-class"),
        pytest.param("F.relu", "torch.nn.functional.relu", id="F-alias"),
        pytest.param("torch.nn.functional.relu(x)", "torch.nn.functional.relu", id="call-parens"),
        pytest.param("torch.Tensor.view", "torch.Tensor.view", id="tensor-method"),
        pytest.param("Tensor.view", "torch.Tensor.view", id="Tensor-alias"),
        pytest.param("x.view", "torch.Tensor.view", id="x.view"),
        pytest.param(".view", "torch.Tensor.view", id="dot-method"),
        pytest.param("mindspore.nn.Dense", "mindspore.nn.Dense", id="ms-full"),
        pytest.param("ms.nn.Dense", "mindspore.nn.Dense", id="ms-alias"),
        pytest.param("mint.nn.Linear", "mindspore.mint.nn.Linear", id="mint-alias"),
    ],
)
def test_resolve(small_kb, typed, expected):
    assert small_kb.resolve(typed) == expected


def test_unknown_name_gets_suggestions(small_kb):
    assert small_kb.resolve("torch.nn.Dropuot") is None
    assert "torch.nn.Dropout" in small_kb.suggest("torch.nn.Dropuot")
    assert "torch.nn.Linear" in small_kb.suggest("nn.Linaer")


def test_record_merges_curated_over_derived_per_family(small_kb):
    rec = small_kb.mapping("torch.nn.Linear")
    fams = {(t["family"], t["api"], t["source"]) for t in rec["targets"]}
    # curated classic target replaces nothing in mint: the derived mint target stays
    assert fams == {("classic", "mindspore.nn.Dense", "curated"), ("mint", "mindspore.mint.nn.Linear", "derived")}
    assert rec["source"] == "curated+derived"
    classic = next(t for t in rec["targets"] if t["family"] == "classic")
    renamed = {p["torch"]: p["ms"] for p in classic["params"] if p["kind"] == "renamed"}
    assert renamed == {"in_features": "in_channels", "out_features": "out_channels", "bias": "has_bias"}
    assert classic["ms_signature"].startswith("(in_channels, out_channels")
    assert rec["torch_signature"].startswith("(in_features")


def test_versioned_targets_and_caveats(small_kb):
    rec = small_kb.mapping("torch.nn.Dropout")
    classic = [t for t in rec["targets"] if t["family"] == "classic"]
    assert [(t["ms_versions"]["since"], t["ms_versions"]["until"]) for t in classic] == [(None, "2.0"), ("2.0", None)]
    old = classic[0]
    assert old["params"][0]["transform"] == "1 - v" and old["params"][0]["ms"] == "keep_prob"
    assert [c["id"] for c in rec["caveats"]] == ["dropout-keep-prob"]
    assert rec["caveats"][0]["severity"] == "error"


def test_no_equivalent_entry_has_advice(small_kb):
    rec = small_kb.mapping("torch.nn.Unfoldable")
    assert rec["targets"][0]["relation"] == "no_equivalent" and rec["targets"][0]["api"] is None
    assert rec["advice"]


def test_reverse_lookup(small_kb):
    rev = small_kb.reverse("mindspore.nn.Dropout")
    assert {r["torch"] for r in rev["torch"]} == {"torch.nn.Dropout"}
    assert [c["id"] for c in rev["caveats"]] == ["dropout-keep-prob"]
    assert small_kb.reverse("mindspore.nn.NoSuchThing") is None


@pytest.mark.parametrize("query, first", [("dropout", "torch.nn.Dropout"), ("dropuot", "torch.nn.Dropout"),
                                           ("in_channels", "torch.nn.Linear"), ("keep_prob", None)])
def test_search_ranked_and_typo_tolerant(small_kb, query, first):
    results = small_kb.search(query)
    assert results, query
    if first:
        assert results[0]["ref"] == first
    else:  # found in a caveat body
        assert any(r["kind"] == "caveat" for r in results)


def test_search_nothing(small_kb):
    assert small_kb.search("zzzzqqq") == []
    assert small_kb.search("   ") == []


def test_stats_counts_per_namespace(small_kb):
    s = small_kb.stats()
    assert s["namespaces"]["torch.nn"]["entries"] == 3
    assert s["namespaces"]["torch.nn"]["no_equivalent"] == 1
    assert s["total"]["entries"] == 5
    assert s["caveats"] == 1 and s["curated"] == 2


@pytest.mark.parametrize("v, since, until, ok", [
    ("2.10.0", "2.0", None, True), ("1.8.1", "2.0", None, False), ("1.8.1", None, "2.0", True),
    ("2.0", None, "2.0", False), ("2.3.1", "2.3", "2.4", True), ("2.10", "2.9", "2.10", False),
])
def test_version_ranges_are_half_open_and_numeric(v, since, until, ok):
    assert in_range(v, since, until) is ok


def test_names_candidates_pure():
    assert names.candidates("nn.Conv2d")[:2] == ["nn.Conv2d", "torch.nn.Conv2d"]
    assert names.candidates("ms.ops.topk") == ["mindspore.ops.topk"]
    assert names.method_name("x.view") == "view" and names.method_name("nn.Linear") is None


@pytest.mark.parametrize("family", ["classic", "mint"])
def test_derived_advice_goes_once_a_curated_target_maps(small_data, tmp_path, family):
    # "no usable X" advice would contradict the curated target; the derived no-equivalent
    # target of the other family names the API that maps instead
    from kb.query import KB

    (small_data / "curated" / "unfold.yaml").write_text(
        "mappings:\n  - torch: torch.nn.Unfoldable\n    targets:\n"
        f"      - {{family: {family}, api: mindspore.ops.unfold, relation: renamed}}\n")
    rec = KB.open(db=tmp_path / "u.sqlite", data=small_data).mapping("torch.nn.Unfoldable")
    assert rec["advice"] is None
    for target in rec["targets"]:
        if target["relation"] == "no_equivalent":
            assert "`mindspore.ops.unfold`" in target["note"]


def test_a_kb_opened_without_results_leaves_out_only_checks_and_probes(real_kb):
    from kb.query import KB

    full, bare = KB(real_kb.path), KB(real_kb.path, results=False)
    with_results = 0
    for name in sorted(full.torch_names):
        record, light = full.mapping(name), bare.mapping(name)
        with_results += any(t["checks"] or t["probes"] for t in record["targets"])
        for target in record["targets"]:
            del target["checks"], target["probes"]
        del record["timings"]  # recorded op timings: lookup, hovers and summaries read them, the engine never
        assert light == record, name
    assert with_results > 100  # the bundled data has verification results to leave out
