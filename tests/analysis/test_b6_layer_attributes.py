"""Attributes a torch layer has that the MindSpore layer names otherwise (held-out batch 6's rtdl
``self.embeddings[0].embedding_dim`` on a ModuleList of classic Embeddings): read from the installed libraries and
checked against the knowledge base's weight rules (``attributes``, data/curated/weights.yaml), and converted where
the layer is read through a container's index or a loop over it (rules/layer_parameters.py). Conversion tested
next to torch in both families."""
from __future__ import annotations

import inspect
import json

import pytest

from tests.analysis.b6_converted import assert_runs_as_torch, cases_fixture
from tests.analysis.executed import FAMILIES, run_without_torch

CONTAINED = '''import torch
import torch.nn as nn


class Categorical(nn.Module):
    def __init__(self, cards=(3, 5), d=4):
        super().__init__()
        self.embeddings = nn.ModuleList([nn.Embedding(x, d) for x in cards])
        self.heads = nn.ModuleList(nn.Linear(d, 2) for _ in cards)
        self.reset_parameters()

    def reset_parameters(self):
        d_rsqrt = self.embeddings[0].embedding_dim ** -0.5
        for m in self.embeddings:
            nn.init.uniform_(m.weight, -d_rsqrt, d_rsqrt)

    def forward(self, x):
        n = self.embeddings[-1].num_embeddings + self.heads[0].out_features + self.heads[1].in_features
        parts = [self.heads[i](self.embeddings[i](x[..., i])) for i in range(len(self.embeddings))]
        return torch.stack(parts, -2) * n


def make():
    return Categorical()
'''

executed = cases_fixture({"contained-layers": {"source": CONTAINED, "layer": True,
                                               "inputs": {"x": {"shape": [4, 2], "dtype": "int64", "range": [0, 2]}}}})


@pytest.mark.parametrize("family", FAMILIES)
def test_attributes_read_through_containers_convert_and_match_torch(executed, family):
    assert_runs_as_torch(executed[f"{family}/contained-layers"])


SIMPLE = (bool, int, float, str, tuple, list)


def _plain(value):
    return list(value) if isinstance(value, tuple) else value


def _torch_attributes(constructor: str) -> dict:
    """The constructor's arguments the torch layer keeps as attributes of plain values."""
    import torch  # noqa: F401 - the examples name it

    layer = eval(constructor)  # noqa: S307 - the knowledge base's own example constructors
    names = inspect.signature(type(layer).__init__).parameters
    return {n: _plain(getattr(layer, n)) for n in names if n not in ("self", "device", "dtype")
            and isinstance(getattr(layer, n, None), SIMPLE)}


def test_weight_rules_name_every_attribute_mindspore_keeps_otherwise(real_kb, tmp_path):
    """For each weight rule's example, a torch attribute the MindSpore layer lacks by that name but holds under
    another name with the same value is in the rule's ``attributes``, and every mapping there names an attribute
    the MindSpore layer has, of the torch value's type."""
    rules = [r for r in real_kb.weight_rules() if r.get("examples")]
    pairs = [(r, e) for r in rules for e in r["examples"]]
    (tmp_path / "ctors.json").write_text(json.dumps([e["ms"] for _, e in pairs]))
    done = run_without_torch(tmp_path, "", f"""
        import json
        import mindspore
        out = []
        for ctor in json.loads(open({str(tmp_path / "ctors.json")!r}).read()):
            cell, found = eval(ctor), {{}}
            for name in dir(cell):
                value = getattr(cell, name, None) if not name.startswith('_') else None
                if isinstance(value, (bool, int, float, str, tuple, list)):
                    found[name] = list(value) if isinstance(value, tuple) else value
            out.append(found)
        print(json.dumps(out, default=str))
    """)
    assert done.returncode == 0, done.stderr[-2000:]
    cells = json.loads(done.stdout.strip().splitlines()[-1])
    missing, wrong = [], []
    for (rule, example), ms_side in zip(pairs, cells, strict=True):
        mapped = rule.get("attributes") or {}
        for name, value in _torch_attributes(example["torch"]).items():
            if name in mapped:  # (the value may be MindSpore's default where torch's differs: convert writes it)
                if type(ms_side.get(mapped[name])) is not type(value):
                    wrong.append(f"{example['ms']}: {name} -> {mapped[name]} holds {ms_side.get(mapped[name])!r}, "
                                 f"torch {value!r}")
                continue
            if name in ms_side:
                continue
            others = sorted(k for k, v in ms_side.items() if v == value and type(v) is type(value))
            if len(others) == 1:
                missing.append(f"{rule['layer']} ({rule['family']}): {name} -> {others[0]}")
    assert not wrong, wrong
    assert not missing, missing
