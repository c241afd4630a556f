"""msmap weights end to end: torch checkpoints -> .ckpt files MindSpore loads into the converted models.

All cases run in one subprocess (one mindspore import); it also loads each written .ckpt back into a
fresh model and returns the values, which the test compares with the torch weights.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("mindspore")

ROOT = Path(__file__).resolve().parents[2]
PAIRS = ROOT / "tests" / "verify" / "pairs"
MS = PAIRS / "msnets"
sys.path.insert(0, str(PAIRS))
import torchnets

sys.path.remove(str(PAIRS))

CHILD = textwrap.dedent("""
    import contextlib, io, json, sys
    import numpy as np
    import mindspore
    from kb.cli import main
    from kb.weights.usercode import build
    from pathlib import Path
    out = {}
    for name, argv, model in json.loads(sys.argv[1]):
        so, se = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(so), contextlib.redirect_stderr(se):
            rc = main(["weights", *argv])
        case = {"rc": rc, "stdout": so.getvalue(), "stderr": se.getvalue(), "loaded": None}
        if model and rc == 0:
            net = build(Path(model[0]), model[1])
            not_loaded, _ = mindspore.load_param_into_net(net, mindspore.load_checkpoint(argv[argv.index("--out") + 1]))
            case["not_loaded"] = not_loaded
            case["loaded"] = {p.name: p.asnumpy().tolist() for p in net.get_parameters()}
        out[name] = case
    print("RESULT" + json.dumps(out))
""")


@pytest.fixture(scope="module")
def cases(tmp_path_factory, real_kb):
    tmp = tmp_path_factory.mktemp("weights")
    torch.manual_seed(1)
    models = {"cnn": torchnets.CNN(), "lm": torchnets.TiedLM(), "tagger": torchnets.Tagger(), "mlp": torchnets.MLP()}
    states = {k: {n: v.detach().numpy().copy() for n, v in m.state_dict().items()} for k, m in models.items()}
    for k, m in models.items():
        torch.save(m.state_dict(), tmp / f"{k}.pt")
    from safetensors.torch import save_file

    save_file({k: v.clone() for k, v in models["lm"].state_dict().items()}, tmp / "lm.safetensors")
    bad_init = tmp / "bad_init.py"
    bad_init.write_text("from mindspore import nn\n\n\nclass Net(nn.Cell):\n"
                        "    def __init__(self):\n        super().__init__()\n        raise RuntimeError('no layers yet')\n")

    def case(ckpt, model, out):
        argv = [str(tmp / ckpt), "--out", str(tmp / out), "--json"]
        if model:
            argv += ["--model", f"{model[0]}:{model[1]}"]
        return argv, [str(model[0]), model[1]] if model else None

    spec = {
        "cnn": case("cnn.pt", (MS / "cnn.py", "CNN()"), "cnn.ckpt"),
        "lm_safetensors": case("lm.safetensors", (MS / "lm.py", "TiedLM()"), "lm.ckpt"),
        "tagger": case("tagger.pt", (MS / "tagger.py", "Tagger()"), "tagger.ckpt"),
        "mlp_mint": case("mlp.pt", (MS / "mlp.py", "MLP()"), "mlp.ckpt"),
        "wrong_model": case("cnn.pt", (MS / "lm.py", "TiedLM()"), "wrong.ckpt"),
        "rules_only": case("cnn.pt", None, "rules.ckpt"),
        "rules_only_ambiguous": case("lm.pt", None, "lm_rules.ckpt"),
        "bad_expr": case("cnn.pt", (MS / "lm.py", "Nope()"), "x.ckpt"),
        "bad_init": case("cnn.pt", (bad_init, "Net()"), "y.ckpt"),
    }
    arg = json.dumps([[name, argv, model] for name, (argv, model) in spec.items()])
    env = {**os.environ, "MSMAP_DB": str(real_kb.path)}
    proc = subprocess.run([sys.executable, "-c", CHILD, arg], capture_output=True, text=True, cwd=ROOT,
                          timeout=240, check=False, env=env)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")), None)
    assert line, proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads(line[len("RESULT"):]), states, tmp


def test_cnn_checkpoint_loads_with_renamed_and_reshaped_weights(cases):
    got, states, _ = cases
    c = got["cnn"]
    assert c["rc"] == 0 and c["not_loaded"] == [], c
    rep = json.loads(c["stdout"])
    assert rep["unfilled_ms"] == [] and rep["unused_torch"] == [] and rep["dropped"] == ["bn.num_batches_tracked"]
    assert rep["reshaped"] == ["conv1d.weight"]
    sd, loaded = states["cnn"], c["loaded"]
    np.testing.assert_array_equal(np.array(loaded["bn.moving_variance"], np.float32), sd["bn.running_var"])
    np.testing.assert_array_equal(np.array(loaded["bn.gamma"], np.float32), sd["bn.weight"])
    np.testing.assert_array_equal(np.array(loaded["conv1d.weight"], np.float32)[:, :, 0, :], sd["conv1d.weight"])


def test_safetensors_tied_embedding_written_once(cases):
    got, states, _ = cases
    c = got["lm_safetensors"]
    assert c["rc"] == 0 and c["not_loaded"] == []
    rep = json.loads(c["stdout"])
    assert rep["tied"] == [["head.weight", "emb.embedding_table"]] and rep["written"] == 3
    np.testing.assert_array_equal(np.array(c["loaded"]["emb.embedding_table"], np.float32), states["lm"]["emb.weight"])


def test_lstm_weights_by_name(cases):
    got, states, _ = cases
    c = got["tagger"]
    assert c["rc"] == 0 and c["not_loaded"] == []
    rep = json.loads(c["stdout"])
    assert ["lstm.weight_hh_l1_reverse", "lstm.weight_hh_l1_reverse"] in rep["matched"]
    np.testing.assert_array_equal(np.array(c["loaded"]["lstm.bias_ih_l1_reverse"], np.float32),
                                  states["tagger"]["lstm.bias_ih_l1_reverse"])


def test_mint_model_keeps_torch_names_where_mint_is_used(cases):
    got, _, _ = cases
    c = got["mlp_mint"]
    assert c["rc"] == 0 and c["not_loaded"] == []
    pairs = {tuple(p) for p in json.loads(c["stdout"])["matched"]}
    assert ("act.weight", "act.weight") in pairs and ("norm.weight", "norm.gamma") in pairs
    assert ("bn.running_var", "bn.moving_variance") in pairs


def test_model_that_does_not_fit_exits_1_and_says_what(cases):
    got, _, tmp = cases
    c = got["wrong_model"]
    rep = json.loads(c["stdout"])
    assert c["rc"] == 1
    assert sorted(rep["unfilled_ms"]) == ["emb.embedding_table", "norm.beta", "norm.gamma"]
    assert "conv.weight" in rep["unused_torch"] and (tmp / "wrong.ckpt").exists()


def test_rules_only(cases):
    got, _, _ = cases
    c = got["rules_only"]
    rep = json.loads(c["stdout"])
    assert c["rc"] == 0 and rep["model"] is None and rep["family"] == "classic"
    assert ["bn.running_mean", "bn.moving_mean"] in rep["matched"] and rep["ambiguous"] == []


def test_rules_only_says_what_is_ambiguous_and_exits_1(cases):
    got, _, tmp = cases
    c = got["rules_only_ambiguous"]
    rep = json.loads(c["stdout"])
    assert c["rc"] == 1 and (tmp / "lm_rules.ckpt").exists()
    assert rep["ambiguous"] == ["emb: could be Embedding or Linear; torch names kept",
                                "head: could be Embedding or Linear; torch names kept"]
    assert ["norm.weight", "norm.gamma"] in rep["matched"]


def test_bad_expression_and_failing_constructor_name_file_stage_line(cases):
    got, _, tmp = cases
    assert got["bad_expr"]["rc"] == 2
    assert f"{MS / 'lm.py'}: build: NameError: name 'Nope' is not defined" in got["bad_expr"]["stderr"]
    c = got["bad_init"]
    assert c["rc"] == 2 and "Traceback" not in c["stderr"]
    assert f"{tmp / 'bad_init.py'}:7: build: RuntimeError: no layers yet" in c["stderr"]
