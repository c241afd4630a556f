"""What a conversion left for a human, said shortly and counted honestly (``msmap convert``).

Three kinds of leftover, each one line in the per-file list and one unit of "left for a human":

- a use fix-all could not convert (it carries a ``# msmap:`` marker);
- a guessed tensor method on a receiver not known to be a tensor ("if this is a tensor" marker);
- a reference to torch still in the converted text that no marker explains (a name the knowledge
  base does not know, a torch import nothing else accounts for).

``short_reason`` is the one short reason a marker and the per-file list give; the lookup name
says the rest.  ``Tally`` adds files up: the rate is converted / (converted + left), rounded
down, so a run that left anything never says 100%.
"""
from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass

from kb.analysis.imports import ROOTS
from kb.analysis.standins import NAME as STAND_IN

MARKER = "# msmap:"
REASON_LIMIT = 80  # characters of one marker's reason; the lookup name says the rest
TORCH_ROOTS = ROOTS - {"einops"}  # einops runs on MindSpore tensors: its imports stay
# asides a reader of the marker does not need: the fix's family and its behaviour note (the lookup has both)
_ASIDES = re.compile(r" \((?:changes behaviour|a classic API|a mint API)\b[^()]*(?:\([^()]*\)[^()]*)*\)")
_REWRITE = re.compile(r"(?P<lead>\b[Rr]ewrite) as (?P<code>.+)$")
LONG_CODE = 40  # a "Rewrite as <code>" longer than this says "needs a rewrite" instead
UNMARKED = "still refers to torch (no marker)"
IMPORT_LEFT = "torch import left"


def short_reason(reason: str | None, limit: int = REASON_LIMIT) -> str:
    """One short line: no line breaks, no asides, cut at a word before ``limit`` characters."""
    text = " ".join((reason or "not converted automatically").split()).replace(MARKER, "msmap:")
    text = _ASIDES.sub("", text)
    rewrite = _REWRITE.search(text)
    if rewrite is not None and len(rewrite["code"]) > LONG_CODE:
        text = text[: rewrite.start()] + "needs a rewrite"
    text = text.rstrip(" .…")
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit].rstrip(" ,;:") + "…"


def unmarked_references(source: bytes) -> list[tuple[str, int, str]]:
    """(name, line, why) for each line of ``source`` that refers to torch with no ``# msmap:`` marker
    on its statement; when nothing else does, the torch imports left themselves."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    lines = source.decode("utf-8", "replace").splitlines()
    marked = {number for number, text in enumerate(lines, 1) if MARKER in text}
    bound: dict[str, str] = {}
    imports: list[tuple[str, int]] = []
    spans: dict[int, tuple[int, int]] = {}  # line -> the lines of its statement (a compound's header)
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            body = getattr(node, "body", None)
            end = body[0].lineno - 1 if isinstance(body, list) and body and isinstance(body[0], ast.stmt) \
                else (node.end_lineno or node.lineno)
            for number in range(node.lineno, max(end, node.lineno) + 1):
                spans[number] = (node.lineno, max(end, node.lineno))
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.partition(".")[0] in TORCH_ROOTS:
                    bound[alias.asname or alias.name.partition(".")[0]] = alias.name if alias.asname \
                        else alias.name.partition(".")[0]
                    imports.append((alias.name, node.lineno))
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module \
                and node.module.partition(".")[0] in TORCH_ROOTS:
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            imports.append((node.module, node.lineno))
        elif stood := _stand_in(node):  # nn = MsUnconverted("torch.nn"): torch, left (standins.py)
            bound[stood[0]] = stood[1]
    if not bound:
        return []
    found: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in bound and isinstance(node.ctx, ast.Load):
            found.setdefault(node.lineno, bound[node.id])
    for node in ast.walk(tree):  # the dotted name as written: torch.cuda.amp, not just torch
        if isinstance(node, ast.Attribute):
            chain, inner = [node.attr], node.value
            while isinstance(inner, ast.Attribute):
                chain.append(inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name) and inner.id in bound and found.get(inner.lineno) == bound[inner.id]:
                found[inner.lineno] = ".".join([bound[inner.id], *reversed(chain)])
    left = []
    for number, name in sorted(found.items()):
        lo, hi = spans.get(number, (number, number))
        if not any(line in marked for line in range(lo, hi + 1)):
            left.append((name, number, UNMARKED))
    if not left and not marked:
        left = [(name, number, IMPORT_LEFT) for name, number in imports]
    return left


def _stand_in(node: ast.AST) -> tuple[str, str] | None:
    """(name, torch name) of a stand-in assignment ``name = MsUnconverted("torch...")``."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
        return None
    call = node.value
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == STAND_IN \
            and len(call.args) == 1 and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
        return node.targets[0].id, call.args[0].value
    return None


@dataclass
class Tally:
    """Totals of a conversion run, for its summary line."""

    found: int = 0  # uses found (what fix-all counts)
    converted: int = 0
    uses_left: int = 0
    guesses_left: int = 0
    references_left: int = 0
    guarded: int = 0  # of ``converted``: tensor methods rewritten behind a runtime type test (guarded.py)

    @property
    def left(self) -> int:
        return self.uses_left + self.guesses_left + self.references_left

    def add(self, found: int, left: int, guesses: int, references: int, guarded: int = 0) -> None:
        self.found += found
        self.guarded += guarded
        self.converted += found - left
        self.uses_left += left
        self.guesses_left += guesses
        self.references_left += references

    @property
    def rate(self) -> str:
        whole = self.converted + self.left
        if not whole:
            return "n/a"
        return f"{self.converted * 100 // whole}%"  # rounded down: 100% only when nothing is left

    def summary(self) -> str:
        parts = [f"{self.uses_left} uses", f"{self.guesses_left} 'if this is a tensor' guesses",
                 f"{self.references_left} torch references without a marker"]
        return (f"torch uses found: {self.found}, converted: {self.converted} (guarded by a runtime type test: "
                f"{self.guarded}), left for a human: {self.left} ({', '.join(parts)}), rate: {self.rate}")


def left_by_convert(analysis: object) -> set[int]:
    """``id`` of each use of ``analysis`` that convert leaves for a human: a use with no fix (unless its
    code stays as written), and a guessed tensor method it marks (as ``fixall._unsure`` chooses them:
    a rewrite or a missing kernel, on a receiver not known to be a tensor, unless convert writes its rewrite
    behind a runtime type test: ``fixall.guarded_use``)."""
    from kb.analysis.fixall import guarded_use
    from kb.analysis.guarded import settled
    from kb.analysis.tensors import confident_guesses

    uses = getattr(analysis, "uses", [])
    sure = confident_guesses(analysis) if any(u.guess for u in uses) else set()
    return {id(u) for u in uses if u.counts and (
        (u.guess and u.call_span not in sure and (u.edits or (u.choice is not None and not u.choice.runs))
         and guarded_use(u, analysis) is None and not settled(u, analysis))
        or (not u.guess and not u.edits and not u.unchanged))}
