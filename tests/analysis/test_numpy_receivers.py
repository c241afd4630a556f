"""A local name every assignment binds to a NumPy (or pandas, SciPy) value is no tensor: its methods stay as written,
with no runtime test and no marker; one torch binding, a parameter or a loop target makes it a tensor guess again."""
from __future__ import annotations

import pytest

from kb.analysis.engine import Engine, EngineSettings
from kb.analysis.leftovers import left_by_convert

HEAD = "import numpy as np\nimport torch\n\n"


@pytest.fixture(scope="module")
def engine(real_kb):
    return Engine(real_kb, EngineSettings(device="CPU"))


def _fixed(engine, body: str) -> str:
    return engine.fix_all(HEAD + body).source.decode()


def test_numpy_values_keep_their_own_methods(engine):
    body = "def f(x):\n    a = np.zeros(3)\n    a.abs_()\n    b = np.arange(6.0).reshape(2, 3)\n" \
           "    return a.clip(0, 1).sum(), b.transpose(1, 0)\n"
    fixed = _fixed(engine, body)
    assert "    a.abs_()\n" in fixed and "return a.clip(0, 1).sum(), b.transpose(1, 0)\n" in fixed
    assert "isinstance" not in fixed
    assert not left_by_convert(engine.analyze(HEAD + body))  # nothing for a human: no 'if this is a tensor' marker


@pytest.mark.parametrize("body", [
    "def f(x):\n    a = np.zeros(3)\n    a = torch.from_numpy(a)\n    a.zero_()\n    return a\n",  # then a tensor
    "def f(a):\n    a.zero_()\n    return a\n",  # a parameter: anything
    "def f(xs):\n    a = np.zeros(3)\n    for a in xs:\n        a.zero_()\n    return xs\n",  # a loop target
])
def test_a_name_that_may_hold_a_tensor_is_still_a_guess(engine, body):
    fixed = _fixed(engine, body)
    untouched = "        a.zero_()\n" in fixed if "for a" in body else "    a.zero_()\n" in fixed
    assert not untouched or left_by_convert(engine.analyze(HEAD + body)), fixed  # rewritten, tested or marked
