"""The `msmap weights` text report: one line per kind, expected drops counted, the family and where it came from."""
from __future__ import annotations

from kb.weights.convert import WeightsResult, report_text
from kb.weights.mapping import WeightMap


def result(family_given: bool, **fields) -> WeightsResult:
    wm = WeightMap(family="mint", **fields)
    wm.values = {f"p{i}": None for i in range(102)}  # type: ignore[misc]
    return WeightsResult("resnet18.pth", "resnet18.ckpt", "ms/resnet.py:ResNet()", [], wm, 151, 102,
                         not_loaded=[], family_given=family_given)


def test_one_line_per_kind_and_expected_drops_counted():
    dropped = [f"layer{i}.bn.num_batches_tracked" for i in range(49)]
    text = report_text(result(True, dropped=dropped, reshaped=["conv1d.weight"]))
    lines = text.splitlines()
    assert lines[1] == "  family:     mint (--family)"
    assert "  loaded:     102 of 102 MindSpore parameters (load_checkpoint + load_param_into_net)" in lines
    assert "  reshaped:   1 (a size-1 axis added): conv1d.weight" in lines
    assert "  missing:    0" in lines and "  unexpected: 0" in lines
    assert [line for line in lines if "num_batches_tracked" in line] == [
        "  dropped:    49 torch keys MindSpore keeps no counterpart of, as expected (49 x num_batches_tracked)"]
    assert lines[-1] == "wrote resnet18.ckpt (102 parameters)" and len(lines) == 8


def test_a_guessed_family_says_so_and_long_lists_are_cut():
    missing = [f"block{i}.weight" for i in range(12)]
    text = report_text(result(False, unfilled_ms=missing))
    assert "family:     mint (guessed from the parameter names; --family names it)" in text
    assert "missing:    12 (MindSpore parameters no torch key fills): block0.weight, block1.weight, " \
           "block2.weight, block3.weight, block4.weight and 7 more (--json lists all)" in text


def test_mindspore_log_lines_stay_out_of_the_report(tmp_path):
    """msmap weights sets MindSpore's public log level (GLOG_v=3: errors only) before importing it."""
    import os
    import subprocess
    import sys

    import pytest

    torch = pytest.importorskip("torch")
    pytest.importorskip("mindspore")
    bn = torch.nn.BatchNorm2d(3)
    torch.save(bn.state_dict(), tmp_path / "bn.pt")
    env = {k: v for k, v in os.environ.items() if k != "GLOG_v"}
    done = subprocess.run([sys.executable, "-m", "kb", "weights", str(tmp_path / "bn.pt"), "--out",
                           str(tmp_path / "bn.ckpt")], capture_output=True, text=True, env=env, timeout=300)
    assert "[WARNING]" not in done.stderr + done.stdout, done.stderr
    assert "dropped:    1 torch keys" in done.stdout and "(num_batches_tracked)" in done.stdout, done.stdout
