"""msmap check tells a torch name that needs a package which is not installed (an optional dependency such as
tensorboard, a device plugin such as torch_npu) and a removed torch name from drift."""
from __future__ import annotations

import json
import sys

import yaml

from kb.check.claims import Item
from kb.check.live import MISSING, _resolve, resolve
from kb.check.verify import Verifier
from tests.check.test_check import _clean, needs_mindspore
from tests.conftest import run_msmap

PLUGGED = """\
mappings:
  - torch: torch.npu
    kind: module
    torch_requires: msmap_absent_device_plugin
    advice: Run on Ascend with mindspore.set_device('Ascend').
    provenance: [{kind: curator, ref: test}]
  - torch: torch.npu.set_device
    kind: function
    targets:
      - family: classic
        api: mindspore.set_device
        relation: context_change
        provenance: [{kind: curator, ref: test}]
  - torch: torch.set_deterministic
    kind: function
    torch_versions: {until: "1.8"}
    advice: Use mindspore.set_deterministic(True).
    provenance: [{kind: curator, ref: test}]
  - torch: torch.npu_typo_plugin_installed
    kind: function
    torch_requires: yaml
    advice: Nothing.
    provenance: [{kind: curator, ref: test}]
"""


def _package(tmp_path, monkeypatch):
    """A package whose submodule imports a dependency that is not installed."""
    root = tmp_path / "pkgs" / "msmapfake"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "sub" / "__init__.py").write_text("import msmap_absent_optional_dependency\nThing = 1\n")
    (root / "plain.py").write_text("Other = 2\n")
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    for name in [m for m in sys.modules if m.startswith("msmapfake")]:
        monkeypatch.delitem(sys.modules, name)


def test_live_names_the_optional_dependency_that_stops_an_import(tmp_path, monkeypatch):
    _package(tmp_path, monkeypatch)
    obj, _owner, missing = _resolve("msmapfake.sub.Thing")
    assert missing == "msmap_absent_optional_dependency"
    assert resolve("msmapfake.sub.Thing")[1] is None
    assert _resolve("msmapfake.plain.Other")[0] == 2 and _resolve("msmapfake.plain.Other")[2] is None
    assert _resolve("msmapfake.plain.Missing")[2] is None  # a plain typo names no dependency
    assert _resolve("msmapfake.nosuchmodule.X")[2] is None  # nor does a missing module of the package itself


def _verifier(entries: dict) -> Verifier:
    return Verifier({"torch": entries}, {"torch": "2.13.0", "mindspore": "2.10.0"})


def test_a_missing_optional_dependency_is_reported_as_such_not_as_drift():
    verifier = _verifier({"torch.utils.tensorboard.SummaryWriter": {"exists": False, "missing_module": "tensorboard"},
                          "torch.utils.tensorboard.Typo": {"exists": False}})
    result, detail = verifier.judge(Item("x", "exists", "x exists", "torch.utils.tensorboard.SummaryWriter"))
    assert result == "not_checkable" and detail.startswith("needs tensorboard, which is not installed")
    assert verifier.judge(Item("y", "exists", "y exists", "torch.utils.tensorboard.Typo"))[0] == "drift"


def test_a_declared_device_plugin_excuses_the_name_only_while_the_plugin_is_absent():
    verifier = _verifier({"torch.npu.set_device": {"exists": False}})
    absent = Item("a", "exists", "a exists", "torch.npu.set_device", requires="msmap_absent_device_plugin")
    result, detail = verifier.judge(absent)
    assert result == "not_checkable" and "needs msmap_absent_device_plugin" in detail
    installed = Item("b", "exists", "b exists", "torch.npu.set_device", requires="yaml")  # yaml is installed
    assert verifier.judge(installed) == ("drift", "torch.npu.set_device not found in torch 2.13.0")


@needs_mindspore
def test_check_reports_plugins_and_removed_names_and_still_catches_drift(small_data, tmp_path):
    data = _clean(small_data)
    (data / "curated" / "plugged.yaml").write_text(PLUGGED)
    r = run_msmap("check", "--json", "--data", str(data), "--db", str(tmp_path / "kb.sqlite"))
    out = json.loads(r.stdout)
    rows = {(row["subject"], row["kind"]): row for row in out["results"]}
    for name in ("torch.npu", "torch.npu.set_device"):  # the module and a name below it
        assert rows[(name, "exists")]["result"] == "not_checkable"
        assert rows[(name, "exists")]["detail"].startswith("needs msmap_absent_device_plugin")
    removed = rows[("torch.set_deterministic", "removed")]
    assert removed["result"] == "pass" and "not in torch" in removed["claim"] and "[, 1.8)" in removed["claim"]
    # the plugin is installed, so the missing name is drift, and the only drift
    assert [f["subject"] for f in out["failures"]] == ["torch.npu_typo_plugin_installed"]
    assert r.returncode == 1
    text = run_msmap("check", "--data", str(data), "--db", str(tmp_path / "kb.sqlite")).stdout
    assert "need packages that are not installed, optional dependencies or device plugins: " \
           "msmap_absent_device_plugin" in text


def test_curated_files_declare_requirements_only_for_names_the_installed_torch_lacks():
    """A declared requirement excuses a missing name: it must not sit on a name torch always has."""
    from pathlib import Path

    import torch  # noqa: F401  (the installed torch is the ground truth)

    root = Path(__file__).resolve().parents[2] / "data" / "curated"
    declared = [m["torch"] for f in sorted(root.glob("*.yaml"))
                for m in (yaml.safe_load(f.read_text()) or {}).get("mappings") or [] if m.get("torch_requires")]
    assert declared, "no curated entry declares torch_requires"
    assert [n for n in declared if resolve(n)[0] is not MISSING and not n.startswith("torch.utils.tensorboard")] == []


def test_an_attribute_modules_set_in_init_resolves_on_an_instance():
    """``torch.nn.Module._modules`` is set by ``__init__``, not on the class: checked on a fresh instance."""
    modules, owner = resolve("torch.nn.Module._modules")
    assert isinstance(modules, dict) and owner is not None
    assert resolve("torch.nn.Module._no_such_attribute")[0] is MISSING
    assert resolve("torch.Tensor._no_such_attribute")[0] is MISSING  # only the listed bases are built


def test_a_functional_binding_whose_docstring_misnames_a_parameter_is_read_from_its_schema():
    """torch's F.one_hot docstring says ``tensor``; the binding takes ``input=`` and refuses ``tensor=``."""
    import torch

    from kb.check.live import entry

    got = entry("torch.nn.functional.one_hot")
    names = {row[0] for rows in got.get("overloads", []) for row in rows}
    assert "input" in names
    torch.nn.functional.one_hot(input=torch.tensor([0, 2]), num_classes=3)  # what the schema row claims
    verifier = _verifier({"torch.nn.functional.one_hot": got})
    item = Item("one_hot", "param", "has input", "torch.nn.functional.one_hot", param="input", expect="has_param")
    assert verifier.judge(item)[0] == "pass"
    missing = Item("one_hot", "param", "has tensors", "torch.nn.functional.one_hot", param="tensors",
                   expect="has_param")
    assert verifier.judge(missing)[0] == "drift"
