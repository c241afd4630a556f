"""msmap weights on hostile checkpoints and model files (issue 28): no value changed silently,
no internal error, no unbounded expansion.  Each refusal names the file, the key and the kind."""
from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from kb.errors import MsmapError
from kb.weights.convert import refuse_lossy
from kb.weights.mapping import map_weights
from tests.reliability.conftest import msmap, one_line_error

torch = pytest.importorskip("torch")


def ms_param(shape, dtype):
    return {"fc.weight": (shape, dtype)}


# --- values the MindSpore parameter cannot keep ----------------------------------------------

def test_complex_tensor_is_refused_naming_the_key():
    state = {"fc.weight": np.array([1 + 2j, 3 - 4j], np.complex64)}
    for wm in (map_weights(state, None, "classic", rules=[]), map_weights(state, ms_param((2,), "Float32"), rules=[])):
        assert wm.lossy and "fc.weight" in wm.lossy[0] and "complex" in wm.lossy[0]
        with pytest.raises(MsmapError, match=r"fc\.weight.*complex.*") as caught:
            refuse_lossy(wm, "ckpt.pth")
        assert "nothing was written" in str(caught.value)


def test_float64_beyond_float32_is_refused_not_turned_into_inf():
    state = {"fc.weight": np.array([1.0, 1e39], np.float64)}
    wm = map_weights(state, ms_param((2,), "Float32"), rules=[])
    assert wm.lossy == ["fc.weight -> fc.weight: values up to 1e+39 exceed Float32's range (largest 3.4e+38)"]
    with pytest.raises(MsmapError, match="1 torch tensor cannot be stored"):
        refuse_lossy(wm, "ckpt.pth")
    assert map_weights(state, ms_param((2,), "BFloat16"), rules=[]).lossy  # bfloat16: float32's range


def test_float64_parameter_keeps_float64_values():
    state = {"fc.weight": np.array([1.0, 1e39], np.float64)}
    wm = map_weights(state, ms_param((2,), "Float64"), rules=[])
    assert not wm.lossy and wm.values["fc.weight"].dtype == np.float64 and wm.values["fc.weight"][1] == 1e39
    refuse_lossy(wm, "ckpt.pth")


def test_inf_already_in_torch_and_in_range_values_pass():
    state = {"fc.weight": np.array([np.inf, -np.inf, np.nan, 3e38], np.float64)}
    assert not map_weights(state, ms_param((4,), "Float32"), rules=[]).lossy


def test_integers_that_do_not_fit_are_refused():
    state = {"fc.weight": np.array([0, 2**40], np.int64)}
    assert "do not fit in Int32" in map_weights(state, ms_param((2,), "Int32"), rules=[]).lossy[0]
    assert not map_weights({"fc.weight": np.array([0, 7], np.int64)}, ms_param((2,), "Int32"), rules=[]).lossy


# --- tensors without convertible values -------------------------------------------------------

def save(tmp_path: Path, name: str, state: dict) -> Path:
    path = tmp_path / name
    torch.save(state, path)
    return path


def test_float8_is_read_exactly_as_float32_with_a_note(tmp_path):
    from kb.weights.checkpoint import load_state

    values = torch.tensor([0.5, -2.0, 448.0])
    state, notes = load_state(save(tmp_path, "f8.pth", {"w": values.to(torch.float8_e4m3fn), "b": torch.ones(1)}))
    assert state["w"].dtype == np.float32 and state["w"].tolist() == values.tolist()
    assert any("float8_e4m3fn" in n and "w" in n for n in notes), notes


@pytest.mark.parametrize("make, words", [
    (lambda: torch.ones(2, 2).to_sparse(), ["'w'", "sparse", "sparse_coo"]),
    (lambda: torch.ones(2, 2).to_sparse_csr(), ["'w'", "sparse", "sparse_csr"]),
    (lambda: torch.empty(2, 2, device="meta"), ["'w'", "meta tensor"]),
    (lambda: torch.quantize_per_tensor(torch.ones(2), 0.1, 0, torch.qint8), ["'w'", "quantized", "qint8"]),
], ids=["sparse_coo", "sparse_csr", "meta", "quantized"])
def test_tensors_without_values_are_named_by_key_and_kind(tmp_path, make, words):
    from kb.weights.checkpoint import load_state

    try:
        path = save(tmp_path, "odd.pth", {"w": make(), "b": torch.ones(1)})
    except (RuntimeError, NotImplementedError) as exc:  # this torch cannot save the kind at all
        pytest.skip(f"torch cannot save it: {exc}")
    try:
        state, _ = load_state(path)
    except MsmapError as exc:
        assert str(exc).startswith(f"{path}: checkpoint: 1 tensor cannot be converted")
        assert all(w in str(exc) for w in words), exc
    else:
        pytest.fail(f"read {sorted(state)} from a checkpoint holding a {words[1]} tensor")


def test_sparse_checkpoint_on_the_command_line_is_one_clear_line(env, tmp_path):
    path = save(tmp_path, "sparse.pth", {"w": torch.ones(2, 2).to_sparse()})
    done = msmap(env, "weights", str(path), "--out", str(tmp_path / "o.ckpt"))
    one_line_error(done, 2, "'w'", "sparse")
    assert not (tmp_path / "o.ckpt").exists()


# --- a deflated checkpoint that expands far beyond its size ----------------------------------

def bomb(tmp_path: Path, megabytes: int) -> Path:
    """A torch zip checkpoint whose tensor data is re-stored deflated: ``megabytes`` of zeros."""
    src = save(tmp_path, "small.pth", {"w": torch.zeros(4)})
    path = tmp_path / "bomb.pth"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename.endswith("/data/0"):
                data = bytes(megabytes << 20)
            zout.writestr(info.filename, data)
    return path


def test_expansion_beyond_the_default_limit_is_refused_before_loading(env, tmp_path):
    path = bomb(tmp_path, 100)
    assert path.stat().st_size < 1 << 20
    done = msmap(env, "weights", str(path), "--out", str(tmp_path / "o.ckpt"))
    line = one_line_error(done, 2, str(path), "at least 100 MiB", "--max-expanded-size")
    assert "expand to more than 65 MiB" in line, line  # 10 x 0.1 MiB + 64 MiB


def test_a_member_whose_header_understates_its_size_is_inflated_to_find_out(tmp_path):
    """torch's reader inflates a member whatever its header declares (16 bytes declared, 100 MiB
    inflated: +100 MiB of memory), so the declared sizes alone prove nothing."""
    import struct

    from kb.weights.checkpoint import check_expanded_size

    path = bomb(tmp_path, 100)
    raw = bytearray(path.read_bytes())
    real = struct.pack("<I", 100 << 20)
    assert raw.count(real) == 2  # the local header and the central directory
    path.write_bytes(raw.replace(real, struct.pack("<I", 16)))
    with zipfile.ZipFile(path) as zf:
        assert max(i.file_size for i in zf.infolist()) < 1000  # the lie
    with pytest.raises(MsmapError, match=r"expand to more than 65 MiB \(at least 65 MiB\)"):
        check_expanded_size(path)


def test_the_limit_is_configurable(tmp_path):
    from kb.weights.checkpoint import check_expanded_size

    path = bomb(tmp_path, 3)
    check_expanded_size(path)  # within the default
    with pytest.raises(MsmapError, match="expand to more than 1 MiB"):
        check_expanded_size(path, 1 << 20)


# --- the model file exits ---------------------------------------------------------------------

@pytest.mark.parametrize("code", ["import sys\nsys.exit(0)\n", "raise SystemExit(3)\n", "exit()\n"])
def test_a_model_file_that_exits_is_an_error_naming_it(tmp_path, code):
    from kb.weights.usercode import UserCodeError, build

    model = tmp_path / "net.py"
    model.write_text(code)
    with pytest.raises(UserCodeError) as caught:
        build(model, "Net()")
    assert caught.value.stage == "import" and "the model code exited" in str(caught.value)
    assert f"{model}:" in str(caught.value)


def test_a_model_that_exits_while_building_is_an_error(tmp_path):
    from kb.weights.usercode import UserCodeError, build

    model = tmp_path / "net.py"
    model.write_text("import sys\n\ndef Net():\n    sys.exit(0)\n")
    with pytest.raises(UserCodeError, match="build: the model code exited") as caught:
        build(model, "Net()")
    assert caught.value.where == f"{model}:4"


# --- no numpy: the dependency check comes before any import of it ------------------------------

@pytest.mark.parametrize("command", [["weights", "x.pth", "--out", "y.ckpt"],
                                     ["verify", "a.py:A()", "b.py:B()", "--input", "1"]])
def test_without_numpy_the_command_says_what_to_install(tmp_path, command):
    import subprocess

    from tests.conftest import ROOT

    code = ("import sys; sys.modules['numpy'] = None\n"  # import numpy fails, find_spec says absent
            "from kb.cli import main\nsys.exit(main(sys.argv[1:]))\n")
    done = subprocess.run([sys.executable, "-c", code, *command], capture_output=True, text=True, cwd=tmp_path,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=60)
    one_line_error(done, 2, "needs numpy", "pip install 'numpy<2'")


def test_a_view_repeating_one_number_is_refused_before_it_is_written_out(env, tmp_path):
    """torch.save keeps a view's strides: 1.5 KB holding a 100000 x 100000 tensor (40 GB written out)."""
    path = save(tmp_path, "expanded.pth", {"w": torch.zeros(1).expand(100_000, 100_000), "b": torch.ones(2)})
    assert path.stat().st_size < 4096
    done = msmap(env, "weights", str(path), "--out", str(tmp_path / "o.ckpt"))
    one_line_error(done, 2, "'w' (100000, 100000)", "38,147 MiB", "--max-expanded-size")


def test_a_fifo_or_folder_as_checkpoint_is_named_for_what_it_is(tmp_path):
    import os

    from kb.weights.checkpoint import load_state

    fifo = tmp_path / "pipe.pth"
    os.mkfifo(fifo)
    with pytest.raises(MsmapError, match="pipe.pth: checkpoint: a FIFO, not a regular file"):
        load_state(fifo)  # (and does not wait for a writer)
    with pytest.raises(MsmapError, match="checkpoint: a folder, not a regular file"):
        load_state(tmp_path)
