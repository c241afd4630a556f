"""msmap verify: torch model vs converted MindSpore model, each in its own process.

One verify_many call runs every pair through one torch and one MindSpore process; one CLI run
checks the command end to end.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kb.errors import MsmapError
from kb.verify.compare import compare_outputs
from kb.verify.inputs import make_inputs, parse_spec

ROOT = Path(__file__).resolve().parents[2]
PAIRS = ROOT / "tests" / "verify" / "pairs"
T = PAIRS / "torchnets.py"
MS = PAIRS / "msnets"


def test_input_specs():
    s = parse_spec("2,8:int64:64")
    assert (s.shape, s.dtype, s.low, s.high) == ((2, 8), "int64", 0, 64)
    a, b = make_inputs([s, parse_spec("1,3,4,4")], seed=3)
    assert a.dtype == "int64" and a.min() >= 0 and a.max() < 64 and b.shape == (1, 3, 4, 4)
    again = make_inputs([s, parse_spec("1,3,4,4")], seed=3)
    assert (again[0] == a).all() and (again[1] == b).all()
    assert parse_spec("4:int32:5:9").low == 5
    lengths = parse_spec("=12,9:int64")
    assert make_inputs([lengths], 0)[0].tolist() == [12, 9] and lengths.shape == (2,)
    for bad in ("", "2,x", "2,0", "2:float8", "2:float32:9", "2:int64:9:3", "=1,x", "=3:float32"):
        with pytest.raises(MsmapError, match="--input"):
            parse_spec(bad)


def test_compare_outputs_names_none_and_finds_each_difference():
    import numpy as np

    t = [("output[0]", np.ones((2, 3), np.float32)), ("output[1]", None), ("output[2]", np.arange(3))]
    m = [("output[0]", np.ones((2, 3), np.float32) + 1e-7), ("output[1]", None), ("output[2]", np.arange(3))]
    rows, problem = compare_outputs(t, m, 1e-4, 1e-5)
    assert problem is None and len(rows) == 3 and rows[1]["note"] == "None on both sides"
    m[2] = ("output[2]", np.arange(3.0))
    assert "dtype float" in compare_outputs(t, m, 1e-4, 1e-5)[1]
    m[2] = ("output[2]", np.arange(4))
    assert "shape (4,) != torch (3,)" in compare_outputs(t, m, 1e-4, 1e-5)[1]
    m[0] = ("output[0]", np.ones((2, 3), np.float32) * 1.001)
    assert compare_outputs(t, m, 1e-4, 1e-5)[1].startswith("output[0]: values differ")
    assert "output[2]: only torch has this output" in compare_outputs(t, m[:1], 1e-4, 1e-5)[1]


@pytest.fixture(scope="module")
def verdicts(real_kb):
    pytest.importorskip("torch")
    pytest.importorskip("mindspore")
    from kb.verify.run import Pair, verify_many

    img, tok = [parse_spec("2,3,8,8")], [parse_spec("2,7:int64:40")]
    pairs = {
        "correct": Pair((T, "CNN()"), (MS / "cnn.py", "CNN()"), img),
        "bn_eps": Pair((T, "CNN()"), (MS / "cnn.py", "CNN(eps=1e-3)"), img),
        "extra_parameter": Pair((T, "CNN()"), (MS / "cnn.py", "CNN(extra=True)"), img),
        "lstm": Pair((T, "Tagger()"), (MS / "tagger.py", "Tagger()"), tok, grad=True),
        "tied": Pair((T, "TiedLM()"), (MS / "lm.py", "TiedLM()"), tok, grad=True),
        "lost_tie": Pair((T, "TiedLM()"), (MS / "lm.py", "TiedLM(tie=False)"), tok, grad=True),
        "mint": Pair((T, "MLP()"), (MS / "mlp.py", "MLP()"), [parse_spec("3,8")], grad=True),
        "imports_torch": Pair((T, "CNN()"), (MS / "uses_torch.py", "Net()"), img),
        "torch_side_error": Pair((T, "CNN(classes=-1)"), (MS / "cnn.py", "CNN()"), img),
        "crash": Pair((T, "CNN()"), (MS / "crash.py", "Broken()"), img),
        "odd": Pair((T, "Odd()"), (MS / "odd.py", "Odd()"), [parse_spec("2,3")]),
        "odd_inf_to_zero": Pair((T, "Odd()"), (MS / "odd.py", "Odd('inf_to_zero')"), [parse_spec("2,3")]),
        "odd_renamed_key": Pair((T, "Odd()"), (MS / "odd.py", "Odd('renamed_key')"), [parse_spec("2,3")]),
    }
    return dict(zip(pairs, verify_many(list(pairs.values()), timeout=240, rules=real_kb.weight_rules())))


def test_correct_pair_matches(verdicts):
    v = verdicts["correct"]
    assert v.verdict == "match" and v.exit_code == 0, v.as_dict()
    assert [r["name"] for r in v.outputs] == ["output[0]", "output[1]"]
    assert all(r["ok"] and r["max_abs"] < 1e-5 for r in v.outputs)
    assert v.weights["dropped"] == ["bn.num_batches_tracked"]


def test_batchnorm_eps_difference_is_a_mismatch(verdicts):
    v = verdicts["bn_eps"]
    assert v.verdict == "mismatch" and v.exit_code == 1 and v.stage == "forward"
    assert v.message.startswith("output[0]: values differ")


def test_a_parameter_without_torch_weight_is_an_error_at_the_weights_stage(verdicts):
    v = verdicts["extra_parameter"]
    assert (v.verdict, v.stage, v.side) == ("error", "weights", "mindspore")
    assert v.message == "1 MindSpore parameters got no torch weight: scale"
    assert v.weights["unfilled_ms"] == ["scale"]


def test_lstm_and_embedding_match_with_gradients(verdicts):
    v = verdicts["lstm"]
    assert v.verdict == "match", v.as_dict()
    assert [r["name"] for r in v.outputs] == ["output['tags']", "output['mask']"]
    assert v.outputs[1]["note"] == "None on both sides"  # said, not skipped
    assert {r["name"] for r in v.grads} >= {"grad lstm.weight_ih_l1_reverse", "grad emb.embedding_table"}


def test_tied_weights_match_and_a_lost_tie_shows_in_gradients(verdicts):
    tied, lost = verdicts["tied"], verdicts["lost_tie"]
    assert tied.verdict == "match", tied.as_dict()
    assert tied.weights["tied"] == [["head.weight", "emb.embedding_table"]]
    assert [r["ok"] for r in lost.outputs] == [True]  # same forward ...
    assert lost.verdict == "mismatch" and lost.stage == "grad"  # ... other gradients
    assert lost.message.startswith("grad ")


def test_mint_family_pair_matches(verdicts):
    v = verdicts["mint"]
    assert v.verdict == "match", v.as_dict()
    assert ["act.weight", "act.weight"] in v.weights["matched"]


def test_torch_cannot_be_imported_on_the_mindspore_side(verdicts):
    v = verdicts["imports_torch"]
    assert (v.verdict, v.stage, v.side) == ("error", "import", "mindspore")
    assert v.where == f"{MS / 'uses_torch.py'}:1" and "blocks torch" in v.message


def test_errors_name_stage_side_and_line(verdicts):
    v = verdicts["torch_side_error"]
    assert (v.verdict, v.stage, v.side) == ("error", "build", "torch") and v.exit_code == 2
    assert v.where.startswith(str(T) + ":")
    c = verdicts["crash"]
    assert (c.verdict, c.stage, c.side) == ("error", "forward", "mindspore")
    line = next(i for i, text in enumerate((MS / "crash.py").read_text().splitlines(), 1) if "reshape(7" in text)
    assert c.where == f"{MS / 'crash.py'}:{line}"


def test_cli_json_and_exit_code(real_kb):
    pytest.importorskip("mindspore")
    from tests.conftest import run_msmap

    proc = run_msmap("verify", f"{T}:CNN()", f"{MS / 'cnn.py'}:CNN(eps=1e-3)", "--input", "2,3,8,8", "--json",
                     db=real_kb.path, timeout=240)
    assert proc.returncode == 1, proc.stderr[-1000:]
    out = json.loads(proc.stdout)
    assert out["verdict"] == "mismatch" and out["stage"] == "forward" and len(out["outputs"]) == 2
    assert out["weights"]["unfilled_ms"] == [] and "Traceback" not in proc.stderr
    bad = run_msmap("verify", f"{T}:CNN()", "nofile.py:X()", "--input", "2,3,8,8", db=real_kb.path)
    assert bad.returncode == 2 and "MS_FILE:EXPR 'nofile.py:X()'" in bad.stderr and "no such file" in bad.stderr


def test_outputs_of_every_kind_are_compared_by_key_through_the_processes(verdicts):
    """Issue 28: dict keys in another order, inf/NaN in the same places, plain values and None match."""
    v = verdicts["odd"]
    assert v.verdict == "match", v.as_dict()
    rows = {r["name"]: r for r in v.outputs}
    assert set(rows) == {"output['y']", "output['special']", "output['scale']", "output['act']",
                         "output['none']", "output['n'][0]", "output['n'][1]"}
    assert rows["output['none']"]["note"] == "None on both sides" and rows["output['act']"]["ms"] == "str 'relu'"


def test_inf_against_zero_and_a_renamed_key_are_mismatches(verdicts):
    v = verdicts["odd_inf_to_zero"]
    assert v.verdict == "mismatch" and v.message.startswith("output['special']: values differ"), v.message
    v = verdicts["odd_renamed_key"]
    assert v.verdict == "mismatch" and "output['y']" in v.message and "output['logits']" in v.message, v.message
