"""Settings: camelCase keys with defaults; bad values reported by key, defaults used; changes re-publish."""
from __future__ import annotations

import subprocess
import sys

import pytest
from lsprotocol import types

from lsp.settings import ServerSettings, default_docs_base, parse_settings, section_of
from tests.lsp.conftest import ROOT, open_doc, session, uri_of, wait_diagnostics

SOURCE = "import torch\nimport torch.nn as nn\nlayer = nn.Linear(3, 4)\nwith torch.no_grad():\n    pass\n"
I, W, E, H = (types.DiagnosticSeverity.Information, types.DiagnosticSeverity.Warning,
              types.DiagnosticSeverity.Error, types.DiagnosticSeverity.Hint)


def severities(diagnostics):
    return [(d.code_description.href.rsplit("/", 1)[-1].removesuffix(".md"), d.severity) for d in diagnostics]


# -- the model ------------------------------------------------------------------------------
def test_defaults_match_the_contract():
    settings, warnings = parse_settings(None)
    assert warnings == []
    assert settings.model_dump(by_alias=True) == {
        "targetFamily": "classic", "mindsporeVersion": "2.10.0", "device": "CPU", "tensorMethodGuesses": True,
        "severity": {"noEquivalent": "warning", "behaviorChange": "warning", "contextChange": "warning",
                     "rename": "information", "guess": "hint", "deviceSupport": "warning"},
        "docsBaseUrl": default_docs_base(),
    }


def test_bad_values_fall_back_per_key():
    settings, warnings = parse_settings({
        "targetFamily": "mint", "device": "TPU", "mindsporeVersion": "latest", "tensorMethodGuesses": "sometimes",
        "severity": {"rename": "loud", "guess": "off"}, "docsBaseUrl": "docs", "somethingElse": 1})
    assert (settings.target_family, settings.device, settings.mindspore_version) == ("mint", "CPU", "2.10.0")
    assert (settings.tensor_method_guesses, settings.severity.rename, settings.severity.guess) == (True, "information", "off")
    assert settings.docs_base_url == default_docs_base()
    assert [w.split("'")[1] for w in warnings] == [
        "mindsporeVersion", "device", "tensorMethodGuesses", "severity.rename", "docsBaseUrl"]
    assert all(w.endswith("; using the default") for w in warnings)


@pytest.mark.parametrize("raw, expected", [
    pytest.param([1, 2], ["msmap settings must be an object, got list; using defaults"], id="list"),
    pytest.param({"severity": "loud"}, ["invalid msmap setting 'severity': Input should be a valid dictionary or "
                                        "instance of SeveritySettings; using the default"], id="section"),
])
def test_wrong_shapes(raw, expected):
    settings, warnings = parse_settings(raw)
    assert settings == ServerSettings()
    assert warnings == expected


EDITOR = {"targetFamily": "classic", "mindsporeVersion": "2.10.0", "device": "CPU", "tensorMethodGuesses": True,
          "severity": {"noEquivalent": "warning", "behaviorChange": "warning", "contextChange": "warning",
                       "rename": "information", "guess": "hint", "deviceSupport": "warning"}}


@pytest.mark.parametrize("raw, changed", [
    pytest.param({}, {}, id="empty"),
    pytest.param(EDITOR, {}, id="editor-defaults"),
    pytest.param({"targetFamily": "mint", "device": "Ascend", "tensorMethodGuesses": False, "other": [1]},
                 {"target_family": "mint", "device": "Ascend", "tensor_method_guesses": False}, id="choices"),
    pytest.param({"mindspore_version": " 2.3 ", "severity": {"no_equivalent": "off"}},
                 {"mindspore_version": "2.3", "severity": dict(ServerSettings().severity.model_dump(), no_equivalent="off")},
                 id="field-names"),
    pytest.param({"docsBaseUrl": "https://example.invalid/api//", "severity": {}},
                 {"docs_base_url": "https://example.invalid/api"}, id="url"),
    pytest.param({"tensorMethodGuesses": "no"}, {"tensor_method_guesses": False}, id="coerced-bool"),
    pytest.param({"tensorMethodGuesses": 0, "targetFamily": "mint"},
                 {"tensor_method_guesses": False, "target_family": "mint"}, id="int-bool"),
    pytest.param({"targetFamily": "mint", "target_family": "classic"}, {"target_family": "mint"},
                 id="both-spellings"),
])
def test_accepted_values(raw, changed):
    settings, warnings = parse_settings(raw)
    defaults = ServerSettings().model_dump()
    assert warnings == []
    assert {k: v for k, v in settings.model_dump().items() if v != defaults[k]} == changed
    assert ServerSettings.model_validate(raw) == settings


@pytest.mark.parametrize("raw, key", [
    pytest.param({"device": "TPU"}, "device", id="bad-choice"),
    pytest.param({"mindsporeVersion": 2.1}, "mindsporeVersion", id="number-for-string"),
    pytest.param({"mindsporeVersion": "latest"}, "mindsporeVersion", id="failed-check"),
    pytest.param({"severity": "loud"}, "severity", id="section"),
    pytest.param({"severity": {"rename": "loud"}}, "severity.rename", id="nested"),
])
def test_rejected_values_are_reported_and_defaulted(raw, key):
    settings, warnings = parse_settings(raw)
    assert settings == ServerSettings()
    assert [w.split("'")[1] for w in warnings] == [key]


def test_settings_module_has_no_import_cycle():
    """One model in one module: importing it loads no other module of the server."""
    code = "import sys; import lsp.settings; print(sorted(m for m in sys.modules if m.startswith('lsp')))"
    loaded = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "['lsp', 'lsp.settings']"


@pytest.mark.parametrize("raw, expected", [
    pytest.param({"msmap": {"device": "CPU"}, "python": {}}, {"device": "CPU"}, id="msmap-section"),
    pytest.param({"device": "CPU"}, {"device": "CPU"}, id="whole-object"),
    pytest.param(None, None, id="null"),
])
def test_section_of(raw, expected):
    assert section_of(raw) == expected


# -- through a client -----------------------------------------------------------------------
async def test_invalid_initialization_options_are_reported_and_the_rest_kept(fixed_env):
    options = {"severity": {"noEquivalent": "error", "rename": "shout"}, "targetFamily": "both"}
    async with session(fixed_env, options) as client:
        uri = uri_of("settings.py")
        open_doc(client, uri, SOURCE)
        diagnostics = await wait_diagnostics(client, uri, 1)
        messages = [(m.type, m.message) for m in client.messages]
    assert severities(diagnostics) == [("torch.nn.Linear", I), ("torch.no_grad", E)]
    assert messages == [
        (types.MessageType.Warning, "invalid msmap setting 'targetFamily': Input should be 'classic' or 'mint'; "
                                    "using the default"),
        (types.MessageType.Warning, "invalid msmap setting 'severity.rename': Input should be 'error', 'warning', "
                                    "'information', 'hint' or 'off'; using the default"),
    ]


@pytest.mark.parametrize("settings", [
    pytest.param({"msmap": {"severity": {"rename": "hint", "noEquivalent": "off"}}}, id="msmap-section"),
    pytest.param({"severity": {"rename": "hint", "noEquivalent": "off"}}, id="whole-object"),
])
async def test_change_configuration_republishes(client, settings):
    uri = uri_of("settings.py")
    open_doc(client, uri, SOURCE)
    assert severities(await wait_diagnostics(client, uri, 1)) == [("torch.nn.Linear", I), ("torch.no_grad", W)]
    since = len(client.published)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=settings))
    assert severities(await wait_diagnostics(client, uri, 1, since)) == [("torch.nn.Linear", H)]
    assert client.messages == []


async def test_null_settings_are_pulled_from_the_client(client):
    uri = uri_of("settings.py")
    open_doc(client, uri, SOURCE)
    await wait_diagnostics(client, uri, 1)
    client.set_configuration({"targetFamily": "mint", "severity": {"rename": "error"}}, section="msmap")
    since = len(client.published)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    diagnostics = await wait_diagnostics(client, uri, 1, since)
    assert [(d.message, d.severity) for d in diagnostics][0] == (
        "torch.nn.Linear → mindspore.mint.nn.Linear", E)


async def test_a_bad_change_keeps_the_server_running_with_defaults(client):
    uri = uri_of("settings.py")
    open_doc(client, uri, SOURCE)
    await wait_diagnostics(client, uri, 1)
    since = len(client.published)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"msmap": {"mindsporeVersion": 2.1, "severity": {"noEquivalent": "hint"}}}))
    assert severities(await wait_diagnostics(client, uri, 1, since)) == [("torch.nn.Linear", I), ("torch.no_grad", H)]
    assert [m.message.split("'")[1] for m in client.messages] == ["mindsporeVersion"]


async def test_ms_version_setting_changes_the_chosen_target(fixed_env):
    text = "import torch.nn as nn\ndrop = nn.Dropout(0.2)\n"
    async with session(fixed_env, {"mindsporeVersion": "1.8"}) as client:
        uri = uri_of("old.py")
        open_doc(client, uri, text)
        [diagnostic] = await wait_diagnostics(client, uri, 1)
    assert (diagnostic.code, diagnostic.severity) == ("param_semantics_differ", W)
    assert diagnostic.message.startswith("torch.nn.Dropout → mindspore.nn.Dropout: ")
