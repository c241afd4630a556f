"""torch's private fill helpers behind nn.init.normal_ and nn.init.uniform_ (held-out batch 6: pytorch-tdnn's
Kaldi-style init calls ``torch.nn.init._no_grad_normal_``, which was left as a torch reference): written as the
public fills are (data/curated/init.yaml, ``ms_init_``). Random fills cannot match value for value, so torch's and the
converted code's draws are compared by their distribution, in both families, the MindSpore side without torch."""
from __future__ import annotations

import json

import pytest

from tests.analysis.executed import FAMILIES, run_without_torch
from tests.analysis.roundtrip import converted

SOURCE = '''import torch
import torch.nn as nn


def fills():
    w = torch.zeros(300, 400)
    torch.nn.init._no_grad_normal_(w, 0.5, 400 ** -0.5)
    b = torch.zeros(300, 400)
    nn.init._no_grad_uniform_(b, -0.1, 0.3)
    return w, b
'''

RUN = """
import json


results = {{}}
for family in {families!r}:
    w, b = __import__(f"converted_{{family}}").fills()
    results[family] = [[float(t.asnumpy().mean()), float(t.asnumpy().std()), float(t.asnumpy().min()),
                        float(t.asnumpy().max())] for t in (w, b)]
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def texts(classic, mint):
    return {family: converted(engine, SOURCE) for family, engine in zip(FAMILIES, (classic, mint), strict=True)}


def test_the_private_fills_convert_with_nothing_left(texts):
    for text in texts.values():
        assert "# msmap:" not in text and "torch" not in text.replace("torch's", ""), text
        assert "ms_init_(w, ms.common.initializer.Normal(sigma=400 ** -0.5, mean=0.5))" in text, text


def test_the_converted_fills_draw_from_torch_s_distributions(texts, tmp_path):
    import torch

    scope: dict = {}
    exec(SOURCE, scope)
    torch.manual_seed(0)
    want = [t.numpy() for t in scope["fills"]()]
    for family, text in texts.items():
        (tmp_path / f"converted_{family}.py").write_text(text)
    done = run_without_torch(tmp_path, texts["classic"], RUN.format(families=FAMILIES))
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().split("\n")[-1])
    normal, uniform = want
    for family in FAMILIES:
        (mean, std, _, _), (_, _, low, high) = found[family]
        assert abs(mean - normal.mean()) < 0.005 and abs(std - normal.std()) < 0.005, (family, found[family])
        assert -0.1 <= low < -0.09 and 0.29 < high <= 0.3, (family, found[family])  # torch's own range
        assert abs(found[family][1][0] - uniform.mean()) < 0.005, (family, found[family])
