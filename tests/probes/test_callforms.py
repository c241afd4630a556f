"""Curated call forms (kb.probes.callforms): the merge into recorded rewrite rows, on fake rows (nothing runs),
and the data file's entries."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from kb.probes.callforms import Form, Outcome, literal_values, load, merge, target_call

VERSIONS = {"mindspore": "2.10.0", "torch": "2.13.0"}
DATA = Path(__file__).resolve().parents[2] / "data" / "probes" / "callforms.yaml"


def _row(result: str = "unprobed", values: dict | None = None) -> dict:
    return {"probe": "rewrite/classic/torch.roll", "kind": "rewrite", "torch": "torch.roll", "family": "classic",
            "ms_api": "mindspore.numpy.roll", "result": result, "detail": "no recipe", "passed": [], "failed": [],
            "styles": {}, "values": values or {}, "value_failures": []}


def _out(form: str, result: str, values: dict, api: str = "mindspore.numpy.roll") -> Outcome:
    return Outcome(form, "torch.roll", "classic", api, result, "values differ" if result == "wrong" else "", values)


def test_an_unprobed_row_whose_forms_all_pass_becomes_proven_with_their_values():
    rows = {"rewrite/classic/torch.roll": _row()}
    merge(rows, [_out("a", "pass", {"shifts": "num:+"}), _out("b", "left", {"shifts": "num:-"})], VERSIONS)
    row = rows["rewrite/classic/torch.roll"]
    assert row["result"] == "proven"
    assert row["detail"].startswith("1 curated call forms ran and matched torch") and "callforms.yaml" in row["detail"]
    assert row["values"] == {"shifts": {"proven": ["num:+"], "failed": []}}  # a form that did not run proves nothing


def test_a_failed_form_keeps_the_row_unproven_and_blames_the_value_no_pass_proved():
    rows = {"rewrite/classic/torch.roll": _row()}
    merge(rows, [_out("a", "pass", {"shifts": "num:+"}),
                 _out("b", "wrong", {"shifts": "num:+", "dims": "num:1"})], VERSIONS)
    row = rows["rewrite/classic/torch.roll"]
    assert row["result"] == "unprobed"
    assert "differed or crashed: b" in row["detail"]
    assert row["value_failures"] and row["value_failures"][0].startswith("callform b")


def test_a_failed_row_is_never_made_proven_and_unvaried_parameters_are_not_added():
    values = {"shifts": {"proven": ["num:1"], "failed": ["num:-"]}}
    rows = {"rewrite/classic/torch.roll": _row("failed", values)}
    merge(rows, [_out("a", "pass", {"shifts": "num:+", "dims": "num:0"})], VERSIONS)
    row = rows["rewrite/classic/torch.roll"]
    assert row["result"] == "failed"
    assert row["values"] == {"shifts": {"proven": ["num:+", "num:1"], "failed": ["num:-"]}}  # no "dims": not varied


def test_a_proven_row_learns_failed_values_and_a_class_found_different_is_not_proven():
    values = {"shifts": {"proven": ["num:1"], "failed": []}}
    rows = {"rewrite/classic/torch.roll": _row("proven", values)}
    merge(rows, [_out("a", "wrong", {"shifts": "num:1"})], VERSIONS)
    entry = rows["rewrite/classic/torch.roll"]["values"]["shifts"]
    assert rows["rewrite/classic/torch.roll"]["result"] == "proven"
    assert entry == {"proven": [], "failed": ["num:1"]}


def test_a_target_without_a_row_gets_one_named_after_the_family_s_first():
    rows = {"rewrite/classic/torch.roll": _row()}
    touched = merge(rows, [_out("a", "pass", {}, api="mindspore.ops.roll")], VERSIONS)
    assert [r["probe"] for r in touched] == ["rewrite/classic/torch.roll@mindspore.ops.roll"]
    assert touched[0]["result"] == "proven" and touched[0]["ms_version"] == "2.10.0"


def test_literal_values_bind_as_the_value_gate_does():
    form = Form("f", "torch.nn.functional.elu", "F.elu(x, 2.0, inplace=False)", {"x": [2]})
    assert literal_values(form, "(input, alpha=1.0, inplace=False)") == {"alpha": "num:+", "inplace": "bool:False"}
    method = Form("m", "torch.Tensor.min", "x.min(-1, keepdim=True)", {"x": [2, 3]})
    assert literal_values(method, "(self, dim=None, keepdim=False)") == {"dim": "num:-1", "keepdim": "bool:True"}
    assert literal_values(Form("r", "torch.zeros", "torch.zeros(2, 3)"), "(size)") == {}  # required sizes: any


def test_the_curated_forms_parse_and_name_known_torch_apis(real_kb):
    forms = load(DATA)
    assert len(forms) >= 30
    for form in forms:
        assert real_kb.mapping(form.torch) is not None, form.id
        assert form.compare in ("values", "shape"), form.id
        code = form.setup + "\n" + form.expr
        assert form.layer or all(re.search(rf"\b{name}\b", code) for name in form.inputs), form.id
        assert literal_values(form, None) is not None, form.id
        # a form proves a call of its torch name, or (a class such as torch.autograd.Function) a class built on it
        assert target_call(form) is not None or _base_of_a_class(form), form.id


def _base_of_a_class(form: Form) -> bool:
    import ast

    classes = [n for n in ast.walk(ast.parse(form.setup + "\n" + form.expr)) if isinstance(n, ast.ClassDef)]
    return any(ast.unparse(base) == form.torch for cls in classes for base in cls.bases)


def test_unknown_keys_are_refused(tmp_path):
    path = tmp_path / "forms.yaml"
    path.write_text("- {id: a, torch: torch.abs, expr: 'torch.abs(x)', shape: [2]}\n")
    with pytest.raises(ValueError, match="unknown keys"):
        load(path)
