"""The small pure helpers every page relies on: anchors, escaping, file names, examples, verdicts."""
from __future__ import annotations

import pytest

from kb.docs import corpus, examples, links


@pytest.mark.parametrize("heading, anchor", [
    pytest.param("Topic: padding", "topic-padding", id="punctuation-dropped"),
    pytest.param("Dropout took keep_prob before 2.0", "dropout-took-keep_prob-before-20", id="underscore-kept"),
    pytest.param("`nn.Dropout(0.2)` still means keep_prob=0.2", "nndropout02-still-means-keep_prob02", id="code"),
    pytest.param("Coverage by namespace", "coverage-by-namespace", id="plain"),
    pytest.param("torch → MindSpore", "torch--mindspore", id="arrow-removed-spaces-kept"),
    pytest.param("Gradients: 梯度", "gradients-梯度", id="non-ascii-letters-kept"),
])
def test_slug_follows_the_forge_convention(heading, anchor):
    assert links.slug(heading) == anchor


def test_repeated_headings_are_numbered_in_page_order():
    a = links.Anchors()
    assert [a.add("Example"), a.add("Example"), a.add("Example-1"), a.add("Example")] == \
        ["example", "example-1", "example-1-1", "example-2"]


def test_page_anchors_skip_code_fences():
    md = "# Title\n\n```python\n# not a heading\n```\n\n## Title\n"
    assert links.page_anchors(md) == {"title", "title-1"}


def test_cells_are_one_line_with_pipes_escaped():
    assert links.cell("a | b\nc") == "a \\| b c"
    assert links.cell(None) == ""


@pytest.mark.parametrize("md, shown", [
    pytest.param("mindspore.device_context.<backend>", "mindspore.device_context.\\<backend>", id="tag-like"),
    pytest.param("`<kept>` and <https://x.org>", "`<kept>` and <https://x.org>", id="code-and-autolink"),
    pytest.param("a<2 and a < b", "a<2 and a < b", id="comparisons"),
    pytest.param("```\n<x>\n```\n<y>", "```\n<x>\n```\n\\<y>", id="fenced"),
])
def test_prose_escapes_what_a_forge_would_swallow_as_html(md, shown):
    assert links.prose(md) == shown


def test_link_text_escapes_brackets():
    assert links.link_text("x[0] is <b>") == "x\\[0\\] is \\<b>"


def test_code_spans_hold_backticks():
    assert links.code("x") == "`x`"
    assert links.code("a`b") == "``a`b``"
    assert links.code("`a") == "`` `a ``"


def test_names_that_differ_only_by_case_get_distinct_files():
    files = links.api_filenames(["torch.Tensor.T", "torch.Tensor.t", "torch.nn.Linear"])
    assert files["torch.Tensor.t"] == "torch.Tensor.t.md"
    assert files["torch.nn.Linear"] == "torch.nn.Linear.md"
    assert files["torch.Tensor.T"].startswith("torch.Tensor.T~") and files["torch.Tensor.T"].endswith(".md")
    assert len({f.lower() for f in files.values()}) == 3


def test_relative_links_between_pages():
    assert links.rel("tables/torch.nn.md", "api/torch.nn.Linear.md") == "../api/torch.nn.Linear.md"
    assert links.rel("index.md", "tables/torch.md") == "tables/torch.md"
    assert links.rel("api/x.md", "caveats.md", "modes") == "../caveats.md#modes"


@pytest.mark.parametrize("rng, text", [
    ({"since": None, "until": None}, "all MindSpore versions"),
    ({"since": "2.0", "until": None}, "MindSpore ≥2.0"),
    ({"since": None, "until": "2.0"}, "MindSpore <2.0"),
    ({"since": "2.0", "until": "2.3"}, "MindSpore ≥2.0, <2.3"),
])
def test_version_ranges_read_as_half_open(rng, text):
    assert links.versions(rng) == text


def test_short_text_keeps_code_spans_whole():
    assert links.short_text("Use `ops.pad`. Then more.") == "Use `ops.pad`."
    cut = links.short_text("word " * 20 + "`a very long code span that crosses the limit`", limit=110)
    assert cut.count("`") % 2 == 0 and cut.endswith("…")


@pytest.mark.parametrize("row, verdict", [
    ({"result": "pass"}, True), ({"result": "holds"}, True),
    ({"result": "drift"}, False), ({"result": "differs"}, False),
    ({"result": "not_checkable"}, None), ({"result": "timeout"}, None), ({}, None),
])
def test_check_and_probe_results_are_read_as_evidence(row, verdict):
    assert corpus.passed(row) is verdict


def _rec(**kw):
    rec = {"torch": "torch.nn.Linear", "kind": "class", "namespace": "torch.nn", "source": "derived",
           "torch_signature": "(in_features, out_features, bias=True, device=None, dtype=None)",
           "advice": None, "caveats": [], "targets": []}
    rec.update(kw)
    return rec


def _target(relation="consistent", api="mindspore.nn.Dense", params=(), **kw):
    t = {"family": "classic", "api": api, "relation": relation, "params": list(params), "note": None,
         "example": None, "ms_versions": {"since": None, "until": None}, "checks": [], "probes": []}
    t.update(kw)
    return t


def test_a_plain_consistent_derived_entry_needs_no_detail_page():
    assert not corpus.needs_page(_rec(targets=[_target()]))
    assert corpus.needs_page(_rec(targets=[_target("renamed")]))
    assert corpus.needs_page(_rec(source="curated", targets=[_target()]))
    assert corpus.needs_page(_rec(targets=[_target(params=[{"torch": "bias", "ms": "has_bias", "kind": "renamed"}])]))


def test_coverage_uses_targets_current_for_the_newest_version():
    old = _target("consistent", ms_versions={"since": None, "until": "2.0"})
    assert corpus.coverage(_rec(targets=[old]), "2.10.0") == "none"
    assert corpus.coverage(_rec(targets=[old, _target("composite")]), "2.10.0") == "partial"
    assert corpus.coverage(_rec(targets=[_target("renamed"), _target("composite")]), "2.10.0") == "mapped"


def test_generated_example_renames_transforms_and_drops():
    params = [{"torch": "p", "ms": "keep_prob", "kind": "transformed", "transform": "1 - v", "torch_default": "0.5"},
              {"torch": "inplace", "ms": None, "kind": "dropped", "torch_default": "False"}]
    rec = _rec(torch="torch.nn.Dropout", torch_signature="(p=0.5, inplace=False)")
    ex = examples.generate(rec, _target("param_semantics_differ", "mindspore.nn.Dropout", params))
    assert ex == {
        "torch": "import torch\n\nlayer = torch.nn.Dropout(p=0.5, inplace=False)",
        "mindspore": "import mindspore\n\nlayer = mindspore.nn.Dropout(keep_prob=0.5)\n"
                     "# inplace: dropped (no effect in MindSpore)",
    }
    compile(ex["mindspore"], "<example>", "exec")


def test_generated_example_passes_torch_defaults_where_they_differ():
    params = [{"torch": "eps", "ms": "eps", "kind": "same", "torch_default": "1e-05", "ms_default": "1e-07"}]
    rec = _rec(torch="torch.nn.LayerNorm", torch_signature="(normalized_shape, eps=1e-05)")
    ex = examples.generate(rec, _target("defaults_differ", "mindspore.nn.LayerNorm", params))
    assert "mindspore.nn.LayerNorm(normalized_shape, eps=1e-05)" in ex["mindspore"]


def test_tensor_methods_keep_the_receiver():
    rec = _rec(torch="torch.Tensor.view", kind="method", namespace="torch.Tensor", torch_signature="(self, *shape)")
    ex = examples.generate(rec, _target("consistent", "mindspore.Tensor.view"))
    assert ex == {"torch": "result = x.view()", "mindspore": "result = x.view()"}
    ex = examples.generate(rec, _target("renamed", "mindspore.ops.reshape"))
    assert ex["mindspore"].endswith("result = mindspore.ops.reshape(x)")


def test_keyword_only_parameters_stay_keywords():
    params = [{"torch": "input", "ms": "input", "kind": "same"},
              {"torch": "out", "ms": None, "kind": "unsupported", "note": "assign the result"}]
    rec = _rec(torch="torch.acos", kind="function", namespace="torch", torch_signature="(input, *, out)")
    ex = examples.generate(rec, _target("torch_more_params", "mindspore.ops.acos", params))
    assert ex == {"torch": "import torch\n\nresult = torch.acos(input, out=out)",
                  "mindspore": "import mindspore\n\nresult = mindspore.ops.acos(input)\n"
                               "# out: not supported; needs manual work (assign the result)"}


@pytest.mark.parametrize("relation", ["composite", "context_change", "no_equivalent"])
def test_no_example_is_invented_where_a_call_does_not_carry_over(relation):
    assert examples.generate(_rec(), _target(relation, None if relation == "no_equivalent" else "mindspore.x")) is None
