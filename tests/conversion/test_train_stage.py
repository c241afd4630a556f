"""The train stage's comparison (benchmarks/train_stage.py): torch's float32 rounding noise, measured
against a float64 run, is the floor; a difference beyond it is reported with both figures."""
from __future__ import annotations

import sys
from pathlib import Path

import mindspore as ms
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import train_stage


def _net(weight: np.ndarray):
    net = ms.nn.Dense(3, 2, has_bias=False)
    net.weight.set_data(ms.Tensor(weight.astype(np.float32)))
    return net


WANT = np.arange(6, dtype=np.float32).reshape(2, 3) / 10


def test_equal_within_the_plain_tolerance_passes():
    assert train_stage.check(_net(WANT + 1e-6), {"weight": WANT}, "classic", "", "") is None


def test_beyond_the_plain_tolerance_fails_without_a_float64_run():
    error = train_stage.check(_net(WANT + 1e-3), {"weight": WANT}, "classic", "", "")
    assert error is not None and error.startswith("weight after training: values differ (max abs diff 0.001")


def test_within_ten_times_torchs_own_float32_noise_passes():
    f64 = {"weight": WANT.astype(np.float64) + 2e-4}  # torch float32 is 2e-4 from float64
    assert train_stage.check(_net(WANT + 1e-3), {"weight": WANT}, "classic", "", "", f64) is None


def test_beyond_ten_times_torchs_noise_fails_and_names_both_figures():
    f64 = {"weight": WANT.astype(np.float64) + 2e-5}
    error = train_stage.check(_net(WANT + 1e-3), {"weight": WANT}, "classic", "", "", f64)
    assert error is not None and "torch float32 vs float64: 2e-05" in error


def test_logged_numbers_must_agree():
    error = train_stage.check(_net(WANT), {"weight": WANT}, "classic", "loss 0.51\n", "loss 0.50\n")
    assert error == "the training log says 0.51 where torch's says 0.50"
