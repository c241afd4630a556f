"""Every weight rule, checked against the installed torch and mindspore: the rule's example layers
are built in both frameworks and map_weights must fill every MindSpore parameter from the torch
state_dict, with the model (names and shapes) and - where keys alone can tell - without it."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import torch, mindspore
    from mindspore import nn
    from kb.weights import map_weights
    from kb.weights.convert import ms_params_of

    class Wrap(nn.Cell):  # inside a network, parameters are named by attribute path
        def __init__(self, cell):
            super().__init__()
            self.m = cell

    rules = json.loads(sys.stdin.read())
    out = []
    for i, rule in enumerate(rules):
        for ex in rule["examples"]:
            scope = {"torch": torch, "mindspore": mindspore}
            state = {"m." + k: v.detach().numpy() for k, v in eval(ex["torch"], scope).state_dict().items()}
            ms_params = ms_params_of(Wrap(eval(ex["ms"], scope)))
            with_model = map_weights(state, ms_params, rules=rules).as_dict()
            alone = None if rule.get("inner") else map_weights(state, None, rule["family"], rules=rules)
            out.append({"rule": i, "example": ex, "ms_params": {k: list(v[0]) for k, v in ms_params.items()},
                        "with_model": with_model,
                        "alone": None if alone is None else {k: list(v.shape) for k, v in alone.values.items()},
                        "alone_ambiguous": None if alone is None else alone.ambiguous})
    print("RESULT" + json.dumps(out))
""")


@pytest.fixture(scope="module")
def results(real_kb):
    rules = real_kb.weight_rules()
    proc = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps(rules), capture_output=True, text=True,
                          timeout=240, check=False)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")), None)
    assert line, proc.stdout[-2000:] + proc.stderr[-2000:]
    return rules, json.loads(line[len("RESULT"):])


def test_every_rule_has_examples_built_in_both_frameworks(results):
    rules, res = results
    assert {r["rule"] for r in res} == set(range(len(rules)))
    assert len(res) >= 30


def test_with_the_model_every_parameter_is_filled_and_every_key_used(results):
    _, res = results
    for r in res:
        wm = r["with_model"]
        where = f"{r['example']}: {wm}"
        assert wm["unfilled_ms"] == [] and wm["unused_torch"] == [], where
        assert wm["conflicts"] == [] and wm["ambiguous"] == [], where
        assert sorted(m for _, m in wm["matched"]) == sorted(r["ms_params"]), where


def test_the_rules_own_names_are_the_ones_used(results):
    rules, res = results
    for r in res:
        names = rules[r["rule"]]["names"]
        pairs = {t.rsplit(".", 1)[-1]: m.rsplit(".", 1)[-1] for t, m in r["with_model"]["matched"]}
        for t_leaf, m_leaf in names.items():
            if t_leaf in pairs:
                assert pairs[t_leaf] == m_leaf, (r["example"], t_leaf)


def test_rules_alone_give_the_models_names_and_shapes_or_say_why_not(results):
    rules, res = results
    ambiguous = []
    for r in res:
        if r["alone"] is None:  # a structural rule (inner cell) needs the model
            continue
        if r["alone_ambiguous"]:  # e.g. an Embedding's keys are those of a Linear without bias
            assert rules[r["rule"]]["layer"] in r["alone_ambiguous"][0], r
            ambiguous.append(r["example"]["torch"])
            continue
        assert r["alone"] == r["ms_params"], r["example"]
    assert ambiguous == ["torch.nn.Embedding(10, 4)"]
