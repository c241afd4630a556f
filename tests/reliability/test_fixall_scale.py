"""convert is linear in the rewritable calls of a file (benchmarks/bench_convert_scale.py times
it): fix-all's indexes of taken edits and offset shifts answer exactly what the quadratic
comparisons they replaced answered."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kb.analysis.fixall import _shifter, _Taken
from kb.analysis.text import TextEdit, shift_offset

span = st.tuples(st.integers(0, 60), st.integers(0, 8), st.sampled_from(["", "x", "abc"]))
edits = st.lists(span.map(lambda t: TextEdit(t[0], t[0] + t[1], t[2])), max_size=12)


@settings(max_examples=200, deadline=None)
@given(st.lists(edits, max_size=8), edits)
def test_taken_answers_like_comparing_every_pair(batches, questions):
    taken, every = _Taken(), []
    for batch in batches:
        for edit in batch + questions:
            assert (edit in taken) == any(edit == t for t in every)
            assert taken.overlaps(edit) == any(edit.overlaps(t) for t in every), (edit, every)
        if not any(taken.overlaps(e) for e in batch):  # fix-all only takes a use that overlaps nothing
            taken.extend(batch)
            every.extend(batch)


@settings(max_examples=200, deadline=None)
@given(edits, st.lists(st.integers(0, 80), max_size=20))
def test_shifter_moves_offsets_like_shift_offset(batch, offsets):
    shift = _shifter(batch)
    assert [shift(o) for o in offsets] == [shift_offset(o, batch) for o in offsets]
