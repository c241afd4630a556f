"""The generated kernel probes for MindSpore's same-named in-place tensor methods (kb/probes/inplace_kernels.py):
the method runs as a statement and the receiver is what is compared; a random fill holds when its receiver
changed; a caveat probe never stands for a run of the op (kb.build._no_cpu_kernel)."""
from __future__ import annotations

from kb.build import _no_cpu_kernel
from kb.probes.inplace_kernels import RANDOM_CHECK, probe


def test_the_receiver_after_the_statement_is_compared():
    made = probe("add_", "x.add_(y, alpha=1)", {"x": {"shape": [2, 3]}, "y": {"shape": [2, 3]}}, False)
    assert made["id"] == "kernel/mindspore.Tensor.add_" and made["expect"] == "same"
    assert made["torch_code"].endswith("x.add_(y, alpha=1)\nout = x\n")
    assert made["ms_code"].endswith("x.add_(y, alpha=1)\nout = x.asnumpy()\n")
    assert made["ms_code"].startswith("x = Tensor(rng.uniform(-2.0, 2.0, size=(2, 3)).astype('float32'))")


def test_a_random_fill_holds_when_its_receiver_changed():
    made = probe("random_", "x.random_()", {"x": {"shape": [4], "dtype": "float32", "range": [0.1, 0.9]}}, True)
    assert made["check"] == RANDOM_CHECK and "expect" not in made
    assert "out = [before, x.asnumpy()]" in made["ms_code"]


def test_an_input_without_a_recipe_gives_no_probe():
    assert probe("put_", "x.put_(i, v)", {"x": {"shape": [3]}, "i": "not a spec"}, False) is None


def test_a_caveat_probe_does_not_count_as_running_the_op():
    rows = [{"ms_version": "2.10.0", "ms_api": "mindspore.nn.InstanceNorm2d", "probe": "kernel/x",
             "result": "no_cpu_kernel", "kind": "equivalence"},
            {"ms_version": "2.10.0", "ms_api": "mindspore.nn.InstanceNorm2d", "probe": "caveat/affine",
             "result": "holds", "kind": "caveat"},
            {"ms_version": "2.10.0", "ms_api": "mindspore.ops.abs", "probe": "kernel/y",
             "result": "no_cpu_kernel", "kind": "equivalence"},
            {"ms_version": "2.10.0", "ms_api": "mindspore.ops.abs", "probe": "gen/abs",
             "result": "holds", "kind": "equivalence"}]
    assert _no_cpu_kernel(rows, "2.10.0") == {"mindspore.nn.InstanceNorm2d"}
