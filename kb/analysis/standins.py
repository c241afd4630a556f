"""A converted module never imports torch: what is left for a human fails where it is reached.

After fix-all has converted what it can, a torch import that something still refers to (a pretrained
loader, a ``__main__`` demo, a private helper such as ``torch.nn.modules.utils._pair``) would make the
whole module fail to import without torch, although its model is converted. Each such import becomes
a stand-in instead::

    import torch.nn as nn                 ->  nn = MsUnconverted("torch.nn")
    from torch.utils import model_zoo     ->  model_zoo = MsUnconverted("torch.utils.model_zoo")

``MsUnconverted`` (written once into the file) takes any attribute path and raises
``NotImplementedError`` when it is used — called, compared, iterated, instantiated (a subclass too; a
subclass's missing attribute, such as ``Function.apply``, is another stand-in), tested with
``isinstance`` — naming the torch API and the reason convert gave in its marker. So the module imports,
everything converted runs, and what is not converted fails only where it is reached, with its reason.
The markers stay for the human.

Packages that import without torch (einops) are left as they are.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from kb.analysis.adapters import insertion
from kb.analysis.importfallbacks import TORCH_PACKAGES
from kb.analysis.text import TextEdit

NAME = "MsUnconverted"
REASONS = "MS_UNCONVERTED"
_DEFINED = re.compile(rb"^class MsUnconverted\b", re.M)

DEFINITION = '''\
class MsUnconverted:
    """torch names msmap left for a human (written by msmap convert): the module imports without torch,
    and using one of them raises NotImplementedError with the reason its msmap note gives."""

    def __init__(self, name):
        object.__setattr__(self, "_ms_name", name)

    def _ms_fail(self, *args, **kwargs):
        name = object.__getattribute__(self, "_ms_name")
        known = [k for k in MS_UNCONVERTED if name == k or name.startswith(k + ".")]
        why = MS_UNCONVERTED[max(known, key=len)] if known else "not converted"
        raise NotImplementedError(f"{name} has no MindSpore conversion here: {why} (see the msmap note)")

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__") and attr != "__version__":
            raise AttributeError(attr)
        return MsUnconverted(object.__getattribute__(self, "_ms_name") + "." + attr)

    def __mro_entries__(self, bases):
        fail, name = self._ms_fail, object.__getattribute__(self, "_ms_name")

        class Meta(type):
            def __getattr__(cls, attr):
                if attr.startswith("__") and attr.endswith("__"):
                    raise AttributeError(attr)
                return MsUnconverted(name + "." + attr)

        return (Meta("Unconverted", (), {"__init__": fail}),)

    def __repr__(self):
        return "MsUnconverted(%r)" % object.__getattribute__(self, "_ms_name")

    __call__ = __setattr__ = __delattr__ = __getitem__ = __setitem__ = __iter__ = __len__ = __bool__ = _ms_fail
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __enter__ = __exit__ = _ms_fail
    __instancecheck__ = __subclasscheck__ = __add__ = __radd__ = __mul__ = __rmul__ = __neg__ = _ms_fail
    __hash__ = object.__hash__
'''


def edits(imports: Any, counts: dict[str, int], source: bytes, reasons: dict[str, str]) -> list[TextEdit]:
    """The edits turning every torch import of ``imports`` (an ``ImportTable``) that names still refer
    to (``counts``: references per bound name) into stand-ins, with the stand-in's definition and the
    reasons (torch name -> why it was left) written once before the first of them."""
    out: list[TextEdit] = []
    first = None
    by_statement: dict[int, list] = {}
    for statement, name in imports.names:
        by_statement.setdefault(statement.start_byte, []).append((statement, name))
    for rows in by_statement.values():
        statement = rows[0][0]
        names = [name for _, name in rows]
        torch_names = [n for n in names if _stands_in(n.target)]
        used = [n for n in torch_names if counts.get(n.bound, 0) > 0]
        if not used or _inside_try(statement):
            continue  # (a guarded import keeps its own fallback)
        kept = [n for n in names if n not in torch_names]
        if kept and statement.type != "import_statement":
            continue  # (a from-import binds from one module: all torch, or none)
        parts = [f"import {n.target}" + (f" as {n.bound}" if n.bound != n.target else "") for n in kept]
        parts += [f'{n.bound} = {NAME}("{n.target}")' for n in _unique(used)]
        out.append(TextEdit(statement.start_byte, statement.end_byte, "; ".join(parts)))
        first = statement if first is None or statement.start_byte < first.start_byte else first
    if first is None or _DEFINED.search(source):
        return out
    table = "".join(f"    {name!r}: {why!r},\n" for name, why in sorted(reasons.items()))
    definition = DEFINITION + f"\n\n{REASONS} = {{\n{table}}}\n"
    added = insertion(first, source, NAME, definition)
    return out + ([added] if added is not None else [])


def _stands_in(target: str | None) -> bool:
    return target is not None and target.partition(".")[0] in TORCH_PACKAGES


def _unique(names: Iterable[Any]) -> list[Any]:
    seen: dict[str, Any] = {}
    for name in names:
        seen.setdefault(name.bound, name)
    return list(seen.values())


def _inside_try(statement: Any) -> bool:
    node = statement.parent
    while node is not None and node.type not in ("module", "function_definition", "class_definition"):
        if node.type == "try_statement":
            return True
        node = node.parent
    return False


# ``nn = MsUnconverted("torch.nn")`` at the start of a line, as ``edits`` writes it
_ASSIGNED = re.compile(rb'^(?P<bound>[A-Za-z_]\w*) = MsUnconverted\("(?P<target>[A-Za-z_][\w.]*)"\)[ \t]*$', re.M)


def as_imports(source: bytes) -> bytes | None:
    """A text msmap converted before, its stand-ins read again as the torch imports they stand for, at the
    same offsets (``import torch.nn as nn`` and spaces): a second convert sees the torch names the first
    left and gives the same result. None for a text without the stand-in's definition."""
    if not _DEFINED.search(source):
        return None

    def back(found: re.Match) -> bytes:
        line = b"import " + found["target"] + b" as " + found["bound"]
        return line.ljust(len(found[0]))

    return _ASSIGNED.sub(back, source)


def trim(source: bytes) -> tuple[bytes, list[tuple[int, int]]]:
    """``source`` without the padding ``as_imports`` left after the stand-ins written back over it, and
    (offset, bytes removed there) for each cut, in order."""
    cuts = [(found.start() + len(found[0].rstrip()), len(found[0]) - len(found[0].rstrip()))
            for found in _ASSIGNED.finditer(source) if found[0] != found[0].rstrip()]
    return _ASSIGNED.sub(lambda found: found[0].rstrip(), source), cuts


def moved(offset: int, cuts: list[tuple[int, int]]) -> int:
    """Where ``offset`` is after ``trim``'s ``cuts``."""
    return offset - sum(size for at, size in cuts if at < offset)
