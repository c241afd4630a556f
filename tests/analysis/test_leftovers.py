"""An honest count and short markers (issue 26, item 4): every marker is left for a human, guesses
included; nothing left is the only 100%; one short reason per marker, the lookup name for the rest.
Each rewrite of a reason or a count beside the case it leaves as it is."""
from __future__ import annotations

import pytest

from kb.analysis import Engine, EngineSettings
from kb.analysis.convert import line_note
from kb.analysis.fixall import Leftover
from kb.analysis.leftovers import IMPORT_LEFT, UNMARKED, Tally, short_reason, unmarked_references
from kb.cli import main

GUESSES = """import torch


def stats(a, b, c):  # (calls as receivers: a name would be guarded, guarded.py)
    n = a().numpy()
    m = b().detach()
    r = a().relu()
    s = b().relu()
    e = c().detach()  # (c.softmax(dim=-1) would say torch: tensors.py converts that one)
    f = a().cpu()
    g = c().relu()
    return n, m, r, s, e, f, g
"""


@pytest.mark.parametrize("reason, short", [
    pytest.param("if this is a tensor: Rewrite as target.shape[1] (changes behaviour: Tensor.size is the element "
                 "count, not a method)", "if this is a tensor: Rewrite as target.shape[1]", id="behaviour-aside"),
    pytest.param("if this is a tensor: Rewrite as ms.ops.relu(x) (a classic API: mint has none)",
                 "if this is a tensor: Rewrite as ms.ops.relu(x)", id="family-aside"),
    pytest.param("if this is a tensor: Rewrite as lemmatizer.words_to_char_indices( string_list, end_symbol=False "
                 ").shape (a classic API: mint has none)", "if this is a tensor: needs a rewrite",
                 id="long-code"),
    pytest.param("param semantics differ: Returns name -> Parameter (including BatchNorm moving statistics, which "
                 "are Parameters in MindSpore)", "param semantics differ: Returns name -> Parameter (including "
                 "BatchNorm moving…", id="cut-at-a-word"),
    pytest.param("a\n  reason  # msmap: x", "a reason msmap: x", id="one-line-no-marker"),
])
def test_a_long_reason_is_shortened(reason, short):
    assert short_reason(reason) == short and len(short) <= 81


@pytest.mark.parametrize("reason", ["no equivalent: MindSpore has no device object",
                                    "if this is a tensor: Rename .numpy() to .asnumpy()",
                                    "param semantics differ: not rewritten automatically"])
def test_a_short_reason_stays_as_it_is(reason):
    assert short_reason(reason) == reason


def test_uses_on_one_line_share_their_reason_and_name_each_api_once():
    same = [Leftover("torch.a", 0, "x", "no MindSpore equivalent: Remove it"),
            Leftover("torch.b", 3, "x", "no MindSpore equivalent: Remove it"),
            Leftover("torch.a", 5, "x", "no MindSpore equivalent: Remove it")]
    assert line_note(same) == "no MindSpore equivalent: Remove it (see: msmap lookup torch.a, torch.b)"
    several = [Leftover("torch.save", 0, "x", "param semantics differ: Converting torch weights: classic layers "
                        "rename parameters"),
               Leftover("torch.nn.Module.state_dict", 3, "x", "param semantics differ: Returns name -> Parameter "
                        "(including BatchNorm moving statistics, which are Parameters in MindSpore)"),
               Leftover("torch.device", 9, "x", "no equivalent: MindSpore has no device object")]
    assert line_note(several) == ("param semantics differ (see: msmap lookup torch.save, torch.nn.Module.state_dict); "
                                  "no equivalent (see: msmap lookup torch.device)")


def test_one_use_keeps_its_short_reason():
    assert line_note([Leftover("torch.device", 0, "x", "no equivalent: MindSpore has no device object")]) == \
        "no equivalent: MindSpore has no device object (see: msmap lookup torch.device)"


def test_a_torch_reference_without_a_marker_is_left():
    src = (b"import torch\nimport mindspore as ms\n\nx = torch.compile(f)\ny = torch.foo(x)  # msmap: why\n"
           b"z = ms.ops.relu(x)\nw = g(\n    torch.bar,\n)  # msmap: why\n")
    assert unmarked_references(src) == [("torch.compile", 4, UNMARKED)]


def test_an_import_nothing_refers_to_is_left_when_no_marker_explains_it():
    assert unmarked_references(b"import torch.nn as tnn\nx = 1\n") == [("torch.nn", 1, IMPORT_LEFT)]
    assert unmarked_references(b"import torch\nx = 1  # msmap: why\n") == []  # a marker says what is left


@pytest.mark.parametrize("src", [b"import mindspore as ms\nx = ms.ops.relu(1)\n", b"from einops import rearrange\n",
                                 b"x = torch.zeros(1)\n", b"import torch(\n"],
                         ids=["mindspore", "einops", "no-import", "does-not-parse"])
def test_a_file_without_torch_left_has_no_reference(src):
    assert unmarked_references(src) == []


def test_the_rate_is_100_only_when_nothing_is_left():
    done = Tally()
    done.add(found=40, left=0, guesses=0, references=0)
    assert done.rate == "100%" and done.left == 0
    almost = Tally()
    almost.add(found=999, left=0, guesses=1, references=0)
    assert almost.rate == "99%" and almost.left == 1
    assert Tally().rate == "n/a"


@pytest.fixture(scope="module")
def db(real_kb):
    return real_kb.path


def test_seven_guess_markers_are_seven_left_and_no_100_percent(capsys, db, tmp_path):
    path = tmp_path / "stats.py"
    path.write_text(GUESSES)
    main(["convert", "--db", str(db), "--device", "CPU", str(path)])
    out, err = capsys.readouterr()
    assert out.count("# msmap: if this is a tensor") == 7
    assert "left for a human: 7 (0 uses, 7 'if this is a tensor' guesses" in err and "rate: 0%" in err
    assert "rate: 100%" not in err
    lines = [line for line in err.splitlines() if line.startswith(f"{path}:")]
    assert len([line for line in lines if ": if this is a tensor:" in line]) == 7
    assert all(len(line) - len(str(path)) < 130 for line in lines), lines  # one short line each


def test_scan_counts_the_marked_guesses_as_left(real_kb):
    from kb.analysis.leftovers import left_by_convert

    analysis = Engine(real_kb, EngineSettings(device="CPU")).analyze(GUESSES.encode())
    left = [u for u in analysis.uses if id(u) in left_by_convert(analysis)]
    assert len(left) == 7 and all(u.guess for u in left)
    typed = "import torch\n\n\ndef f():\n    x = torch.zeros(2)\n    return x.size(0)\n"  # a known tensor: rewritten
    analysis = Engine(real_kb, EngineSettings(device="CPU")).analyze(typed.encode())
    assert not left_by_convert(analysis)
