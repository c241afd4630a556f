"""Editor settings for the language server: one pydantic model, a default for every field.

Settings arrive as ``initializationOptions`` and later through
``workspace/didChangeConfiguration`` (either the ``msmap`` section or the whole settings
object).  Keys are camelCase (the field names are accepted too).  ``parse_settings`` never
fails: a rejected value is reported by its camelCase key and the default is used for that key
only, while every valid key is kept.  The keys and defaults are a contract with the VS Code
extension (see DESIGN.md).
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

Level = Literal["error", "warning", "information", "hint", "off"]
VERSION = re.compile(r"^\d+(\.\d+){0,2}$")  # the engine's accepted form: 2, 2.3, 2.10.0
ROUNDS = 20  # validation rounds: each drops the values pydantic rejected


@lru_cache(maxsize=1)
def default_docs_base() -> str:
    """The generated API pages beside the installed package (``<repo>/docs/api``)."""
    return (Path(__file__).resolve().parent.parent / "docs" / "api").as_uri()


def camel(name: str) -> str:
    """A field's key in the editor's settings: ``tensor_method_guesses`` -> ``tensorMethodGuesses``."""
    head, *rest = name.split("_")
    return head + "".join(word.capitalize() for word in rest)


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=camel, populate_by_name=True, extra="ignore", frozen=True)


class SeveritySettings(_Model):
    """How loudly each kind of finding is reported (``off`` hides it)."""

    no_equivalent: Level = "warning"
    behavior_change: Level = "warning"
    context_change: Level = "warning"
    rename: Level = "information"
    guess: Level = "hint"
    device_support: Level = "warning"


class ServerSettings(_Model):
    target_family: Literal["classic", "mint"] = "classic"
    mindspore_version: str = "2.10.0"
    device: Literal["CPU", "GPU", "Ascend"] = "CPU"  # as every CLI command (DESIGN.md)
    tensor_method_guesses: bool = True
    severity: SeveritySettings = Field(default_factory=SeveritySettings)
    docs_base_url: str = Field(default_factory=default_docs_base)

    @field_validator("mindspore_version")
    @classmethod
    def check_version(cls, value: str) -> str:
        if not VERSION.match(value.strip()):
            raise ValueError(f"not a version number: {value!r}")
        return value.strip()

    @field_validator("docs_base_url")
    @classmethod
    def check_url(cls, value: str) -> str:
        if "://" not in value:
            raise ValueError(f"not a URL: {value!r}")
        return value.rstrip("/")

    def docs_url(self, torch_name: str) -> str:
        return f"{self.docs_base_url}/{torch_name}.md"

    def engine(self) -> Any:
        """The engine's share of these settings (a ``kb.analysis.EngineSettings``)."""
        from kb.analysis.settings import EngineSettings

        return EngineSettings(self.target_family, self.mindspore_version, self.device, self.tensor_method_guesses)


def section_of(settings: Any) -> Any:
    """The ``msmap`` section when the client sent its whole settings object."""
    if isinstance(settings, dict) and isinstance(settings.get("msmap"), dict):
        return settings["msmap"]
    return settings


def parse_settings(raw: Any) -> tuple[ServerSettings, list[str]]:
    """Validate editor settings; returns the settings and one warning per rejected key."""
    if raw is None:
        return ServerSettings(), []
    if not isinstance(raw, dict):
        return ServerSettings(), [f"msmap settings must be an object, got {type(raw).__name__}; using defaults"]
    data = _copy(raw)
    warnings: list[str] = []
    for _ in range(ROUNDS):
        try:
            return ServerSettings.model_validate(data), warnings
        except ValidationError as exc:
            for err in exc.errors():
                loc = [str(p) for p in err["loc"] if isinstance(p, str)]
                warnings.append(f"invalid msmap setting '{_camel(loc)}': {err['msg']}; using the default")
                _drop(data, loc)
    return ServerSettings(), warnings  # pragma: no cover - defensive


def _camel(loc: list[str]) -> str:
    return ".".join(camel(p) if "_" in p else p for p in loc)


def _copy(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _copy(v) for k, v in obj.items()}
    return obj


def _drop(data: dict[str, Any], loc: list[str]) -> None:
    """Remove the value at ``loc`` (spelled as alias or field name) so its default applies."""
    node: Any = data
    for key in loc[:-1]:
        node = node.get(camel(key), node.get(key)) if isinstance(node, dict) else None
    if not isinstance(node, dict) or not loc:
        data.clear()  # cannot tell which value was wrong: use every default
        return
    for key in (loc[-1], camel(loc[-1])):
        node.pop(key, None)
