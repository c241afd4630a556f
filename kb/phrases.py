"""Shared wording of version ranges and checkable claims (terminal, Markdown, check reports)."""
from __future__ import annotations

from typing import Any


def range_text(rng: dict[str, Any] | None, framework: str = "mindspore", ge: str = ">=",
               unbounded: str = "") -> str:
    """'mindspore >=2.0,<2.3' style text of a half-open range; ``unbounded`` when it has no bounds."""
    rng = rng or {}
    since, until = rng.get("since"), rng.get("until")
    if since and until:
        return f"{framework} {ge}{since}, <{until}"
    if since:
        return f"{framework} {ge}{since}"
    if until:
        return f"{framework} <{until}"
    return unbounded


def claim_text(cl: dict[str, Any]) -> str:
    """One sentence for a machine-checkable claim."""
    kind = cl["kind"]
    if kind == "default":
        return f"default of {cl['api']}.{cl['param']} is {cl['value']}"
    if kind in ("has_param", "lacks_param"):
        return f"{cl['api']} {'accepts' if kind == 'has_param' else 'has no'} parameter {cl['param']}"
    return f"{cl['api']} {'exists' if kind == 'exists' else 'does not exist'}"
