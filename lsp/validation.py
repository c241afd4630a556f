"""pydantic twins of the settings dataclasses: the validator of record (see ``lsp.settings``).

Imported only when settings need more than taking as they are.  Each twin is built from its
dataclass (same name, fields, types, defaults and checks, camelCase aliases), so pydantic's
coercions and messages apply, and the result is turned back into the dataclass.
"""
from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator

from lsp.settings import CHECKS, ServerSettings, SeveritySettings, camel, hints


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=camel, populate_by_name=True, extra="ignore", frozen=True)


def _validator(name: str, check: Callable[[str], str]) -> Any:
    def run(cls: Any, value: str) -> str:
        return check(value)

    return field_validator(name)(run)


def twin(cls: type, nested: dict[type, type[BaseModel]]) -> type[BaseModel]:
    """A pydantic model with the fields of the dataclass ``cls`` (dataclass-typed fields: their twins)."""
    spec: dict[str, Any] = {}
    for f in fields(cls):
        kind = hints(cls)[f.name]
        default = Field(default_factory=f.default_factory) if f.default_factory is not MISSING else f.default
        spec[f.name] = (nested.get(kind, kind), default)
    checks = {f"check_{name}": _validator(name, check) for name, check in CHECKS.items() if name in spec}
    return create_model(cls.__name__, __base__=_Model, __validators__=checks, **spec)


MODELS: dict[type, type[BaseModel]] = {}
MODELS[SeveritySettings] = twin(SeveritySettings, MODELS)
MODELS[ServerSettings] = twin(ServerSettings, MODELS)


def settings_of(cls: type, model: BaseModel) -> Any:
    """The dataclass ``cls`` holding the values of its validated twin."""
    values = {}
    for f in fields(cls):
        value = getattr(model, f.name)
        values[f.name] = settings_of(hints(cls)[f.name], value) if isinstance(value, BaseModel) else value
    return cls(**values)


def strict(cls: type, data: Any) -> Any:
    """``data`` as ``cls``; raises pydantic's ``ValidationError`` on any rejected value."""
    return settings_of(cls, MODELS[cls].model_validate(data))


def validate(raw: dict[str, Any]) -> tuple[ServerSettings, list[str]]:
    """Validate editor settings; every rejected value is dropped (its default used) and reported."""
    data = _copy(raw)
    warnings: list[str] = []
    for _ in range(20):  # each round drops the keys pydantic rejected
        try:
            return strict(ServerSettings, data), warnings
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
