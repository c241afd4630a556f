"""A tensor method on a receiver msmap cannot type gets its proven rewrite behind a runtime type test
(guarded.py): ``(NEW if isinstance(r, ms.Tensor) else OLD)``.  Each case's receiver comes into a helper
through a tuple, so the converter cannot prove it is a tensor; torch runs the original, MindSpore the
converted code, in both families.  A receiver that is no tensor keeps its own method; a receiver that
is not simple to evaluate twice keeps the marker; GRAPH_MODE compiles only the branch taken."""
from __future__ import annotations

import json

import numpy as np
import pytest

from kb.analysis.convert import convert_source
from kb.analysis.leftovers import left_by_convert
from kb.cli import main
from kb.probes.calls import Case
from tests.analysis.executed import FAMILIES, assert_converted_and_matching, convert_and_run, run_without_torch
from tests.analysis.roundtrip import converted

HEAD = "import numpy as np\nimport torch\n\n\n"
RING = '''class Ring:
    """A list-like object with its own repeat (not torch's)."""

    def __init__(self, values):
        self.values = values

    def repeat(self, n):
        return Ring(self.values * n)


'''

# (id, the helper's body given ``pair`` (two tensors: a, b), the text the conversion holds)
CASES = [
    ("transpose", "state = a.transpose(0, 1)\nreturn state", "state = (a.swapaxes(0, 1) if isinstance(a, ms.Tensor)"),
    ("clone", "return a.clone() + 1", "isinstance(a, ms.Tensor) else a.clone())"),
    ("repeat", "return a.repeat(2, 1, 3)", "else a.repeat(2, 1, 3))"),
    ("softmax-dim", "return a.softmax(dim=-1)", "else a.softmax(dim=-1))"),
    ("squeeze-dim", "d = 1\nreturn b.squeeze(d)", "else b.squeeze(d))"),
    ("detach", "return a.detach() * 2", "else a.detach())"),
    ("any-dim", "return (a > 0.5).any(dim=-1), b.any(dim=0)", "else b.any(dim=0))"),
    ("numpy-of-data", "return a.data.numpy()", "isinstance(a.data, ms.Tensor)"),
    ("subscript-receiver", "seq = [a, b]\nreturn seq[1].transpose(0, 1)", "isinstance(seq[1], ms.Tensor)"),
    ("numpy-array-keeps-its-transpose", "arr = np.arange(6.0).reshape(2, 3)\nreturn arr.transpose(0, 1)",
     "return arr.transpose(0, 1)\n"),  # (a name bound only from NumPy: its own method, no test)
    ("own-repeat-kept", "r = Ring([1, 2])\nreturn r.repeat(3).values", "else r.repeat(3))"),
]


def source(body: str) -> str:
    helper = "def helper(pair):\n    a, b = pair\n" + "".join(f"    {line}\n" for line in body.splitlines())
    return HEAD + (RING if "Ring" in body else "") + helper + "\n\ndef run(x, y):\n    return helper((x, y))\n"


@pytest.fixture(scope="module")
def executed(real_kb, tmp_path_factory):
    return convert_and_run(real_kb, tmp_path_factory, lambda family: [
        Case(id=f"{family}/{cid}", source=source(body), inputs={"x": [2, 3, 4], "y": [3, 1, 4]})
        for cid, body, _ in CASES])


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("cid, body, text", CASES, ids=[c[0] for c in CASES])
def test_a_guarded_tensor_method_gives_torch_s_result(executed, family, cid, body, text):
    case = executed[f"{family}/{cid}"]
    assert text in case.converted or family == "mint", case.converted  # (mint's tensor takes more of torch's calls)
    assert_converted_and_matching(case, body)


def test_converting_again_changes_nothing_and_nothing_is_marked(classic):
    out = converted(classic, source("x = a.transpose(0, 1)\nreturn x.clone(), b.softmax(dim=-1)"))
    assert "# msmap:" not in out and out.count("isinstance(") == 3, out


@pytest.mark.parametrize("expression", ["f(a).transpose(0, 1)", "a[f(0)].transpose(0, 1)",
                                        "pair[0].clone()[0].transpose(0, 1)"])
def test_a_receiver_not_simple_to_evaluate_twice_keeps_the_marker(classic, expression):
    out = converted(classic, source(f"return {expression}").replace("def run", "def f(v):\n    return v\n\n\ndef run"))
    line = next(text for text in out.splitlines() if ".transpose(0, 1)" in text)
    assert "# msmap: if this is a tensor" in line and "swapaxes(0, 1)" not in line, out


def test_the_summary_counts_guarded_uses_as_converted_and_says_how_many(real_kb, capsys, tmp_path):
    path = tmp_path / "helpers.py"
    path.write_text(source("return a.transpose(0, 1), b.clone(), f(a).transpose(0, 1)"))
    main(["convert", "--db", str(real_kb.path), "--device", "CPU", str(path)])
    err = capsys.readouterr().err
    assert "(guarded by a runtime type test: 2)" in err and "1 'if this is a tensor' guesses" in err, err
    result = convert_source(classic_engine(real_kb), path.read_text())
    assert result.guarded == 2 and len(result.unsure) == 1 and result.converted == result.found


def test_scan_does_not_count_a_guarded_use_as_left(real_kb):
    analysis = classic_engine(real_kb).analyze(source("return a.transpose(0, 1), a().clone()").encode())
    left = [u.torch_name for u in analysis.uses if id(u) in left_by_convert(analysis)]
    assert left == ["torch.Tensor.clone"]


def classic_engine(real_kb):
    from kb.analysis.engine import Engine, EngineSettings

    return Engine(real_kb, EngineSettings(device="CPU"))


MODEL = HEAD + '''\
def heads(pair, d):
    q, k = pair
    w = q.transpose(0, 1).softmax(dim=-1) if d else q
    return k.transpose(0, 1), k.repeat(1, 1, 2), w.squeeze(d), k.clone(), k.detach()


class Net(torch.nn.Module):
    def forward(self, x):
        return heads((x * 2, x + 1), 0)
'''
RUN = """
import json
import numpy as np
import mindspore as ms
import converted

x = ms.Tensor(np.load({inputs!r}))
found = {{}}
for mode in ("pynative", "graph"):
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    found[mode] = [o.asnumpy().tolist() for o in converted.Net()(x)]
print(json.dumps(found))
"""


def test_guarded_methods_compile_in_graph_mode(classic, tmp_path, monkeypatch):
    """The compiler folds ``isinstance`` on a tensor and compiles only the branch taken.  (Classic only: mint
    keeps ``k.transpose(0, 1)`` as written, which GRAPH_MODE reads as a full permutation, on a known tensor too.)"""
    import torch

    monkeypatch.chdir(tmp_path)
    text = converted(classic, MODEL)
    assert "# msmap:" not in text and "import torch" not in text and text.count("isinstance(") >= 4, text
    x = np.random.default_rng(0).standard_normal((1, 3, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    scope: dict = {}
    exec(MODEL, scope)
    expected = [o.detach().numpy() for o in scope["Net"]()(torch.from_numpy(x))]
    done = run_without_torch(tmp_path, text, RUN.format(inputs=str(tmp_path / "x.npy")))
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().split("\n")[-1])
    for mode in ("pynative", "graph"):
        for got, want in zip(found[mode], expected, strict=True):
            np.testing.assert_allclose(np.array(got), want, rtol=1e-5, atol=1e-6, err_msg=mode)
