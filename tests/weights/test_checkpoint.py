"""Reading torch checkpoints: tensors only, nothing from the file is ever executed."""
from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from kb.cli import main
from kb.errors import MsmapError
from kb.weights.checkpoint import load_state


class _Planted:
    """Unpickling this would create a file: the proof that code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_malicious_pickle_is_refused_and_nothing_runs(tmp_path, capsys):
    marker = tmp_path / "ran"
    ckpt = tmp_path / "evil.pt"
    torch.save({"fc.weight": torch.ones(2, 2), "payload": _Planted(marker)}, ckpt)
    with open(tmp_path / "plain.pkl", "wb") as f:  # the same payload as a bare pickle
        pickle.dump(_Planted(marker), f, protocol=2)
    for path in (ckpt, tmp_path / "plain.pkl"):
        rc = main(["weights", str(path), "--out", str(tmp_path / "out.ckpt")])
        err = capsys.readouterr().err
        assert rc == 2
        assert f"{path}: checkpoint: refused" in err and "system" in err
        assert "Traceback" not in err
    assert not marker.exists()
    assert not (tmp_path / "out.ckpt").exists()


@pytest.mark.parametrize("content", [b"", b"not a checkpoint at all\n", b"PK\x03\x04broken zip"])
def test_garbage_file_exits_2_naming_file_and_stage(tmp_path, capsys, content):
    bad = tmp_path / "garbage.pth"
    bad.write_bytes(content)
    assert main(["weights", str(bad), "--out", str(tmp_path / "o.ckpt")]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: checkpoint: not a readable torch checkpoint" in err and "Traceback" not in err


def test_missing_file_and_non_state_dict(tmp_path):
    with pytest.raises(MsmapError, match="no such file"):
        load_state(tmp_path / "absent.pt")
    torch.save([torch.ones(1)], tmp_path / "list.pt")
    with pytest.raises(MsmapError, match="holds a list, not a state_dict"):
        load_state(tmp_path / "list.pt")
    torch.save({"epoch": 3, "optimizer": {"lr": 0.1}}, tmp_path / "meta.pt")
    with pytest.raises(MsmapError, match="no tensors at the top level"):
        load_state(tmp_path / "meta.pt")


def test_nested_state_dict_and_data_parallel_prefix(tmp_path):
    sd = {"module.fc.weight": torch.randn(3, 2), "module.fc.bias": torch.randn(3).to(torch.bfloat16)}
    torch.save({"epoch": 7, "state_dict": sd}, tmp_path / "train.pt")
    state, notes = load_state(tmp_path / "train.pt")
    assert sorted(state) == ["fc.bias", "fc.weight"]
    np.testing.assert_array_equal(state["fc.weight"], sd["module.fc.weight"].numpy())
    assert state["fc.bias"].dtype == np.float32  # bfloat16 widened exactly
    assert any("'state_dict' entry" in n for n in notes) and any("'module.' prefix" in n for n in notes)


def test_safetensors_input(tmp_path):
    from safetensors.torch import save_file

    sd = {"emb.weight": torch.randn(5, 3), "n": torch.arange(4)}
    save_file(sd, tmp_path / "m.safetensors")
    state, _ = load_state(tmp_path / "m.safetensors")
    np.testing.assert_array_equal(state["emb.weight"], sd["emb.weight"].numpy())
    assert state["n"].dtype == np.int64
    (tmp_path / "bad.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{broken")
    with pytest.raises(MsmapError, match="bad.safetensors: checkpoint: not a readable .safetensors"):
        load_state(tmp_path / "bad.safetensors")
