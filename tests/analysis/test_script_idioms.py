"""Training-script idioms that stopped whole projects (issue 29), converted in both families and run next to torch:
typed tensor constructors given data (``torch.FloatTensor(list)``, ``torch.LongTensor(array)``) or sizes."""
from __future__ import annotations

import json
import runpy

import numpy as np
import pytest
import torch

from tests.analysis.executed import run_without_torch
from tests.analysis.roundtrip import converted


@pytest.fixture(params=["classic", "mint"])
def engine(request, classic, mint_cpu):
    return classic if request.param == "classic" else mint_cpu


def _run_both(engine, source: str, tmp_path, call: str) -> tuple[object, object, str]:
    """``source`` run by torch here and converted without torch; ``call`` (an expression on the module ``m``)
    returns plain Python values (lists, floats) on both sides."""
    text = converted(engine, source)
    assert "# msmap:" not in text and "import torch" not in text, text
    (tmp_path / "source.py").write_text(source)
    want = eval(call, {"m": type("M", (), runpy.run_path(str(tmp_path / "source.py")))})
    done = run_without_torch(tmp_path, text, f"""
        import json
        import converted as m
        print(json.dumps({call}))
    """)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), want, text


TYPED = '''\
import numpy as np
import torch


def rows():
    table = [[0.5, 1.25], [2.0, -3.5]]
    ids = np.array([2.7, 0.2, 1.9])
    weights = torch.FloatTensor(table)
    picked = torch.LongTensor(ids)
    counts = torch.IntTensor([[1, 2], [3, 4]])
    mask = torch.BoolTensor([1, 0, 3])
    raw = torch.ByteTensor(np.arange(4))
    exact = torch.DoubleTensor(table) / 3
    empty = torch.FloatTensor(2, 3)
    return [weights[picked.clamp(max=1)].tolist(), str(picked.dtype).split('.')[-1].lower(), counts.sum().item(),
            mask.tolist(), raw.tolist(), exact.tolist(), list(empty.shape), str(raw.dtype).split('.')[-1].lower()]
'''


def test_typed_tensor_constructors_take_data_and_sizes_like_torch(engine, tmp_path):
    got, want, text = _run_both(engine, TYPED, tmp_path, "m.rows()")
    assert "ms_typed_tensor(ms.int64, ids)" in text and "ms_typed_tensor(ms.float32, 2, 3)" in text
    assert got == want
