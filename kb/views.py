"""What a mapping record's parameter table says, whatever shows it.

The terminal (``kb.render``), the hover cards (``lsp.markdown``) and the docs pages
(``kb.docs.pages``) all show a target's parameters.  This module decides the rows, the
columns and what each cell means; those three only format them (plain text, hover Markdown,
docs Markdown).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kb.defaults import same_default

PARAM_COLUMNS = ("torch", "MindSpore", "torch default", "MindSpore default", "change")


@dataclass(frozen=True)
class ParamRow:
    """One row of a parameter table.  Empty cells are None."""

    torch: str | None
    ms: str | None
    torch_default: str | None
    ms_default: str | None
    kind: str  # same | renamed | transformed | dropped | unsupported | added
    assignment: str | None  # transformed: how the MindSpore value is computed, "keep_prob = 1 - p"
    note: str | None
    other_default: bool  # same name and meaning, another default: pass torch's default explicitly

    @property
    def values(self) -> tuple[str | None, str | None, str | None, str | None]:
        """The first four cells: names and defaults."""
        return self.torch, self.ms, self.torch_default, self.ms_default


def param_differs(p: dict[str, Any]) -> bool:
    """Whether a parameter needs attention: anything but the same name with the same default."""
    return p.get("kind") != "same" or not same_default(p.get("torch_default") or None, p.get("ms_default") or None)


def _text(value: Any) -> str | None:
    return None if value in (None, "") else str(value)


def param_row(p: dict[str, Any]) -> ParamRow:
    assignment = None
    if p.get("transform"):
        assignment = f"{p.get('ms') or '?'} = " + re.sub(r"\bv\b", p.get("torch") or "v", p["transform"])
    return ParamRow(torch=_text(p.get("torch")), ms=_text(p.get("ms")),
                    torch_default=_text(p.get("torch_default")), ms_default=_text(p.get("ms_default")),
                    kind=p["kind"], assignment=assignment, note=_text(p.get("note")),
                    other_default=p["kind"] == "same" and param_differs(p))


def param_rows(params: list[dict[str, Any]] | None, differing_only: bool = False) -> list[ParamRow]:
    """The table's rows in the record's order; ``differing_only`` leaves out parameters that are
    the same in name, meaning and default."""
    return [param_row(p) for p in params or [] if not differing_only or param_differs(p)]
