"""Target choice: family, half-open version ranges compared numerically, marked fallback."""
from __future__ import annotations

import pytest

from kb.analysis.settings import EngineSettings, choose_target, relevant_caveats
from kb.versions import in_span, version_key
from tests.analysis.kbdata import caveat, record, target


@pytest.mark.parametrize("version, span, expected", [
    pytest.param("2.10.0", {"since": "2.9", "until": None}, True, id="numeric-not-text"),
    pytest.param("2.0", {"since": None, "until": "2.0"}, False, id="until-is-exclusive"),
    pytest.param("2.0", {"since": "2.0", "until": None}, True, id="since-is-inclusive"),
    pytest.param("1.10", {"since": "1.9", "until": "2.0"}, True, id="inside"),
    pytest.param("2.3.1", None, True, id="unbounded"),
])
def test_in_range(version, span, expected):
    assert in_span(version, span) is expected


def test_version_key():
    assert version_key("2.10") == version_key("2.10.0") > version_key("2.9.9")
    assert version_key("2.3.0rc1") < version_key("2.3") < version_key("2.3.1")


RECORD = record("torch.x", [
    target("mindspore.old_x", "renamed", until="2.0"),
    target("mindspore.x", "consistent", since="2.0"),
    target("mindspore.mint.x", "consistent", "mint", since="2.5"),
])


@pytest.mark.parametrize("settings, api, fallback", [
    pytest.param(EngineSettings(ms_version="1.10"), "mindspore.old_x", False, id="old-version"),
    pytest.param(EngineSettings(), "mindspore.x", False, id="new-version"),
    pytest.param(EngineSettings(family="mint"), "mindspore.mint.x", False, id="mint"),
    pytest.param(EngineSettings(family="mint", ms_version="2.3"), "mindspore.x", True, id="mint-too-old-falls-back"),
])
def test_choose_target(settings, api, fallback):
    choice = choose_target(RECORD, settings)
    assert (choice.api, choice.fallback) == (api, fallback)


def test_no_target():
    assert choose_target(record("torch.y", []), EngineSettings()) is None


def test_settings_validate():
    with pytest.raises(ValueError):
        EngineSettings(family="other")
    with pytest.raises(ValueError):
        EngineSettings(ms_version="latest")


def test_relevant_caveats_follow_version():
    rec = record("torch.x", [target("mindspore.x", "consistent")], caveats=[
        caveat("old", "Old caveat", "error", ["torch.x"], until="2.0"),
        caveat("new", "New caveat", "warning", ["mindspore.x"], since="2.0"),
        caveat("other", "Other target", "warning", ["mindspore.y"]),
    ])
    choice = choose_target(rec, EngineSettings())
    assert [c["id"] for c in relevant_caveats(rec, choice, EngineSettings())] == ["new"]
    assert [c["id"] for c in relevant_caveats(rec, choice, EngineSettings(ms_version="1.8"))] == ["old"]
