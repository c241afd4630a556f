"""torch's float constants (``torch.pi``, ``torch.e``, ``torch.inf``, ``torch.nan``) are Python floats equal to
``math``'s (``torch.pi is math.pi`` may not hold, ``torch.pi == math.pi`` does; ``torch.nan`` and ``math.nan``
are both float NaN): each becomes ``math.<name>``, and ``import math`` is added where the file has none. A file
that binds ``math`` to something else keeps the marker."""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.text import TextEdit

CONSTANTS = ("pi", "e", "inf", "nan")
NAMES = {f"torch.{name}": name for name in CONSTANTS}
TITLE = "Use math's float (torch's constant is the same Python float)"
IMPORTED = re.compile(rb"(?m)^import[ \t]+math[ \t]*(?:#.*)?$")
# ``math`` bound otherwise: an alias, an assignment, a parameter or a definition of that name
OTHER_MATH = re.compile(rb"\bas[ \t]+math\b|(?<![.\w])math[ \t]*(?::[^=\n]*)?=(?!=)|\bdef[ \t]+math\b|"
                        rb"\bclass[ \t]+math\b|\bimport[ \t]+[^\n#]*\bmath\.|[(,][ \t]*math[ \t]*[,)=:]")


@register
class MathConstants(Rule):
    name = "math-constants"
    scope = "file"  # the first use gets ``import math``, and a binding of ``math`` anywhere keeps them all
    record = {"torch": "torch.pi"}
    title = TITLE
    order = 40
    triggers = (b"pi", b"e", b"inf", b"nan", b"math")
    example = """\
import torch
def angle(x):
    return 2 * torch.pi * x + torch.e - torch.inf * 0 + (torch.nan if x is None else 0)
"""

    def find(self, context: Context) -> Iterable[Finding]:
        source = context.source
        uses = [u for u in context.uses_called(NAMES) if not u.call_span and u.kind != "import"]  # (an import stays)
        if not uses or _binds_math(source):
            return
        importing = None if IMPORTED.search(source) else _import_edit(context.root)
        if importing is None and not IMPORTED.search(source):
            return  # (no top-level import to put ``import math`` beside: the marker stays)
        for index, use in enumerate(sorted(uses, key=lambda u: u.start)):
            edits = [TextEdit(use.start, use.end, f"math.{NAMES[use.torch_name]}")]
            if importing is not None and index == 0:
                edits.insert(0, importing)
            yield Finding((use.start, use.end), edits, replaces=use.torch_name, record=use.record)


def _binds_math(source: bytes) -> bool:
    """Whether ``OTHER_MATH`` matches: looked for on the lines holding ``math`` only (it matches within a line)."""
    at = source.find(b"math")
    while at >= 0:
        start, end = source.rfind(b"\n", 0, at) + 1, source.find(b"\n", at)
        end = len(source) if end < 0 else end
        if OTHER_MATH.search(source, start, end):
            return True
        at = source.find(b"math", end)
    return False


def _import_edit(root: Any) -> TextEdit | None:
    """``import math`` on its own line before the module's first import other than ``from __future__``."""
    for statement in root.named_children:
        if statement.type in ("import_statement", "import_from_statement"):
            return TextEdit(statement.start_byte, statement.start_byte, "import math\n")
    return None
