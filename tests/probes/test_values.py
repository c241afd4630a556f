"""Parameter values a rewrite is proven for: classes, the values tried, and convert's check."""
from __future__ import annotations

import pytest

from kb.probes import rewrites
from kb.probes.values import alternatives, value_class, value_verdict

LEAKY_RELU = [["input", "POSITIONAL_OR_KEYWORD", None], ["negative_slope", "POSITIONAL_OR_KEYWORD", "0.01"],
              ["inplace", "POSITIONAL_OR_KEYWORD", "False"]]
CONV2D = [["input", "POSITIONAL_OR_KEYWORD", None], ["weight", "POSITIONAL_OR_KEYWORD", None],
          ["bias", "POSITIONAL_OR_KEYWORD", "None"], ["stride", "POSITIONAL_OR_KEYWORD", "1"],
          ["padding", "POSITIONAL_OR_KEYWORD", "0"], ["dilation", "POSITIONAL_OR_KEYWORD", "1"],
          ["groups", "POSITIONAL_OR_KEYWORD", "1"]]


@pytest.mark.parametrize(("value", "cls"), [
    (True, "bool:True"), (0, "num:0"), (1, "num:1"), (3, "num:+"), (5, "num:+"), (0.2, "num:frac"),
    (-1, "num:-1"), (-3, "num:-"), (None, "none"), ("bicubic", "str:bicubic"), ((3, 1), "seq:(num:+,num:1)"),
])
def test_value_classes(value, cls):
    assert value_class(value) == cls


def test_alternatives_are_other_values_of_the_parameters_domain():
    assert alternatives("inplace", False) == [True]
    assert "bicubic" in alternatives("mode", "nearest") and "nearest" not in alternatives("mode", "nearest")
    assert set(alternatives("dim", 1)) >= {0, -1}
    assert alternatives("reduction", "mean")[:2] == ["sum", "none"]
    assert alternatives("weird", object()) == []


RECORD = {"padding": {"proven": ["num:0"], "failed": ["num:1", "num:+"]},
          "stride": {"proven": ["num:1", "num:+"], "failed": []},
          "mode": {"proven": ["str:nearest"], "failed": []}}


def test_a_call_is_checked_against_the_proven_values():
    assert value_verdict(RECORD, "stride", "2") is None  # same class as a proven value
    assert value_verdict(RECORD, "stride", "(2, 2)") is None  # a pair of one class is that class
    assert value_verdict(RECORD, "padding", "(1, 1)") is not None
    assert value_verdict(RECORD, "stride", "(2, 1)") is not None
    assert value_verdict(RECORD, "padding", "0") is None
    assert "differs from torch at padding=1" in value_verdict(RECORD, "padding", "1")
    assert value_verdict(RECORD, "mode", "'bicubic'") == \
        "unproven value: mode='bicubic' (no rewrite probe ran this value)"
    assert value_verdict(RECORD, "stride", "s") is None  # not a literal: every value tried matched
    assert "unproven value: padding=p" in value_verdict(RECORD, "padding", "p")
    assert value_verdict(RECORD, "weight", "w") is None  # a tensor: not varied, not checked
    assert value_verdict(None, "padding", "1") is None


def test_an_axis_proven_at_one_position_is_proven_at_every_position_of_its_kind():
    record = {"dim": {"proven": ["num:1", "num:-1"], "failed": []},
              "dims": {"proven": ["seq:(num:0,num:+,num:1)"], "failed": []},
              "k": {"proven": ["num:1"], "failed": []}}
    assert value_verdict(record, "dim", "3") is None and value_verdict(record, "dim", "0") is None
    assert value_verdict(record, "dim", "-2") is None
    assert value_verdict(record, "dims", "(2, 0, 1)") is None  # three axes from the front
    assert value_verdict(record, "dims", "(3, 2, 1, 0)") is None  # four axes from the front
    assert "unproven value: dims=(0, -1)" in value_verdict(record, "dims", "(0, -1)")  # axes from the back too
    assert "unproven value: k=3" in value_verdict(record, "k", "3")  # an amount, not an axis
    front_failed = {"dim": {"proven": ["num:1"], "failed": ["num:0"]}}
    assert value_verdict(front_failed, "dim", "1") is None  # proven itself
    assert "unproven value: dim=2" in value_verdict(front_failed, "dim", "2")  # its kind failed somewhere


def test_a_variable_is_accepted_where_every_failed_value_raised():
    record = {"p": {"proven": ["num:0", "num:frac"], "failed": ["num:1"]}}
    crashed = ["p=1.0: crash: ValueError: For 'Dropout', the 'p' must be a number in range [0, 1)"]
    differed = ["p=1.0: wrong: max difference 0.5"]
    assert value_verdict(record, "p", "dropout", crashed) is None  # matches torch or raises, never silent
    assert "unproven value: p=dropout" in value_verdict(record, "p", "dropout", differed)
    assert "unproven value: p=dropout" in value_verdict(record, "p", "dropout", crashed + differed)
    assert "unproven value: p=dropout" in value_verdict(record, "p", "dropout")  # no lines: not known to raise
    assert "differs from torch at p=1.0" in value_verdict(record, "p", "1.0", crashed)  # a literal that fails


def test_value_cases_vary_one_literal_parameter_at_a_time():
    pytest.importorskip("torch")
    cases, why = rewrites.plan_calls("torch.nn.functional.leaky_relu", "function", LEAKY_RELU, None)
    assert cases, why
    varied = [c for c in cases if c.varied]
    assert {c.varied for c in varied} == {"negative_slope", "inplace"}
    assert any("inplace=True" in c.source for c in varied)
    assert sum(c.varied == "negative_slope" for c in varied) >= 2  # >= 2 values besides the default
    base = next(c for c in cases if not c.varied)
    assert base.values == {"negative_slope": "num:frac", "inplace": "bool:False"}
    conv, why = rewrites.plan_calls("torch.nn.functional.conv2d", "function", CONV2D, None)
    assert any(c.varied == "padding" and "padding=1" in c.source for c in conv), why
    assert not any(c.varied in ("input", "weight") for c in conv)  # tensors are not varied


def test_proven_values_from_executed_cases():
    from kb.probes.calls import Case

    def case(values, varied, result):
        c = Case(id="torch.f/" + (f"value:{varied}=1" if varied else "keyword"), source="", inputs={},
                 values=values, varied=varied)
        c.result, c.detail = result, "crash: ValueError: pad"
        return c

    values, lines = rewrites.proven_values([
        case({"padding": "num:0", "stride": "num:1"}, "", "pass"),
        case({"padding": "num:1", "stride": "num:1"}, "padding", "crash"),
        case({"padding": "num:0", "stride": "num:+"}, "stride", "pass"),
        case({"padding": "num:0", "stride": "num:-1"}, "stride", "no_cpu_kernel"),
    ])
    assert values == {"padding": {"proven": ["num:0"], "failed": ["num:1"]},
                      "stride": {"proven": ["num:+", "num:1"], "failed": []}}
    assert lines == ["padding=1: crash: crash: ValueError: pad"]
