"""msmap verify's one comparison (issue 28): inf, NaN, dicts by key, None, plain values, nesting.

Each case is what a torch model and its conversion could return; the verdict must be the true one
(``inf`` against ``0`` is a mismatch: ``|diff| <= atol + rtol * |inf|`` would pass anything)."""
from __future__ import annotations

import numpy as np
import pytest

from kb.verify.compare import MISSING, Opaque, compare_outputs, decode, encode, leaves

RTOL, ATOL = 1e-4, 1e-5


def same(x):
    return x


def verdict(torch_out, ms_out):
    """(rows, problem) for two model outputs, through the transport the child processes use."""
    t_entries, t_arrays = encode(torch_out, same)
    m_entries, m_arrays = encode(ms_out, same)
    return compare_outputs(decode(t_entries, t_arrays), decode(m_entries, m_arrays), RTOL, ATOL)


def f32(*values):
    return np.array(values, np.float32)


def test_inf_against_zero_is_a_mismatch():
    rows, problem = verdict(f32(1.0, np.inf), f32(1.0, 0.0))
    assert problem is not None and "output" in problem and "inf" in problem, problem
    assert not rows[0]["ok"]


def test_inf_against_minus_inf_and_nan_against_number_are_mismatches():
    assert verdict(f32(np.inf), f32(-np.inf))[1] is not None
    assert verdict(f32(np.nan, 1.0), f32(2.0, 1.0))[1] is not None
    assert verdict(f32(2.0, 1.0), f32(np.nan, 1.0))[1] is not None


def test_nan_and_inf_in_the_same_places_match():
    rows, problem = verdict(f32(np.nan, np.inf, -np.inf, 1.0), f32(np.nan, np.inf, -np.inf, 1.0 + 1e-7))
    assert problem is None and rows[0]["ok"]
    assert rows[0]["max_abs"] < 1e-6  # finite places only: no inf or NaN in the figures


def test_all_nonfinite_and_empty_arrays_match():
    assert verdict(f32(np.inf, np.inf), f32(np.inf, np.inf))[1] is None
    assert verdict(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32))[1] is None


def test_complex_outputs_compare_both_parts():
    t = np.array([1 + 2j, np.inf + 0j], np.complex64)
    assert verdict(t, t.copy())[1] is None
    assert verdict(t, np.array([1 - 2j, np.inf + 0j], np.complex64))[1] is not None


def test_dicts_match_by_key_whatever_the_order():
    a, b = f32(1, 2), f32(3, 4)
    rows, problem = verdict({"logits": a, "hidden": b}, {"hidden": b.copy(), "logits": a.copy()})
    assert problem is None and {r["name"] for r in rows} == {"output['logits']", "output['hidden']"}


def test_dicts_with_different_keys_mismatch_naming_them():
    rows, problem = verdict({"logits": f32(1)}, {"scores": f32(1)})
    assert problem is not None and "output['logits']" in problem and "output['scores']" in problem, problem
    assert not any(r["ok"] for r in rows)


def test_none_on_both_sides_is_reported_not_silently_skipped():
    rows, problem = verdict((f32(1), None), (f32(1), None))
    assert problem is None and [r["name"] for r in rows] == ["output[0]", "output[1]"]
    assert rows[1]["note"] == "None on both sides"


def test_none_against_a_tensor_is_a_mismatch():
    assert "output[1]" in verdict((f32(1), None), (f32(1), f32(2)))[1]
    assert "output[1]" in verdict((f32(1), f32(2)), (f32(1), None))[1]


def test_plain_values_are_compared_as_values():
    assert verdict(1.5, 1.5)[1] is None
    assert verdict(1.5, 1.5 + 1e-9)[1] is None
    assert verdict(float("inf"), 0.0)[1] is not None
    assert verdict(float("nan"), float("nan"))[1] is None
    assert verdict(3, 3)[1] is None and verdict(3, 4)[1] is not None
    assert verdict("relu", "relu")[1] is None and "'gelu' vs torch 'relu'" in verdict("relu", "gelu")[1]
    assert verdict(True, True)[1] is None and verdict(True, False)[1] is not None
    assert "int != torch bool" in verdict(True, 1)[1]
    assert verdict(2j, 2j)[1] is None


def test_nested_structures_report_the_path():
    torch_out = {"a": [f32(1), (f32(2), {"b": 1.0})]}
    ms_out = {"a": [f32(1), (f32(2), {"b": 2.0})]}
    rows, problem = verdict(torch_out, ms_out)
    assert problem.startswith("output['a'][1][1]['b']:"), problem
    assert [r["name"] for r in rows] == ["output['a'][0]", "output['a'][1][0]", "output['a'][1][1]['b']"]


def test_a_tensor_against_a_tuple_of_one_is_a_mismatch():
    assert verdict(f32(1), (f32(1),))[1] is not None


def test_objects_of_unknown_types_are_an_error_not_a_match():
    class Thing:
        pass

    rows, problem = verdict(Thing(), Thing())
    assert rows[0]["error"] and "cannot compare" in problem and "Thing" in problem


def test_an_output_that_holds_itself_is_an_error_not_a_hang():
    loop: list = [1.0]
    loop.append(loop)
    rows, problem = verdict(loop, loop)
    assert rows[-1]["error"] and "nested more than 64 levels" in problem


def test_shape_and_dtype_differences_name_both_sides():
    assert "shape (3,) != torch (2,)" in verdict(f32(1, 2), f32(1, 2, 3))[1]
    assert "dtype int" in verdict(f32(1, 2), np.array([1, 2]))[1]


def test_big_integers_compare_exactly():
    big = np.array([2**62, 2**62 + 1], np.int64)
    assert verdict(big, big.copy())[1] is None


def test_transport_keeps_every_leaf_kind():
    entries, arrays = encode((None, 1.5, "s", f32(1), {"k": 2j}), same)
    assert [e["kind"] for e in entries] == ["none", "value", "value", "tensor", "value"]
    out = decode(entries, arrays)
    assert out[0] == ("output[0]", None) and out[4][1].value == 2j
    assert MISSING != Opaque("x") and leaves([]) == []


@pytest.mark.parametrize("rows_torch, rows_ms", [((), ()), ([None], [None])])
def test_nothing_compared_is_not_a_match(rows_torch, rows_ms):
    from kb.verify.compare import compared_nothing

    rows, problem = verdict(rows_torch, rows_ms)
    assert problem is None and compared_nothing(rows)


# --- --input: sizes and integer bounds are checked before anything is allocated ---------------

@pytest.mark.parametrize("spec, words", [
    ("100000,100000,100000", ["PiB", "at most 1.0 GiB"]),
    ("1" + "0" * 400, ["more than a million PiB"]),
    ("1000,1000,1000", ["3.7 GiB"]),
    ("2:int32:5000000000", ["4999999999 does not fit in int32"]),
    ("2:int64:-9999999999999999999:3", ["does not fit in int64"]),
    ("=99999999999:int32", ["99999999999 does not fit in int32"]),
    ("," .join(["1"] * 40), ["40 dimensions"]),
])
def test_inputs_beyond_bounds_are_refused_by_name(spec, words):
    from kb.errors import MsmapError
    from kb.verify.inputs import parse_spec

    with pytest.raises(MsmapError) as caught:
        parse_spec(spec)
    assert str(caught.value).startswith("--input") and all(w in str(caught.value) for w in words), caught.value


def test_the_widest_integer_ranges_still_work():
    from kb.verify.inputs import make_inputs, parse_spec

    a, b = make_inputs([parse_spec("3:int64:-9223372036854775808:9223372036854775807"),
                        parse_spec("3:int32:-2147483648:2147483648")], 0)
    assert a.dtype == np.int64 and b.dtype == np.int32 and b.min() >= -2**31


def test_verify_cli_refuses_a_huge_input_with_one_line(env):
    from tests.reliability.conftest import msmap, one_line_error

    done = msmap(env, "verify", "tests/verify/pairs/torchnets.py:CNN()",
                 "tests/verify/pairs/msnets/cnn.py:CNN()", "--input", "100000,100000,100000")
    one_line_error(done, 2, "--input", "PiB")


def test_inputs_are_bounded_together_too():
    from kb.errors import MsmapError
    from kb.verify.inputs import check_total, make_inputs, parse_spec

    specs = [parse_spec("100,1000,1000")] * 3  # 381 MiB each, 1.1 GiB together
    with pytest.raises(MsmapError, match="3 inputs hold 1.1 GiB together"):
        check_total(specs)
    with pytest.raises(MsmapError, match="together"):
        make_inputs(specs, 0)
    check_total(specs[:2])


def test_the_text_report_summarises_thousands_of_outputs():
    from kb.verify.report import verdict_text
    from kb.verify.run import Verdict

    rows, problem = verdict([1.0] * 5000, [1.0] * 4999 + [2.0])
    text = verdict_text(Verdict("mismatch", "forward", outputs=rows, message=problem))
    lines = text.splitlines()
    assert len(lines) < 40 and "output[4999]" in text and "and 4999 more outputs (0 of them differ" in text, lines[-3:]


def test_torch_outputs_of_every_layout_and_dtype_reach_the_comparison():
    """Sparse, quantized, float8, complex32 and bfloat16 outputs become arrays; a meta tensor (no
    values) becomes a leaf that cannot be compared - never an internal error."""
    torch = pytest.importorskip("torch")
    from kb.verify.child import _torch_array

    out = (torch.ones(2).to_sparse(), torch.quantize_per_tensor(torch.ones(2), 0.5, 0, torch.qint8),
           torch.ones(2).to(torch.float8_e4m3fn), torch.ones(2, dtype=torch.complex32),
           torch.ones(2, dtype=torch.bfloat16), torch.empty(2, device="meta"))
    entries, arrays = encode(out, _torch_array)
    assert [e["kind"] for e in entries] == ["tensor"] * 5 + ["other"]
    assert all(a.tolist() == [1, 1] for a in arrays.values())
    rows, problem = compare_outputs(decode(entries, arrays), decode(entries, arrays), RTOL, ATOL)
    assert rows[-1]["error"] and "cannot compare" in problem
