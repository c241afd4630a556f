"""Library versions compared as versions (``packaging.version``), never as text.

Every version range in the knowledge base (targets, caveats, claims) is half-open:
``[since, until)``, a missing or empty bound is open.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from packaging.version import InvalidVersion, Version


@lru_cache(maxsize=1024)
def version_key(text: str) -> Version:
    """'2.3' == '2.3.0' < '2.10.0' < '2.10.1'; a text packaging cannot read ('2.3.x') by its numbers."""
    try:
        return Version(str(text))
    except InvalidVersion:
        return Version(".".join(re.findall(r"\d+", str(text))[:3]) or "0")


def in_range(version: str, since: str | None, until: str | None) -> bool:
    """Whether ``version`` lies in ``[since, until)``."""
    v = version_key(version)
    return (not since or v >= version_key(since)) and (not until or v < version_key(until))


def in_span(version: str, span: dict[str, Any] | None) -> bool:
    """``in_range`` over a record's ``{"since": ..., "until": ...}`` (None: every version)."""
    span = span or {}
    return in_range(version, span.get("since"), span.get("until"))
