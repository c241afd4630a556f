"""Held-out batch 6, cause 2: ``torch.utils._pytree`` (hyper-connections, denoising-diffusion's xm): ``MsPytree``
(data/curated/pytree.yaml), torch's pytree in plain Python, written into the converted file. The converted
functions run next to torch's on generated nested structures (lists, tuples, namedtuples, dicts, OrderedDicts,
deques, None), and a module that flattens and rebuilds tensors runs in both families beside torch."""
from __future__ import annotations

import collections

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.analysis.executed import FAMILIES, assert_converted_and_matching, one_case_per_family
from tests.analysis.roundtrip import converted

WRAPPERS = '''import torch.utils._pytree as pytree
from torch.utils._pytree import tree_map


def flatten(tree):
    return pytree.tree_flatten(tree)


def unflatten(leaves, spec):
    return pytree.tree_unflatten(leaves, spec)


def mapped(func, tree):
    return tree_map(func, tree)


def mapped_with(func, tree, other):
    return pytree.tree_map(func, tree, other)


def leaves(tree):
    return pytree.tree_leaves(tree, is_leaf=lambda t: isinstance(t, list) and len(t) == 1)


def structure(tree):
    return pytree.tree_structure(tree)


def every(tree):
    return pytree.tree_all(lambda t: t is not None, tree), pytree.tree_any(lambda t: t is None, tree)
'''

Pair = collections.namedtuple("Pair", ["first", "second"])
KEYS = st.sampled_from("abcd")
TREES = st.recursive(
    st.none() | st.integers(-5, 5) | st.floats(-2, 2, allow_nan=False),
    lambda inner: st.lists(inner, max_size=3) | st.lists(inner, max_size=3).map(tuple)
    | st.dictionaries(KEYS, inner, max_size=3) | st.builds(Pair, inner, inner)
    | st.dictionaries(KEYS, inner, max_size=3).map(collections.OrderedDict)
    | st.lists(inner, max_size=3).map(collections.deque),
    max_leaves=10)


@pytest.fixture(scope="module")
def sides(classic, mint):
    """torch's functions, and the converted ones of each family (plain Python: no MindSpore import needed)."""
    spaces = {"torch": {}}
    exec(compile(WRAPPERS, "torch_side", "exec"), spaces["torch"])
    for family, engine in (("classic", classic), ("mint", mint)):
        text = converted(engine, WRAPPERS)
        assert "import torch" not in text and "from torch" not in text and "MsUnconverted" not in text \
            and "msmap:" not in text and "import mindspore" not in text, text
        spaces[family] = {}
        exec(compile(text, family, "exec"), spaces[family])
    return spaces


def outcome(function, *args):
    try:
        return repr(function(*args))
    except ValueError:
        return "ValueError"


@settings(max_examples=40, deadline=None)
@given(tree=TREES, other=TREES)
def test_helper_is_torch_s_pytree(sides, tree, other):
    want = sides["torch"]
    for family in FAMILIES:
        got = sides[family]
        leaves, spec = got["flatten"](tree)
        torch_leaves, torch_spec = want["flatten"](tree)
        assert repr(leaves) == repr(torch_leaves) and spec.num_leaves == torch_spec.num_leaves
        assert repr(got["unflatten"]([(v, 1) for v in leaves], spec)) == \
            repr(want["unflatten"]([(v, 1) for v in torch_leaves], torch_spec))
        assert repr(got["mapped"](lambda v: [v], tree)) == repr(want["mapped"](lambda v: [v], tree))
        assert outcome(got["mapped_with"], lambda a, b: (a, b), tree, other) == \
            outcome(want["mapped_with"], lambda a, b: (a, b), tree, other)
        same = got["mapped"](lambda v: 0, tree)
        assert outcome(got["mapped_with"], lambda a, b: (a, b), tree, same) == \
            outcome(want["mapped_with"], lambda a, b: (a, b), tree, same)
        assert (got["structure"](tree) == got["structure"](other)) == \
            (want["structure"](tree) == want["structure"](other))
        assert repr(got["leaves"](got["mapped"](lambda v: [v], tree))) == \
            repr(want["leaves"](want["mapped"](lambda v: [v], tree)))
        assert got["every"](tree) == want["every"](tree)
        assert outcome(got["unflatten"], leaves + [0], spec) == outcome(want["unflatten"], torch_leaves + [0],
                                                                          torch_spec)


MODULE = '''import torch
import torch.nn as nn
from torch.utils._pytree import tree_flatten, tree_unflatten, tree_map


class Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def branch(self, x):
        return self.proj(x), {"scale": x.mean(), "extra": [x * 2, None]}

    def forward(self, x):
        out = self.branch(x)
        (branch_out, *rest), spec = tree_flatten(out)
        branch_out = branch_out + x
        rebuilt = tree_unflatten((branch_out, *rest), spec)
        doubled = tree_map(lambda t: t * 2 if t is not None else t, rebuilt)
        return doubled[0] + doubled[1]["scale"] + doubled[1]["extra"][0]


def make():
    return Residual()
'''


@pytest.fixture(scope="module")
def executed(real_kb, tmp_path_factory):
    return one_case_per_family(real_kb, tmp_path_factory, "pytree-module", source=MODULE, inputs={"x": [2, 4]},
                               layer=True)


@pytest.mark.parametrize("family", FAMILIES)
def test_module_flattening_tensors_runs_as_torch(executed, family):
    assert_converted_and_matching(executed[f"{family}/pytree-module"], "pytree in a module")
