"""Editor settings for the language server: one typed model, a default for every field.

Settings arrive as ``initializationOptions`` and later through
``workspace/didChangeConfiguration`` (either the ``msmap`` section or the whole settings
object).  ``parse_settings`` never fails: a bad value is reported by its camelCase key and
the default is used for that key only, while every valid key is kept.  The keys and
defaults are a contract with the VS Code extension (see DESIGN.md).

The model is a pair of frozen dataclasses, so the server starts without pydantic (importing it
and building its validators is ~75 ms, a sixth of a cold start).  pydantic stays the validator of
record: settings that hold anything but exactly accepted values (a wrong choice, ``"yes"`` for a
bool, a number for a string) are validated by pydantic twins of these classes (``lsp.validation``,
imported on first need), so coercions and messages are pydantic's.  Settings that do hold only
exactly accepted values, as editors send them, are taken as they are: pydantic would return them
unchanged (``tests/lsp/test_settings.py`` checks both paths agree).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, is_dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Literal, Optional, get_args, get_origin, get_type_hints

Level = Literal["error", "warning", "information", "hint", "off"]
VERSION = re.compile(r"^\d+(\.\d+){0,2}$")  # the engine's accepted form: 2, 2.3, 2.10.0


@lru_cache(maxsize=1)
def default_docs_base() -> str:
    """The generated API pages beside the installed package (``<repo>/docs/api``)."""
    return (Path(__file__).resolve().parent.parent / "docs" / "api").as_uri()


def camel(name: str) -> str:
    """A field's key in the editor's settings: ``tensor_method_guesses`` -> ``tensorMethodGuesses``."""
    head, *rest = name.split("_")
    return head + "".join(word.capitalize() for word in rest)


def check_version(value: str) -> str:
    if not VERSION.match(value.strip()):
        raise ValueError(f"not a version number: {value!r}")
    return value.strip()


def check_url(value: str) -> str:
    if "://" not in value:
        raise ValueError(f"not a URL: {value!r}")
    return value.rstrip("/")


CHECKS: dict[str, Callable[[str], str]] = {"mindspore_version": check_version, "docs_base_url": check_url}


class _Settings:
    """The two pydantic methods callers of the former pydantic model use (the VS Code contract tests)."""

    def model_dump(self, mode: str = "python", by_alias: bool = False) -> dict[str, Any]:
        """The settings as a dict (pydantic's spelling; every value is JSON already, whatever ``mode``)."""
        out = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            out[camel(f.name) if by_alias else f.name] = value.model_dump(mode, by_alias) \
                if isinstance(value, _Settings) else value
        return out

    @classmethod
    def model_validate(cls, data: Any) -> Any:
        """Strict validation: pydantic's ``ValidationError`` on any rejected value."""
        from lsp.validation import strict

        return strict(cls, data)


@dataclass(frozen=True)
class SeveritySettings(_Settings):
    """How loudly each kind of finding is reported (``off`` hides it)."""

    no_equivalent: Level = "warning"
    behavior_change: Level = "warning"
    context_change: Level = "warning"
    rename: Level = "information"
    guess: Level = "hint"
    device_support: Level = "warning"


@dataclass(frozen=True)
class ServerSettings(_Settings):
    target_family: Literal["classic", "mint"] = "classic"
    mindspore_version: str = "2.10.0"
    device: Literal["CPU", "GPU", "Ascend"] = "Ascend"
    tensor_method_guesses: bool = True
    severity: SeveritySettings = field(default_factory=SeveritySettings)
    docs_base_url: str = field(default_factory=default_docs_base)

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
    exact = exactly(ServerSettings, raw)
    if exact is not None:
        return exact, []
    from lsp.validation import validate

    return validate(raw)


@lru_cache(maxsize=None)
def hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


def exactly(cls: type, raw: dict) -> Optional[Any]:
    """``raw`` as ``cls`` if each of its keys is unknown (ignored) or holds exactly a value the field
    accepts; None when pydantic must decide (a value to coerce or reject, a key spelled both ways)."""
    values = {}
    for f in fields(cls):
        alias = camel(f.name)
        if alias in raw and f.name in raw and alias != f.name:
            return None
        key = alias if alias in raw else f.name
        if key not in raw:
            continue
        value = accepted(hints(cls)[f.name], raw[key], CHECKS.get(f.name))
        if value is None:
            return None
        values[f.name] = value
    return cls(**values)


def accepted(kind: Any, value: Any, check: Optional[Callable[[str], str]]) -> Optional[Any]:
    """``value`` as the field of type ``kind`` keeps it, or None unless it is exactly acceptable."""
    if is_dataclass(kind):
        return exactly(kind, value) if type(value) is dict else None
    if get_origin(kind) is Literal:
        return value if type(value) is str and value in get_args(kind) else None
    if type(value) is not kind or kind not in (bool, str):
        return None
    if check is None:
        return value
    try:
        return check(value)
    except ValueError:
        return None
