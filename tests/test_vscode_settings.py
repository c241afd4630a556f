"""The VS Code extension and the language server agree on the editor settings.

vscode-extension/package.json declares every setting with its default. The extension
sends the server's share of them as ``initializationOptions``: the key without its
``msmap.`` prefix, ``severity.*`` nested under ``severity``, and the extension-only
``server.*`` and ``trace.*`` settings left out (vscode-extension/src/common/settings.ts).
These tests rebuild those options from package.json the same way, check them against the
table in DESIGN.md, and check that ``lsp.settings`` accepts every one of them.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from lsp.settings import ServerSettings, parse_settings

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "vscode-extension" / "package.json"
DESIGN = ROOT / "DESIGN.md"

EXTENSION_ONLY = ("server.", "trace.")
# Server settings with no editor counterpart: the default is computed at run time
# (a file: URL beside the installed package), so package.json cannot declare it.
SERVER_ONLY = {"docsBaseUrl"}


def declared() -> dict[str, dict[str, Any]]:
    """package.json settings by key without ``msmap.``."""
    properties = json.loads(MANIFEST.read_text(encoding="utf-8"))["contributes"]["configuration"]["properties"]
    return {key.removeprefix("msmap."): declaration for key, declaration in properties.items()}


def server_defaults() -> dict[str, Any]:
    """Flat ``key -> default`` for the settings the extension sends to the server."""
    return {key: d["default"] for key, d in declared().items() if not key.startswith(EXTENSION_ONLY)}


def nest(flat: dict[str, Any]) -> dict[str, Any]:
    """``{"severity.rename": x}`` -> ``{"severity": {"rename": x}}``, as the extension sends it."""
    options: dict[str, Any] = {}
    for key, value in flat.items():
        *parents, leaf = key.split(".")
        node = options
        for parent in parents:
            node = node.setdefault(parent, {})
        node[leaf] = value
    return options


def flatten(options: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in options.items():
        if isinstance(value, dict):
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def documented() -> dict[str, tuple[list[Any] | None, Any]]:
    """DESIGN.md's settings table: ``key -> (choices or None, default)``."""
    text = DESIGN.read_text(encoding="utf-8")
    section = text.split("## Language server settings", 1)[1].split("\n\n", 1)[0]
    table: dict[str, tuple[list[Any] | None, Any]] = {}
    choices: list[Any] | None = None
    for line in section.splitlines():
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) != 3 or cells[0] in ("key", "---"):
            continue
        key, kind, default = cells
        if kind != "same":  # "same" repeats the choices of the row above
            choices = [json.loads(c) for c in kind.split("\\|")] if '"' in kind else None
        table[key] = (choices, json.loads(default))
    return table


def test_package_json_declares_the_documented_settings():
    table = documented()
    assert table, "the settings table in DESIGN.md was not found"
    assert sorted(server_defaults()) == sorted(table)
    for key, (choices, default) in table.items():
        assert declared()[key]["default"] == default, key
        assert declared()[key].get("enum") == choices, key


@pytest.mark.parametrize("key", sorted(server_defaults()))
def test_server_accepts_each_default(key):
    default = server_defaults()[key]
    options = nest({key: default})
    settings, warnings = parse_settings(options)
    assert warnings == []
    assert flatten(settings.model_dump(mode="json", by_alias=True))[key] == default
    ServerSettings.model_validate(options)  # strict path: raises on a rejected value


def test_server_accepts_all_defaults_at_once_and_has_the_same_ones():
    options = nest(server_defaults())
    settings, warnings = parse_settings(options)
    assert warnings == []
    sent = flatten(settings.model_dump(mode="json", by_alias=True))
    own = flatten(ServerSettings().model_dump(mode="json", by_alias=True))
    for key in SERVER_ONLY:
        sent.pop(key)
        own.pop(key)
    assert sent == flatten(options)
    assert own == flatten(options)


@pytest.mark.parametrize(
    "key, choice",
    [(key, choice) for key, d in sorted(declared().items()) if not key.startswith(EXTENSION_ONLY)
     for choice in d.get("enum", [])],
)
def test_server_accepts_every_choice_the_settings_ui_offers(key, choice):
    settings, warnings = parse_settings(nest({key: choice}))
    assert warnings == []
    assert flatten(settings.model_dump(mode="json", by_alias=True))[key] == choice


def test_every_server_setting_is_an_editor_setting():
    own = set(flatten(ServerSettings().model_dump(mode="json", by_alias=True))) - SERVER_ONLY
    assert own == set(server_defaults())
