"""msmap snapshot: docstring signatures, default text, file layout, subprocess runs."""
from __future__ import annotations

import enum
import json
import sys
from pathlib import Path

import pytest

from kb.cli import main
from kb.errors import MsmapError
from kb.introspect.describe import default_text, describe, format_signature
from kb.introspect.docsig import parse_doc_signature
from kb.introspect.runner import run_snapshot
from kb.introspect.snapfile import dumps, find

DATA = Path(__file__).resolve().parents[1] / "data"
TORCH_BUCKETS = {
    "torch", "torch.Tensor", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils",
    "torch.nn.Module", "torch.optim", "torch.optim.lr_scheduler", "torch.autograd", "torch.utils.data",
    "torch.distributed", "torch.linalg", "torch.fft", "torch.special", "torch.cuda", "torch.accelerator",
    "torch.amp",
}


# ------------------------------------------------------------ docstrings
@pytest.mark.parametrize("doc, expected", [
    pytest.param("\nadd(input, other, *, alpha=1, out=None) -> Tensor\n\nAdds.",
                 "(input, other, *, alpha=1, out=None)", id="torch-builtin"),
    pytest.param("\nfull_like(input, fill_value, \\*, dtype=None) -> Tensor\n",
                 "(input, fill_value, *, dtype=None)", id="rest-escaped-star"),
    pytest.param("zeros(*size, *, out=None) -> Tensor", "(*size, out=None)", id="variadic-then-star"),
    pytest.param("view(*shape)\nReturns a view.", "(*shape)", id="no-return-note"),
    pytest.param("pad(input,\n    pad, mode='constant') -> Tensor", "(input, pad, mode='constant')", id="wrapped"),
    pytest.param("frombuffer(buffer: object, count: int = -1) -> object", "(buffer, count=-1)", id="annotated"),
    pytest.param("max(input) -> Tensor\n\nmax(input, dim, keepdim=False) -> (Tensor, LongTensor)",
                 "(input)", id="first-overload"),
    pytest.param("f(*args, **kwargs)\nOverloaded function.\n\n1. f(self: X, a: int = 3) -> None\n",
                 "(self, a=3)", id="pybind-overloads"),
])
def test_docstring_signatures(doc, expected):
    assert format_signature(parse_doc_signature(doc)) == expected


@pytest.mark.parametrize("doc", [
    None, "", "Computes relu(x) element-wise.", ".. code-block::", "f(a, b) and more prose", "f(a, ...)",
])
def test_docstrings_without_a_signature_give_none(doc):
    assert parse_doc_signature(doc) is None


def test_class_docstring_must_name_the_class():
    assert parse_doc_signature("Event(device=None)", name="Event") == [["device", "POSITIONAL_OR_KEYWORD", "None"]]
    assert parse_doc_signature("Other(x)", name="Event") is None


# ------------------------------------------------------------ describe
class Color(str, enum.Enum):
    RED = "red"


def test_default_text_is_literal_and_stable():
    assert default_text((1,)) == "(1,)"
    assert default_text({"b", "a"}) == "{'a', 'b'}"
    assert default_text(Color.RED) == "Color.RED"
    assert default_text(len) == "<function len>"
    assert default_text(object()) == "<object object>"  # no memory address
    assert default_text(float("inf")) == "inf"


def test_describe_drops_self_and_unwraps_generic_decorators():
    import functools

    def register(init):
        def wrapper(self, *args, **kwargs):
            return init(self, *args, **kwargs)
        return wrapper

    class Opt:
        @register
        def __init__(self, params, lr=1e-3, *, foreach=None):
            pass

        def step(self, closure=None):
            pass

    entry = describe(Opt, "class")
    assert entry["signature"] == "(params, lr=0.001, *, foreach=None)"
    assert entry["sig_source"] == "inspect"
    assert describe(Opt.step, "method", method=True)["params"] == [["closure", "POSITIONAL_OR_KEYWORD", "None"]]
    generic = functools.partial(lambda *a, **k: None)
    assert describe(generic, "function")["sig_source"] == "none"


def test_format_signature_marks_positional_only_and_keyword_only():
    rows = [["a", "POSITIONAL_ONLY", None], ["b", "POSITIONAL_OR_KEYWORD", "1"],
            ["c", "KEYWORD_ONLY", "None"], ["kw", "VAR_KEYWORD", None]]
    assert format_signature(rows) == "(a, /, b=1, *, c=None, **kw)"


def test_snapshot_text_has_one_api_per_line_in_order():
    snap = {"framework": "torch", "version": "2.13.0", "apis": {
        "torch.b": {"kind": "function", "signature": "()", "params": [], "sig_source": "inspect", "namespace": "torch"},
        "torch.a": {"kind": "dtype", "signature": None, "params": [], "sig_source": "none", "namespace": "torch"},
    }}
    text = dumps(snap)
    assert json.loads(text) == snap
    lines = text.splitlines()
    assert lines[1].startswith('"torch.a": {"kind": "dtype"') and lines[2].startswith('"torch.b"')
    assert dumps(json.loads(text)) == text


# ------------------------------------------------------------ subprocess runs
def test_torch_snapshot_in_a_subprocess_matches_the_committed_one(tmp_path):
    path = run_snapshot("torch", tmp_path, python=sys.executable)
    snap = json.loads(path.read_text())
    assert path.name == f"torch-{snap['version']}.json" and "+" not in snap["version"]
    apis = snap["apis"]
    assert {entry["namespace"] for entry in apis.values()} == TORCH_BUCKETS
    assert apis["torch.add"]["sig_source"] == "docstring"
    assert apis["torch.add"]["signature"] == "(input, other, *, alpha=1, out=None)"
    assert apis["torch.nn.Linear"]["signature"].startswith("(in_features, out_features, bias=True")
    assert apis["torch.float32"]["kind"] == "dtype"
    assert apis["torch.optim.Optimizer.zero_grad"]["kind"] == "method"
    assert apis["torch.Tensor.shape"]["kind"] == "attribute"
    assert not any(name.split(".")[-1].startswith("_") for name in apis)
    assert "torch.Graph" not in apis and "torch.FloatStorage" not in apis  # TorchScript IR, legacy storage
    committed = DATA / "snapshots" / path.name
    assert committed.is_file(), f"no committed snapshot for {path.name}: run `msmap snapshot`"
    assert committed.read_bytes() == path.read_bytes()


def test_mindspore_snapshot_uses_canonical_namespaces(tmp_path):
    path = run_snapshot("mindspore", tmp_path)
    apis = json.loads(path.read_text())["apis"]
    assert apis["mindspore.mint.nn.functional.relu"]["namespace"] == "mindspore.mint.nn.functional"
    assert apis["mindspore.mint.ones"]["kind"] == "function"  # missing from mint.__all__, found via dir()
    assert apis["mindspore.float32"]["kind"] == "dtype"
    assert apis["mindspore.nn.Cell.construct"]["kind"] == "method"
    assert "mindspore.mint.Tensor" not in apis and "mindspore.mint.softmax_ext" not in apis
    assert (DATA / "snapshots" / path.name).read_bytes() == path.read_bytes()


def test_missing_framework_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    fake = tmp_path / "shadow" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('simulated: no torch here')\n")
    monkeypatch.setenv("PYTHONPATH", str(fake.parent))
    with pytest.raises(MsmapError) as err:
        run_snapshot("torch", tmp_path / "out")
    assert err.value.exit_code == 2
    assert "torch is not importable" in str(err.value) and "pip install torch==2.13.0" in str(err.value)
    assert main(["snapshot", "torch", "--out-dir", str(tmp_path / "out")]) == 2
    stderr = capsys.readouterr().err
    assert stderr.count("\n") == 1 and "Traceback" not in stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_committed_snapshots_are_complete():
    assert find(DATA / "snapshots", "torch"), "no torch snapshot committed"
    versions = [p.name for p in find(DATA / "snapshots", "mindspore")]
    assert len(versions) >= 2 and versions[-1] == "mindspore-2.10.0.json"
