"""Signatures, literals and transforms: computed when literal, wrapped otherwise, never executed."""
from __future__ import annotations

import pytest

from kb.analysis.transforms import (
    MISSING, NotComputable, apply_transform, format_value, literal, parse_signature, same_value,
)


@pytest.mark.parametrize("text, positional, names", [
    pytest.param("(p=0.5, inplace=False)", ["p", "inplace"], {"p", "inplace"}, id="defaults"),
    pytest.param("(self, a, /, b, *args, c=1, **kw)", ["a", "b"], {"a", "b", "c"}, id="kinds-and-self"),
    pytest.param("(input: Tensor, dim: int = 0) -> Tensor", ["input", "dim"], {"input", "dim"}, id="annotations"),
    pytest.param("(x, *, out=None)", ["x"], {"x", "out"}, id="keyword-only"),
    pytest.param("(a, b=<object object at 0x7f>)", ["a", "b"], {"a", "b"}, id="repr-default"),
    pytest.param("(dtype=mstype.float32)", ["dtype"], {"dtype"}, id="dotted-default"),
])
def test_parse_signature(text, positional, names):
    sig = parse_signature(text)
    assert sig.positional == positional and sig.names == names


@pytest.mark.parametrize("text", [None, "", "not a signature", "(a b)"])
def test_parse_signature_unreadable(text):
    assert parse_signature(text) is None


PAD4 = "0 if isinstance(v, str) else ((v[0], v[0], v[1], v[1]) if isinstance(v, (tuple, list)) else v)"


@pytest.mark.parametrize("transform, value, expected", [
    pytest.param("1 - v", "0.3", "0.7", id="float-noise-removed"),
    pytest.param("1 - v", "0.7", "0.3", id="float-noise-removed-2"),
    pytest.param("1 - v", "rate", "1 - rate", id="name-not-wrapped"),
    pytest.param("1 - v", "a + b", "1 - (a + b)", id="wrapped-keeps-precedence"),
    pytest.param("v", "x", "x", id="identity"),
    pytest.param("v * 2", "3", "6", id="int"),
    pytest.param("(v, v)", "3", "(3, 3)", id="tuple"),
    pytest.param("v == 'tanh'", "'none'", "False", id="comparison"),
    pytest.param("'pad' if v != 0 else 'valid'", "1", "'pad'", id="conditional"),
    pytest.param("v if isinstance(v, str) else 'pad'", "'same'", "'same'", id="isinstance"),
    # a tuple of types (a Conv2d padding: an int, an (h, w) pair, a list, a string) folds to the value
    pytest.param(PAD4, "1", "1", id="isinstance-of-several-int"),
    pytest.param(PAD4, "(1, 2)", "(1, 1, 2, 2)", id="isinstance-of-several-tuple"),
    pytest.param(PAD4, "[2, 3]", "(2, 2, 3, 3)", id="isinstance-of-several-list"),
    pytest.param(PAD4, "'same'", "0", id="isinstance-of-several-str"),
    pytest.param(PAD4, "pad", PAD4.replace("v", "pad"), id="isinstance-of-several-name-stays-an-expression"),
    pytest.param("'pad'", None, "'pad'", id="constant"),
    pytest.param("v[0]", "(2, 3)", "2", id="subscript"),
    pytest.param("-v", "-2", "2", id="unary"),
])
def test_apply_transform(transform, value, expected):
    assert apply_transform(transform, value) == expected


@pytest.mark.parametrize("transform, value", [
    pytest.param("__import__('os')", "1", id="no-calls-outside-the-allow-list"),
    pytest.param("isinstance(v, (int, Tensor))", "1", id="isinstance-of-an-unknown-type"),
    pytest.param("v.__class__", "1", id="no-attributes"),
    pytest.param("v ** 1000", "2", id="huge-power"),
    pytest.param("v * 100000", "'a'", id="huge-repetition"),
    pytest.param("v", None, id="no-value"),
])
def test_apply_transform_refuses(transform, value):
    with pytest.raises(NotComputable):
        result = apply_transform(transform, value)
        # a refusal to compute may still substitute text; that never runs anything
        assert "(" in result and value and value in result
        raise NotComputable("substituted")


def test_literal_and_same_value():
    assert literal("(1, 2)") == (1, 2) and literal("x") is MISSING and literal(None) is MISSING
    assert same_value(1, 1.0) and not same_value(True, 1) and not same_value("0.5", 0.5)
    assert format_value(1 - 0.9) == "0.1" and format_value((1,)) == "(1,)" and format_value(None) == "None"
