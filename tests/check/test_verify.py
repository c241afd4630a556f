"""Judging single facts: default normalisation, parameter claims, relation drift."""
from __future__ import annotations

import pytest

from kb.check.claims import Item
from kb.check.verify import Verifier, param_drift, same_default


@pytest.mark.parametrize("a, b, same", [
    pytest.param("0.5", "5e-1", True, id="float-forms"),
    pytest.param("'same'", '"same"', True, id="quotes"),
    pytest.param("True", "1", False, id="bool-is-not-int"),
    pytest.param("0", "0.0", True, id="int-float"),
    pytest.param("(1, 1)", "[1, 1]", True, id="tuple-list"),
    pytest.param("mstype.float32", "mindspore.float32", True, id="dtype-alias"),
    pytest.param("None", "'None'", False, id="none-vs-string"),
])
def test_same_default(a, b, same):
    assert same_default(a, b) is same


LIVE = {"mindspore": {"mindspore.nn.Flatten": {"exists": True, "kind": "class", "signature": "(start_dim=1, end_dim=-1)",
                                               "params": [["start_dim", "POSITIONAL_OR_KEYWORD", "1"],
                                                          ["end_dim", "POSITIONAL_OR_KEYWORD", "-1"]],
                                               "sig_source": "inspect"},
                      "mindspore.mint.max": {"exists": True, "kind": "function", "signature": None, "params": [],
                                             "sig_source": "none"}},
        "torch": {"torch.flatten": {"exists": True, "kind": "function", "signature": "(input, start_dim=0, end_dim=-1)",
                                    "params": [["input", "POSITIONAL_OR_KEYWORD", None],
                                               ["start_dim", "POSITIONAL_OR_KEYWORD", "0"],
                                               ["end_dim", "POSITIONAL_OR_KEYWORD", "-1"]], "sig_source": "docstring"}}}
V = Verifier(LIVE, {"mindspore": "2.10.0", "torch": "2.13.0"})


def item(api, expect, param=None, value=None, **kw):
    return Item("s", "claim:" + expect, "c", api, param=param, value=value, expect=expect, **kw)


def test_parameter_claims():
    assert V.judge(item("mindspore.nn.Flatten", "default", "start_dim", "1"))[0] == "pass"
    assert V.judge(item("mindspore.nn.Flatten", "default", "start_dim", "0")) == (
        "drift", "default of start_dim is 1 in mindspore 2.10.0, not 0")
    assert V.judge(item("mindspore.nn.Flatten", "lacks_param", "inplace"))[0] == "pass"
    assert V.judge(item("mindspore.nn.Flatten", "has_param", "dim"))[0] == "drift"
    assert V.judge(item("mindspore.mint.max", "has_param", "dim"))[0] == "not_checkable"
    assert V.judge(item("torch.flatten", "default", "input", "None"))[1].startswith("input is required")


def test_relation_drift_with_a_stub_compare_params():
    v = Verifier(LIVE, {"mindspore": "2.10.0", "torch": "2.13.0"})
    v.compare_params = lambda t, m: ("defaults_differ", [
        {"torch": "input", "ms": None, "kind": "unsupported"},
        {"torch": "start_dim", "ms": "start_dim", "kind": "same"},
        {"torch": "end_dim", "ms": "end_dim", "kind": "same"}])
    stored = {"relation": "consistent", "source": "derived",
              "params": [{"torch": "start_dim", "ms": "start_dim", "kind": "same"},
                         {"torch": "end_dim", "ms": "stop_dim", "kind": "renamed"}]}
    result, detail = v.judge(item("mindspore.nn.Flatten", "relation", torch_api="torch.flatten", stored=stored))
    assert result == "drift"
    assert "relation is now defaults_differ (recorded: consistent)" in detail
    assert "torch parameter(s) added: input" in detail
    assert "renamed: end_dim: stop_dim -> end_dim" in detail


def test_param_drift_reports_nothing_when_unchanged():
    ps = [{"torch": "a", "ms": "a", "kind": "same"}]
    assert param_drift(ps, ps) == []
