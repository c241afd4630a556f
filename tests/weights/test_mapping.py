"""map_weights: torch state_dict keys -> MindSpore names by the KB's rules (numpy only, no frameworks)."""
from __future__ import annotations

import numpy as np
import pytest

from kb.weights import map_weights

rng = np.random.default_rng(0)


def r(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


@pytest.fixture(scope="module")
def rules(real_kb):
    return real_kb.weight_rules()


def f32(*shape: int) -> tuple[tuple[int, ...], str]:
    return (shape, "Float32")


def test_rules_come_from_the_curated_data_with_origins(rules):
    bn = next(x for x in rules if x["layer"] == "BatchNorm" and x["family"] == "classic")
    assert bn["names"]["running_var"] == "moving_variance"
    assert bn["origin"].startswith("data/curated/weights.yaml:")


def test_classic_model_names_filled_by_rules_and_shapes(rules):
    state = {"conv.weight": r(4, 3, 3), "conv.bias": r(4), "bn.weight": r(4), "bn.bias": r(4),
             "bn.running_mean": r(4), "bn.running_var": r(4), "bn.num_batches_tracked": np.array(7),
             "emb.weight": r(10, 4), "bn3.weight": r(4), "bn3.bias": r(4), "bn3.running_mean": r(4),
             "bn3.running_var": r(4), "enc.linear1.weight": r(8, 4), "enc.norm1.weight": r(4)}
    ms = {"conv.weight": f32(4, 3, 1, 3), "conv.bias": f32(4), "bn.gamma": f32(4), "bn.beta": f32(4),
          "bn.moving_mean": f32(4), "bn.moving_variance": f32(4), "emb.embedding_table": f32(10, 4),
          "bn3.bn2d.gamma": f32(4), "bn3.bn2d.beta": f32(4), "bn3.bn2d.moving_mean": f32(4),
          "bn3.bn2d.moving_variance": f32(4), "enc.dense1.weight": f32(8, 4), "enc.norm1.gamma": f32(4)}
    wm = map_weights(state, ms, rules=rules)
    assert wm.unfilled_ms == [] and wm.unused_torch == [] and wm.conflicts == []
    assert wm.dropped == ["bn.num_batches_tracked"]
    assert wm.family == "classic"
    assert {m: t for t, m in wm.matched}["bn.moving_variance"] == "bn.running_var"
    assert wm.values["conv.weight"].shape == (4, 3, 1, 3) and wm.reshaped == ["conv.weight"]
    np.testing.assert_array_equal(wm.values["conv.weight"][:, :, 0, :], state["conv.weight"])
    np.testing.assert_array_equal(wm.values["bn3.bn2d.moving_mean"], state["bn3.running_mean"])


def test_mint_names_stay_and_keep_the_batch_counter(rules):
    state = {"bn.weight": r(4), "bn.bias": r(4), "bn.running_mean": r(4), "bn.running_var": r(4),
             "bn.num_batches_tracked": np.array(7), "fc.weight": r(2, 4)}
    ms = {"bn.weight": f32(4), "bn.bias": f32(4), "bn.running_mean": f32(4), "bn.running_var": f32(4),
          "bn.num_batches_tracked": ((), "Int64"), "fc.weight": f32(2, 4)}
    wm = map_weights(state, ms, rules=rules)
    assert wm.family == "mint" and wm.unfilled_ms == [] and wm.dropped == []
    assert wm.values["bn.num_batches_tracked"].dtype == np.int64


def test_shape_conflict_leaves_the_parameter_unfilled(rules):
    wm = map_weights({"fc.weight": r(3, 4)}, {"fc.weight": f32(4, 3)}, rules=rules)
    assert wm.unfilled_ms == ["fc.weight"] and "fc.weight" not in wm.values
    assert wm.conflicts == ["fc.weight (3, 4) -> fc.weight (4, 3): shapes differ"]
    assert wm.unused_torch == ["fc.weight"]


def test_tied_torch_keys_are_written_once(rules):
    table = r(10, 4)
    state = {"emb.weight": table, "head.weight": table.copy(), "head.bias": r(10)}
    ms = {"emb.embedding_table": f32(10, 4), "head.bias": f32(10)}
    wm = map_weights(state, ms, rules=rules)
    assert wm.tied == [("head.weight", "emb.embedding_table")]
    assert wm.unused_torch == [] and sorted(wm.values) == ["emb.embedding_table", "head.bias"]


def test_untied_copy_that_differs_is_unused_not_tied(rules):
    state = {"emb.weight": r(10, 4), "head.weight": r(10, 4)}
    wm = map_weights(state, {"emb.embedding_table": f32(10, 4)}, rules=rules)
    assert wm.tied == [] and wm.unused_torch == ["head.weight"]


def test_rules_alone_rename_and_report_ambiguity(rules):
    state = {"bn.weight": r(4), "bn.bias": r(4), "bn.running_mean": r(4), "bn.running_var": r(4),
             "bn.num_batches_tracked": np.array(1), "ln.weight": r(4), "ln.bias": r(4),
             "fc.weight": r(2, 4), "fc.bias": r(2), "emb.weight": r(9, 4), "c1.weight": r(4, 3, 5)}
    wm = map_weights(state, rules=rules)
    got = dict(wm.matched)
    assert got["bn.running_var"] == "bn.moving_variance" and got["ln.weight"] == "ln.gamma"
    assert got["fc.weight"] == "fc.weight" and got["emb.weight"] == "emb.weight"
    assert wm.ambiguous == ["emb: could be Embedding or Linear; torch names kept"]
    assert wm.values["c1.weight"].shape == (4, 3, 1, 5)
    mint = map_weights(state, family="mint", rules=rules)
    assert dict(mint.matched)["bn.running_var"] == "bn.running_var"
    assert mint.values["c1.weight"].shape == (4, 3, 5) and mint.ambiguous == []
