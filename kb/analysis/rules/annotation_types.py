"""A torch type with no MindSpore type, written in an annotation, becomes what keeps the annotation true and
runnable without torch: ``device: torch.device`` -> ``device: object`` (kb/analysis/annotations.py)."""
from __future__ import annotations

from typing import Any

from kb.analysis.annotations import TITLE, annotation_edit
from kb.analysis.rewrite import in_type_context
from kb.analysis.rules import Fallback, Planning, register
from kb.analysis.text import TextEdit


@register
class AnnotationTypes(Fallback):
    name = "annotation-types"
    order = 20
    example = """\
def place(x, device: torch.device = None):
    return x
"""

    def applies(self, site: Any, choice: Any) -> bool:
        if site.kind != "attribute" or site.member is not None or site.node is None:
            return False
        typeless = choice is None or not choice.api or \
            (choice.relation == "no_equivalent" and not choice.target.get("template"))
        return typeless and in_type_context(site.node)

    def plan(self, planning: Planning, site: Any, choice: Any) -> tuple[str, list[TextEdit]] | None:
        edit = annotation_edit(site.node)
        return None if edit is None else (TITLE, [edit])
