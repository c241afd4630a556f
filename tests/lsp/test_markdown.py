"""Markdown cards (pure functions over hand-written records)."""
from __future__ import annotations

import pytest

from lsp import markdown

DROPOUT = {
    "torch": "torch.nn.Dropout", "kind": "class", "namespace": "torch.nn",
    "torch_signature": "(p=0.5, inplace=False)", "advice": None,
    "targets": [
        {"family": "classic", "api": "mindspore.nn.Dropout", "relation": "param_semantics_differ",
         "ms_versions": {"since": None, "until": "2.0"}, "ms_signature": "(keep_prob=0.5)", "note": None,
         "params": [{"torch": "p", "ms": "keep_prob", "kind": "transformed", "torch_default": "0.5",
                     "ms_default": "0.5", "transform": "1 - v", "note": None}], "checks": []},
        {"family": "classic", "api": "mindspore.nn.Dropout", "relation": "consistent",
         "ms_versions": {"since": "2.0", "until": None}, "ms_signature": "(p=0.5)", "note": None,
         "params": [], "checks": [{"ms_version": "2.10.0", "result": "pass", "claim": "exists"}]},
        {"family": "mint", "api": "mindspore.mint.nn.Dropout", "relation": "consistent",
         "ms_versions": {"since": None, "until": None}, "ms_signature": "(p=0.5, inplace=False)", "note": None,
         "params": [], "checks": [{"ms_version": "2.10.0", "result": "drift", "claim": "p defaults to 0.5"}]},
    ],
    "caveats": [{"id": "keep-prob", "title": "keep_prob is inverted", "body": "Keep, not drop.\nReally.",
                 "severity": "error", "ms_versions": {"since": None, "until": "2.0"}}],
}

NO_EQUIVALENT = {"torch": "torch.no_grad", "kind": "class", "namespace": "torch", "advice": "Remove it.",
                 "targets": [{"family": "classic", "api": None, "relation": "no_equivalent",
                              "ms_versions": {}, "params": []}], "caveats": []}


def test_mapping_card_current_version():
    assert markdown.mapping_card(DROPOUT, "classic", "2.10.0") == (
        "**torch.nn.Dropout** · class · torch.nn\n"
        "\n"
        "**MindSpore (classic):** `mindspore.nn.Dropout` — `param_semantics_differ` · mindspore <2.0"
        " · *not for mindspore 2.10.0*  \n"
        "**MindSpore (classic):** `mindspore.nn.Dropout` — `consistent` · mindspore ≥2.0"
        " · ✓ verified on mindspore 2.10.0  \n"
        "**MindSpore (mint):** `mindspore.mint.nn.Dropout` — `consistent`"
        " · ✗ check drift on mindspore 2.10.0: p defaults to 0.5  \n"
        "\n"
        "**Caveats**\n"
        "\n"
        "- ⛔ **error** — **keep_prob is inverted** (mindspore <2.0; not for 2.10.0): Keep, not drop. Really.\n"
        "\n"
        "```python\n"
        "torch.nn.Dropout(p=0.5, inplace=False)\n"
        "mindspore.nn.Dropout(p=0.5)\n"
        "mindspore.mint.nn.Dropout(p=0.5, inplace=False)\n"
        "```\n"
    )


def test_mapping_card_old_version_shows_the_parameter_table():
    card = markdown.mapping_card(DROPOUT, "classic", "1.8")
    assert "**Parameters** → `mindspore.nn.Dropout`\n\n" \
           "| torch | MindSpore | torch default | MindSpore default | change |\n" \
           "|---|---|---|---|---|\n" \
           "| `p` | `keep_prob` | `0.5` | `0.5` | transformed: `keep_prob = 1 - p` |\n" in card
    assert "`consistent` · mindspore ≥2.0 · *not for mindspore 1.8*" in card
    assert "(mindspore <2.0): Keep, not drop." in card


def test_mapping_card_configured_family_first():
    card = markdown.mapping_card(DROPOUT, "mint", "2.10.0")
    lines = [line for line in card.splitlines() if line.startswith("**MindSpore")]
    assert [line.split(":**")[0] for line in lines] == [
        "**MindSpore (mint)", "**MindSpore (classic)", "**MindSpore (classic)"]


def test_no_equivalent_card():
    assert markdown.mapping_card(NO_EQUIVALENT, "classic", "2.10.0") == (
        "**torch.no_grad** · class · torch\n\n"
        "**MindSpore (classic):** *no equivalent* — `no_equivalent`  \n\n"
        "**Advice:** Remove it.\n"
    )


def test_reverse_card_joins_version_split_relations():
    rec = {"mindspore": "mindspore.nn.Dropout", "ms_signature": "(p=0.5)", "ms_versions_present": ["2.7.0", "2.10.0"],
           "torch": [{"torch": "torch.nn.Dropout", "family": "classic", "relation": "param_semantics_differ"},
                     {"torch": "torch.nn.Dropout", "family": "classic", "relation": "consistent"}],
           "caveats": [], "checks": []}
    assert markdown.reverse_card(rec, "2.10.0") == (
        "**mindspore.nn.Dropout** · MindSpore API\n\n"
        "present in mindspore 2.7.0, 2.10.0  \n\n"
        "| torch | family | relation |\n|---|---|---|\n"
        "| `torch.nn.Dropout` | classic | `param_semantics_differ` / `consistent` |\n\n"
        "```python\nmindspore.nn.Dropout(p=0.5)\n```\n"
    )


@pytest.mark.parametrize("text, expected", [
    pytest.param(None, "—", id="none"),
    pytest.param("a|b", "`a\\|b`", id="pipe"),
    pytest.param("x`y", "`` x`y ``", id="backtick"),
])
def test_code(text, expected):
    assert markdown.code(text) == expected


@pytest.mark.parametrize("family, version, expected", [
    pytest.param("classic", "2.10.0", "consistent", id="classic-current"),
    pytest.param("classic", "1.8", "param_semantics_differ", id="classic-old"),
    pytest.param("mint", "2.10.0", "consistent", id="mint"),
])
def test_primary_target(family, version, expected):
    target = markdown.primary_target(DROPOUT, family, version)
    assert (target["family"], target["relation"]) == (family, expected)
