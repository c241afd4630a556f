"""``Tensor.type`` as held-out batch 6 wrote it (issue 25): with no argument torch gives a type name
('torch.FloatTensor', MindSpore's says 'Float32'), ``a.type(b.type())`` casts to another tensor's dtype, names and
torch's tensor types cast, ``x.type(dtype)`` casts. Converted with ``msmap convert --device CPU`` in both families
(``ms_tensor_type``, rules/tensor_type_names.py) and run next to torch."""
from __future__ import annotations

import pytest

from kb.analysis.convert import convert_source
from tests.analysis.b6_converted import assert_runs_as_torch, cases_fixture
from tests.analysis.executed import FAMILIES

# a layer: its receivers are known tensors (a layer's result, forward's input)
LAYER = '''import torch
import torch.nn as nn


def cast_like(a, b):
    return a.type(b.type())


class Net(nn.Module):
    def __init__(self, dtype=torch.float64):
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.dtype = dtype

    def forward(self, x):
        y = self.lin(x)
        wide = y.type(self.dtype)
        ints = (y * 10).type(torch.LongTensor)
        named = y.type('torch.DoubleTensor')
        same = cast_like(x.long(), wide)
        flag = y + (y.type() == 'torch.FloatTensor') + 2 * (x.type() in ('torch.FloatTensor', 'torch.cuda.FloatTensor'))
        return wide, ints, named, same, flag, y.type(dtype=torch.int32), y.abs().type(torch.HalfTensor)


def make():
    return Net()
'''

# a function whose argument nobody types: the rewrite holds for any receiver (a NumPy dtype's type(v) too)
UNTYPED = '''import numpy as np
import torch


def scale(value, dtype):
    return dtype.type(value)


def run(x):
    kind = np.dtype('float64')
    eps = scale(0.5, kind)
    same = x.type() == torch.ones(2).type()
    return x.type(torch.float64) * float(eps), x.type('torch.IntTensor'), x * same, (x * 3).type(x.double().type())
'''

CASES: dict[str, dict] = {
    "typed-receivers": {"source": LAYER, "inputs": {"x": [2, 4]}, "layer": True},
    "untyped-receivers": {"source": UNTYPED, "inputs": {"x": {"shape": [3, 4], "range": [-3.0, 3.0]}}},
}


executed = cases_fixture(CASES)


@pytest.mark.parametrize("cid", sorted(CASES))
@pytest.mark.parametrize("family", FAMILIES)
def test_type_converts_and_matches_torch(executed, family, cid):
    """Every form converts (no marker, the helper written) and gives torch's values and dtypes."""
    assert_runs_as_torch(executed[f"{family}/{cid}"], "ms_tensor_type")


@pytest.fixture(params=FAMILIES)
def engine(request):
    return request.getfixturevalue(request.param)


def test_tensor_types_elsewhere_are_not_names(engine):
    """Only ``.type``'s dtype becomes a type name: a tensor type in ``isinstance`` or another call keeps its own
    conversion."""
    text = convert_source(engine, "import torch\n\n\ndef f(t):\n    return isinstance(t, torch.FloatTensor), "
                                  "t.to(torch.float64), torch.LongTensor([1, 2])\n").source.decode()
    assert "'torch.FloatTensor'" not in text and "'torch.LongTensor'" not in text
