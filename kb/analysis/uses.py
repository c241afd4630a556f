"""The engine's results: ``Use`` (one torch use, with its verdict) and ``Fix``.

Both are plain data with no tree-sitter nodes, so they can be cached, compared,
sent to another process or turned into LSP diagnostics and code actions.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kb.analysis.settings import TargetChoice
from kb.analysis.text import Range, TextEdit

CATEGORIES = ("direct", "caveats", "manual", "none", "guess")
CATEGORY_LABELS = {
    "direct": "converts directly",
    "caveats": "converts with caveats",
    "manual": "manual / context change",
    "none": "no equivalent",
    "guess": "possible tensor method (guess)",
}
KINDS = ("call", "attribute", "import", "class_base", "method_def")


@dataclass(eq=False)
class Use:
    """One use of a torch API in a document.

    ``range`` covers what an editor underlines (the callee ``nn.Linear``, the
    attribute ``opt.step``, the base ``nn.Module``, the ``forward`` of a ``def``,
    the imported name).  ``category`` is the scan verdict; ``reason`` says in
    one line why a use is not automatic or what to check; ``rewrite`` holds the
    planned edits when the use converts automatically.
    """

    torch_name: str
    kind: str
    range: Range
    record: dict[str, Any]
    choice: TargetChoice | None
    category: str
    reason: str = ""
    guess: bool = False
    member: bool = False  # reached through an object (``opt.step``): only the member is renamed
    caveats: list[dict[str, Any]] = field(default_factory=list)
    title: str = ""  # title of the fix, when there is one
    edits: list[TextEdit] = field(default_factory=list)  # the fix's edits (no import edit)
    behaviour: str | None = None  # why the fix may change behaviour
    call_span: tuple[int, int] | None = None  # the whole call, for calls
    group: int | None = None  # uses of one class migration share a group
    unchanged: bool = False  # the MindSpore code is the torch code as written (nothing to convert)
    rule: str | None = None  # the registered rule that found it (kb/analysis/rules); None for a torch name
    replaces: str | None = None  # a rule's use: the torch name of a use at the same place it takes over
    extended_by: tuple[str, ...] = ()  # the registered extensions (kb/analysis/rules) that added edits to its fix
    reach: tuple[int, int] | None = None  # the bytes those extensions read (even to add nothing): see ``extent``
    # a rule's use that ``replaces``: the use it took the place of, as it was then (at the same place), which
    # the rules read again when they run after an edit (kb/analysis/reruns.py)
    replaced: Use | None = field(default=None, compare=False, repr=False)

    @property
    def start(self) -> int:
        return self.range.start.offset

    def extent(self) -> tuple[int, int]:
        """The bytes the use depends on: its range, its call, what its extensions read, and the text its fix
        replaces (``with torch.no_grad():`` rewrites its body: an edit there must redo the use)."""
        start, end = self.range.start.offset, self.range.end.offset
        if self.call_span is not None:
            start, end = min(start, self.call_span[0]), max(end, self.call_span[1])
        if self.reach is not None:  # (an edit in an ``if isinstance`` branch redoes the renames its class carries)
            start, end = min(start, self.reach[0]), max(end, self.reach[1])
        if self.kind in ("class_base", "method_def"):
            return start, end  # (a class migration's edits span the class: its own rules redo it, see widen)
        for edit in self.edits:  # (a rule's insertions too: a train step's ``def forward_fn():`` opens it)
            if edit.end > edit.start or self.rule is not None:
                start, end = min(start, edit.start), max(end, edit.end)
        return start, end

    @property
    def end(self) -> int:
        return self.range.end.offset

    @property
    def target(self) -> dict[str, Any] | None:
        return self.choice.target if self.choice else None

    @property
    def api(self) -> str | None:
        return self.choice.api if self.choice else None

    @property
    def relation(self) -> str | None:
        return self.choice.relation if self.choice else None

    @property
    def fallback(self) -> bool:
        return bool(self.choice and self.choice.fallback)

    @property
    def fixable(self) -> bool:
        return bool(self.edits)

    @property
    def counts(self) -> bool:
        """Whether scan counts this use as a site (imports are not)."""
        return self.kind != "import"


@dataclass(eq=False)
class Fix:
    """An editor quick-fix: edits to apply together (import edit included)."""

    title: str
    edits: list[TextEdit]
    uses: list[Use]
    safe: bool  # applied by fix-all / convert (guesses never are)
    changes_behaviour: bool = False

    @property
    def key(self) -> tuple[tuple[int, int, str], ...]:
        return tuple(sorted((e.start, e.end, e.new_text) for e in self.edits))


def categorize(guess: bool, choice: TargetChoice | None, fixable: bool, behaviour: str | None) -> str:
    if guess:
        return "guess"
    if choice is None or ((choice.relation == "no_equivalent" or not choice.api) and not fixable):
        return "none"  # (a template can rewrite what has no API: torch.no_grad() is removed)
    if not fixable:
        return "manual"
    return "caveats" if behaviour else "direct"


def first_sentence(text: str | None, limit: int = 120) -> str:
    """One line of Markdown prose, for a reason or a comment."""
    if not text:
        return ""
    line = " ".join(str(text).replace("`", "").split())
    for stop in (". ", "; "):
        if stop in line:
            line = line.split(stop, 1)[0]
    line = line.rstrip(".")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
