"""kb.timings: thresholds, cross-version and cross-family comparisons, not-measured wording."""
from __future__ import annotations

from kb import timings
from tests.perf.rows import conv_rows, dense_rows, row


def test_cliff_against_torch_and_older_version_names_the_version_that_avoids_it():
    v = timings.verdict(conv_rows(), "classic", "2.10.0", "CPU")
    assert v["status"] == "measured" and v["cliff"]
    assert "slower than torch" in v["line"]
    assert "~34x slower than 2.7.1" in v["line"]  # geometric mean of 34/1 and 51/1.5
    assert "mindspore 2.7.1 avoids it" in v["line"]
    assert v["best_version"] == "2.7.1"
    assert v["line"].startswith("CPU, mindspore 2.10.0 (classic):")
    assert "mint: no CPU kernel" in v["line"]


def test_the_fast_version_itself_is_no_cliff():
    v = timings.verdict(conv_rows(), "classic", "2.7.1", "CPU")
    assert v["status"] == "measured" and not v["cliff"]
    assert "slower" not in v["line"]


def test_no_cpu_kernel_is_reported_not_timed():
    v = timings.verdict(conv_rows(), "mint", "2.10.0", "CPU")
    assert v["status"] == "no_cpu_kernel" and not v["cliff"]
    assert "no CPU kernel" in v["line"]


def test_unmeasured_device_and_version_are_said_so_never_estimated():
    v = timings.verdict(conv_rows(), "classic", "2.10.0", "Ascend")
    assert v["status"] == "not_measured" and "not measured" in v["line"]
    assert "slower" not in v["line"] and "ratio" not in v
    v = timings.verdict(conv_rows(), "classic", "2.8.0", "CPU")
    assert v["status"] == "not_measured"
    assert "measured: 2.7.1, 2.10.0" in v["line"]


def test_other_family_much_faster_is_a_cliff():
    rows = [row("classic", "2.10.0", "s", 10.0), row("mint", "2.10.0", "s", 1.0)]
    v = timings.verdict(rows, "classic", "2.10.0", "CPU")
    assert v["cliff"] and "~10x slower than mint" in v["line"]
    assert v["other_family"]["factor"] == 10.0


def test_below_every_threshold_is_no_cliff():
    v = timings.verdict(dense_rows(), "classic", "2.10.0", "CPU")
    assert v["status"] == "measured" and not v["cliff"]
    assert v["ratio"] == 1.3
    rows = [row("classic", "2.10.0", "s", timings.TORCH_CLIFF * 0.99)]
    assert not timings.verdict(rows, "classic", "2.10.0", "CPU")["cliff"]
    rows = [row("classic", "2.10.0", "s", timings.TORCH_CLIFF)]
    assert timings.verdict(rows, "classic", "2.10.0", "CPU")["cliff"]


def test_no_rows_no_verdict():
    assert timings.verdict([], "classic", "2.10.0", "CPU") is None
    assert timings.verdict(dense_rows(), "classic", "2.10.0", "CPU")["op"] == "linear"


def test_project_costs_rank_cliffs_and_label_the_measured_device():
    rows_for = {"torch.nn.Conv2d": conv_rows(), "torch.nn.Linear": dense_rows()}.get
    costs = timings.project_costs({"torch.nn.Conv2d": 4, "torch.nn.Linear": 2, "torch.relu": 3},
                                  lambda n: rows_for(n) or [], "classic", "2.10.0", "Ascend")
    assert [o["torch"] for o in costs["ops"]] == ["torch.nn.Conv2d"]  # Linear is no cliff
    assert costs["measured_on"] == "CPU"
    lines = timings.project_lines(costs)
    assert "Ascend not measured; measured on CPU" in lines[0]
    assert lines[1].startswith("  torch.nn.Conv2d (4 uses): CPU, mindspore 2.10.0")
    none = timings.project_costs({"torch.nn.Linear": 2}, lambda n: rows_for(n) or [], "classic", "2.10.0", "CPU")
    assert none["ops"] == [] and timings.project_lines(none) == []


def test_project_costs_rank_by_time_added_not_by_ratio():
    tiny = [dict(row("classic", "2.10.0", "s", 500.0, op="reshape", apis=["torch.reshape"]), ms=0.5, torch_ms=0.001)]
    big = [dict(row("classic", "2.10.0", "s", 50.0), ms=200.0, torch_ms=4.0)]
    rows_for = {"torch.reshape": tiny, "torch.nn.Conv2d": big}.get
    costs = timings.project_costs({"torch.reshape": 10, "torch.nn.Conv2d": 2}, lambda n: rows_for(n) or [],
                                  "classic", "2.10.0", "CPU")
    assert [o["torch"] for o in costs["ops"]] == ["torch.nn.Conv2d", "torch.reshape"]
    assert costs["ops"][0]["extra_ms"] == 196.0
    assert "(conv2d, s: 200 ms vs torch 4 ms)" in costs["ops"][0]["line"]


def test_a_version_difference_within_the_recorded_spread_is_no_cliff():
    noisy = [row("classic", "2.7.1", "s", 2.0, spread=0.5), row("classic", "2.10.0", "s", 5.0, spread=0.5)]
    v = timings.verdict(noisy, "classic", "2.10.0", "CPU")  # x2.5 apart, but spreads allow 1 + 1 + 1
    assert v["slower_than"] == [] and "2.7.1" not in v["line"]
    steady = [dict(r, ratio_spread=0.1) for r in noisy]
    assert timings.verdict(steady, "classic", "2.10.0", "CPU")["slower_than"][0]["version"] == "2.7.1"


def test_a_faster_version_that_is_still_a_cliff_is_not_said_to_avoid_it():
    rows = [row("classic", "2.7.1", "s", 40.0), row("classic", "2.10.0", "s", 400.0)]
    v = timings.verdict(rows, "classic", "2.10.0", "CPU")
    assert "~10x slower than 2.7.1" in v["line"]
    assert "mindspore 2.7.1 is the fastest measured (~40x torch's time)" in v["line"] and "avoids" not in v["line"]


def test_the_general_op_is_judged_before_a_one_shape_variant():
    general = [row("classic", "2.10.0", s, 50.0) for s in ("a", "b")]
    variant = [row("classic", "2.10.0", "dw", 400.0, op="conv2d_depthwise")]
    v = timings.verdict(general + variant, "classic", "2.10.0", "CPU")
    assert v["op"] == "conv2d" and v["ratio"] == 50.0
    two = variant + [row("classic", "2.10.0", "x", 9.0, op="other")]
    assert timings.verdict(two, "classic", "2.10.0", "CPU")["op"] == "conv2d_depthwise"  # equals: the slowest
