"""Exact output on the tiny fixed data set (tests/kbdata)."""
from __future__ import annotations

import json
import re

import pytest

from kb.docs import generate

NN_TABLE = """\
# `torch.nn`

[Index](../index.md) · [Caveats](../caveats.md) · [Searchable table](../mapping.html)

3 torch APIs: 2 mapped, 0 partial, 1 without equivalent. Targets shown are those for MindSpore 2.10.0; \
names link to a detail page where there is more to say. "auto, proven": msmap rewrites the call automatically \
and the code it emits ran next to torch and matched (`msmap probe --rewrites`); "auto, not proven": rewritten \
automatically without such a probe yet; "rewrite probe failed": the emitted code gave other results, so the call \
is left for a human.

| torch API | classic MindSpore | mint | relation | key notes |
|---|---|---|---|---|
| [`torch.nn.Dropout`](../api/torch.nn.Dropout.md) | `mindspore.nn.Dropout` (MindSpore ≥2.0) \
| `mindspore.mint.nn.Dropout` (auto, not proven) | consistent | `p` unsupported; `inplace` unsupported — 1 caveat (error) |
| [`torch.nn.Linear`](../api/torch.nn.Linear.md) | `mindspore.nn.Dense` (auto, not proven) \
| `mindspore.mint.nn.Linear` (auto, not proven) \
| classic: param_names_differ · mint: consistent \
| `in_features` → `in_channels`; `out_features` → `out_channels`; `bias` → `has_bias` |
| [`torch.nn.Unfoldable`](../api/torch.nn.Unfoldable.md) | no equivalent |  | no_equivalent | Compose it from ops. |
"""

LINEAR = """\
# `torch.nn.Linear`

[Index](../index.md) · [`torch.nn` table](../tables/torch.nn.md) · [Caveats](../caveats.md)

class · namespace `torch.nn` · source: curated + derived

```python
torch.nn.Linear(in_features, out_features, bias=True, device=None, dtype=None)
```

## Classic MindSpore

### `mindspore.nn.Dense`

**param_names_differ**: Parameters carry other names (and may sit in another order); pass them by their \
MindSpore names.

all MindSpore versions · auto-convertible

Rewrite not proven by an executed probe.

```python
mindspore.nn.Dense(in_channels, out_channels, weight_init=None, bias_init=None, has_bias=True, activation=None, \
dtype=mindspore.float32)
```

| torch | MindSpore | torch default | MindSpore default | change |
|---|---|---|---|---|
| `in_features` | `in_channels` | — | — | renamed: pass it under the MindSpore name |
| `out_features` | `out_channels` | — | — | renamed: pass it under the MindSpore name |
| `bias` | `has_bias` | `True` | `True` | renamed: pass it under the MindSpore name |

Example, generated from the signature and the parameter table (check it before use):

torch:

```python
import torch

layer = torch.nn.Linear(in_features, out_features, bias=True)
```

MindSpore:

```python
import mindspore

layer = mindspore.nn.Dense(in_channels=in_features, out_channels=out_features, has_bias=True)
```

Source: seed: `000_230305ba76a72365.txt`

## mint

### `mindspore.mint.nn.Linear`

**consistent**: Same name in the MindSpore namespace, same parameters, same defaults: changing the import is enough.

all MindSpore versions · auto-convertible

Rewrite not proven by an executed probe.

```python
mindspore.mint.nn.Linear(in_features, out_features, bias=True, weight_init=None, bias_init=None, dtype=None)
```

Example, generated from the signature and the parameter table (check it before use):

torch:

```python
import torch

layer = torch.nn.Linear(in_features, out_features)
```

MindSpore:

```python
import mindspore

layer = mindspore.mint.nn.Linear(in_features, out_features)
```

Source: introspection: `mindspore 2.10.0; torch 2.13.0`
"""

CAVEAT_SECTION = """\
## Topic: dropout

### Dropout probability meaning is inverted in 1.x

**error** · MindSpore <2.0 · id `dropout-keep-prob`

In MindSpore 1.x `keep_prob` is the probability of keeping an element.

Applies to: [`torch.nn.Dropout`](api/torch.nn.Dropout.md), `mindspore.nn.Dropout`

Source: seed: `002_d557bd4dcdcf3445.txt`
"""

COVERAGE = """\
| namespace | entries | mapped | partial | none | classic | mint | verified |
|---|---:|---:|---:|---:|---:|---:|---:|
| [`torch.nn`](tables/torch.nn.md) | 3 | 2 | 0 | 1 | 2 | 2 | — |
| [`torch.nn.functional`](tables/torch.nn.functional.md) | 1 | 1 | 0 | 0 | 1 | 1 | — |
| [`torch.Tensor`](tables/torch.Tensor.md) | 1 | 1 | 0 | 0 | 1 | 1 | — |
| **total** | 5 | 4 | 0 | 1 | 4 | 4 | — |
"""


@pytest.fixture
def docs(small_kb):
    return generate(small_kb)


def test_file_set(docs):
    assert list(docs) == [
        "api/torch.nn.Dropout.md", "api/torch.nn.Linear.md", "api/torch.nn.Unfoldable.md",
        "api/torch.nn.functional.relu.md", "caveats.md", "index.md", "mapping.html", "performance.md",
        "tables/torch.Tensor.md", "tables/torch.nn.functional.md", "tables/torch.nn.md",
    ]  # torch.Tensor.view is plainly consistent: a table row, no detail page


def test_namespace_table(docs):
    assert docs["tables/torch.nn.md"] == NN_TABLE


def test_detail_page(docs):
    assert docs["api/torch.nn.Linear.md"] == LINEAR


def test_detail_page_links_its_caveat_by_anchor_and_marks_old_targets(docs):
    page = docs["api/torch.nn.Dropout.md"]
    assert "### `mindspore.nn.Dropout` (not current)" in page
    assert "MindSpore <2.0 · auto-convertible" in page
    assert "| `p` | `keep_prob` | `0.5` | `0.5` | transformed: `keep_prob = 1 - p` |" in page
    assert ("**[Dropout probability meaning is inverted in 1.x]"
            "(../caveats.md#dropout-probability-meaning-is-inverted-in-1x)** · MindSpore <2.0 · topic `dropout`") in page


def test_no_equivalent_page_shows_the_advice(docs):
    page = docs["api/torch.nn.Unfoldable.md"]
    assert "**Advice:** Compose it from ops." in page
    assert "### No equivalent" in page and "Example" not in page


def test_caveats_page(docs):
    page = docs["caveats.md"]
    assert page.endswith(CAVEAT_SECTION)
    assert "- [dropout](#topic-dropout) (1)" in page


def test_index_coverage_and_versions(docs):
    index = docs["index.md"]
    assert COVERAGE in index
    assert "5 torch APIs (torch 2.13.0), 2 of them curated by hand, 1 caveat, 4 detail pages." in index
    assert "Signature snapshots of MindSpore 2.10.0." in index
    for relation in ("consistent", "param_semantics_differ", "context_change", "no_equivalent"):
        assert f"| `{relation}` |" in index


def test_html_is_self_contained_and_carries_every_row(docs):
    page = docs["mapping.html"]
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page), "no network references"
    assert "<link" not in page and "@import" not in page
    raw = re.search(r'<script id="msmap-data" type="application/json">(.*?)</script>', page, re.S).group(1)
    data = json.loads(raw)
    assert [r["t"] for r in data["rows"]] == ["torch.nn.Dropout", "torch.nn.functional.relu", "torch.nn.Linear",
                                              "torch.nn.Unfoldable", "torch.Tensor.view"]  # case-insensitive
    linear = data["rows"][2]
    assert linear["c"] == ["mindspore.nn.Dense", "", "auto, not proven"] and linear["p"] == "api/torch.nn.Linear.md"
    assert linear["r"] == [["classic", "param_names_differ", "mapped"], ["mint", "consistent", "mapped"]]
    assert data["rows"][4]["p"] == ""
    assert data["relations"] == ["consistent", "param_names_differ", "torch_more_params", "no_equivalent"]


def test_tables_say_whether_an_executed_probe_proves_the_rewrite(small_data, tmp_path):
    from kb.query import KB

    rows = [{"probe": f"rewrite/{fam}/torch.nn.Linear", "kind": "rewrite", "torch": "torch.nn.Linear",
             "family": fam, "ms_api": api, "ms_version": "2.10.0", "torch_version": "2.13.0", "device": "cpu",
             "result": result, "detail": "positional call: wrong: values" if result == "failed" else "",
             "passed": ["keyword"], "failed": ["positional"] if result == "failed" else [], "styles": {}}
            for fam, api, result in (("classic", "mindspore.nn.Dense", "proven"),
                                     ("mint", "mindspore.mint.nn.Linear", "failed"))]
    (small_data / "probes").mkdir()
    (small_data / "probes" / "rewrites-mindspore-2.10.0-cpu.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows))
    docs = generate(KB.open(db=tmp_path / "p.sqlite", data=small_data))
    assert ("| `mindspore.nn.Dense` (auto, proven) | `mindspore.mint.nn.Linear` (rewrite probe failed) |"
            in docs["tables/torch.nn.md"])
    raw = re.search(r'<script id="msmap-data" type="application/json">(.*?)</script>', docs["mapping.html"], re.S)
    linear = next(r for r in json.loads(raw.group(1))["rows"] if r["t"] == "torch.nn.Linear")
    assert (linear["c"][2], linear["m"][2]) == ("auto, proven", "rewrite probe failed")
    page = docs["api/torch.nn.Linear.md"]
    assert "Rewrite proven by an executed probe (mindspore 2.10.0, cpu)" in page
    assert "Rewrite probe failed (mindspore 2.10.0, cpu): positional call: wrong: values" in page


def test_text_from_the_data_cannot_break_out_of_the_page(small_data, tmp_path):
    from kb.query import KB

    sample = small_data / "curated" / "sample.yaml"
    sample.write_text(sample.read_text().replace(
        "body: In MindSpore 1.x", "body: A | pipe and </script><script>alert(1)</script> In MindSpore 1.x"))
    docs = generate(KB.open(db=tmp_path / "x.sqlite", data=small_data))
    assert docs["mapping.html"].count("</script>") == 2  # the data block and the code block only
    assert "A | pipe" in docs["caveats.md"]  # bodies are Markdown paragraphs, not table cells


def test_check_results_fill_the_verified_column(small_data, tmp_path):
    from kb.query import KB

    (small_data / "checks").mkdir()
    rows = [{"subject": "mindspore.nn.Dense", "claim": "exists", "kind": "exists", "ms_version": "2.10.0",
             "result": "pass", "detail": "found"},
            {"subject": "dropout-keep-prob", "claim": "default", "kind": "default", "ms_version": "2.10.0",
             "result": "drift", "detail": "None"}]
    (small_data / "checks" / "checks.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    docs = generate(KB.open(db=tmp_path / "x.sqlite", data=small_data))
    assert "| [`torch.nn`](tables/torch.nn.md) | 3 | 2 | 0 | 1 | 2 | 2 | 33% |" in docs["index.md"]
    assert "| **total** | 5 | 4 | 0 | 1 | 4 | 4 | 20% |" in docs["index.md"]
    assert "| exists | exists | 2.10.0 | pass | found |" in docs["api/torch.nn.Linear.md"]
    assert "Checked: 1 drift (MindSpore 2.10.0)" in docs["caveats.md"]


def test_empty_knowledge_base(tmp_path):
    from kb.query import KB

    data = tmp_path / "empty"
    (data / "curated").mkdir(parents=True)
    docs = generate(KB.open(db=tmp_path / "x.sqlite", data=data))
    assert sorted(docs) == ["caveats.md", "index.md", "mapping.html", "performance.md"]
    assert "No caveats recorded yet." in docs["caveats.md"]
    assert "No MindSpore signature snapshot recorded yet." in docs["index.md"]



def test_caveat_anchors_survive_duplicate_titles_and_headings_in_bodies(small_data, tmp_path):
    from kb.docs import links
    from kb.query import KB

    sample = small_data / "curated" / "sample.yaml"
    sample.write_text(sample.read_text() + """\
  - id: dropout-again
    title: Dropout probability meaning is inverted in 1.x
    body: "### Dropout probability meaning is inverted in 1.x\\n\\nA body with its own heading."
    severity: info
    topic: dropout
    applies_to: [torch.nn.Dropout]
    provenance: [{kind: curator, ref: test}]
""")
    docs = generate(KB.open(db=tmp_path / "x.sqlite", data=small_data))
    defined = links.page_anchors(docs["caveats.md"])
    used = re.findall(r"\(\.\./caveats\.md#([^)]+)\)", docs["api/torch.nn.Dropout.md"])
    assert len(used) == 2 and len(set(used)) == 2
    assert set(used) <= defined
