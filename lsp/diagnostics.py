"""Engine ``Use``s -> LSP diagnostics (pure translation; no I/O).

Which settings key decides a use's severity:

| use                                                             | setting          |
|-----------------------------------------------------------------|------------------|
| tensor-method guess                                             | severity.guess   |
| no equivalent (or none for the configured MindSpore version)    | noEquivalent     |
| relation context_change / composite                             | contextChange    |
| parameters mean something else, defaults differ, torch has more | behaviorChange   |
| ... or a warning/error caveat applies                           | behaviorChange   |
| consistent, renamed, param_names_differ                         | rename           |
| a probe found no kernel on the configured device                | deviceSupport    |

``code`` is the relation, or the id of the caveat that raised the severity.  There is no
``data``: code actions are planned from the current analysis, found by the diagnostic's range.
A 5,000-line file can hold thousands of uses, so ``DiagnosticCache`` builds each use's
diagnostics once: the range-free part per verdict, the whole diagnostic per (verdict, range),
reused by the document's next publication while the use is at the same place.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lsprotocol import types

from kb.analysis.rewrite import family_aside
from lsp.settings import ServerSettings

SOURCE = "msmap"
LEVELS = {"error": 1, "warning": 2, "information": 3, "hint": 4}
CONTEXT = frozenset({"context_change", "composite"})
BEHAVIOUR = frozenset({"param_semantics_differ", "defaults_differ", "torch_more_params"})
LOUD_CAVEATS = ("error", "warning")


def severity_key(use: Any) -> tuple[str, str | None]:
    """(settings key, caveat id that decided it, if one did)."""
    if use.guess:
        return "guess", None
    if use.category == "none":
        return "no_equivalent", None
    if use.relation in CONTEXT:
        return "context_change", None
    if use.relation in BEHAVIOUR:
        return "behavior_change", None
    loud = next((c for c in use.caveats if c.get("severity") in LOUD_CAVEATS), None)
    if loud is not None:
        return "behavior_change", loud.get("id")
    return "rename", None


def message(use: Any) -> str:
    """One line: the torch name, its MindSpore target, and why it needs attention.  The relation is
    not repeated: it is the diagnostic's ``code`` (or, for a caveat code, on the hover card)."""
    if use.guess:
        target = f" → {use.api}" if use.api else ""
        return f"possibly {use.torch_name}{target} (receiver type unknown)"
    if use.category == "none":
        return f"{use.torch_name}: {use.reason or 'no MindSpore equivalent'}"
    fallback = family_aside(use.choice.target.get("family")) if use.fallback else ""
    detail = use.behaviour or _without_relation(use.reason or "", use.relation)
    return f"{use.torch_name} → {use.api}{fallback}" + (f": {detail}" if detail else "")


def _without_relation(reason: str, relation: str | None) -> str:
    """The engine's reason for a manual rewrite starts with the relation's words ("defaults differ: ...")."""
    words = f"{(relation or '').replace('_', ' ')}: "
    return reason[len(words):] if relation and reason.startswith(words) else reason


def device_problem(use: Any, device: str) -> str | None:
    """A probe result saying the chosen target has no kernel on ``device``, if recorded."""
    target = use.target or {}
    for probe in target.get("probes") or []:
        result = str(probe.get("result") or "").lower()
        if result == f"no_{device.lower()}_kernel" or (
                result.startswith("no_") and result.endswith("_kernel")
                and str(probe.get("device") or "").lower() == device.lower()):
            return f"{use.api} has no {device} kernel (probe on mindspore {probe.get('ms_version') or '?'})"
    return None


def nothing_to_do(use: Any) -> bool:
    """A guessed tensor method that converts to itself: its only target is the same-named
    ``mindspore.Tensor`` method, consistent, with no caveat, and the call stays as written
    (``x.item()``).  Whether or not the receiver is a tensor, the user has nothing to change, so
    no diagnostic is published for it (docs/lsp.md, "Diagnostics"); its hover card still shows."""
    if not (use.guess and use.unchanged and not use.edits and not use.caveats and use.behaviour is None):
        return False
    choice = use.choice
    if choice is None or choice.fallback or choice.relation != "consistent" or not choice.api:
        return False
    return choice.api.rsplit(".", 1)[-1] == use.torch_name.rsplit(".", 1)[-1]


def parts(use: Any, settings: ServerSettings) -> list[dict[str, Any]]:
    """The diagnostics of one use, without their range (none, one, or two with a device note)."""
    if use.kind == "import":
        return []  # the uses of an imported name carry the diagnostics
    key, caveat = severity_key(use)
    href = {"href": settings.docs_url(use.torch_name)}
    out = []
    level = getattr(settings.severity, key)
    if level != "off" and not nothing_to_do(use):
        out.append({"severity": LEVELS[level], "code": caveat or use.relation or "no_equivalent", "source": SOURCE,
                    "message": message(use), "codeDescription": href})
    problem = device_problem(use, settings.device) if use.api else None
    if problem and settings.severity.device_support != "off":
        out.append({"severity": LEVELS[settings.severity.device_support], "code": "device_support",
                    "source": SOURCE, "message": problem, "codeDescription": href})
    return out


def verdict(use: Any) -> tuple:
    """Everything ``parts`` reads from a use, except where it is.  For one ``Serializer`` (one set of
    settings) the torch name, target API and relation fix the target, hence its caveats and probes."""
    choice = use.choice
    target = choice.target if choice is not None else None
    return (use.torch_name, use.kind, use.category, use.reason, use.behaviour, use.guess, use.unchanged,
            bool(use.edits), target.get("api") if target else None, target.get("relation") if target else None,
            choice.fallback if choice is not None else False)


class Published:
    """What a publication of a document keeps for the next: per use (by ``id``: ``uses`` keeps the ids
    valid), its diagnostics (see ``DiagnosticCache._build``), the line it was on and its ``verdict``."""

    def __init__(self, uses: list[Any]) -> None:
        self.uses = uses
        self.found: dict[int, Any] = {}
        self.line: dict[int, int] = {}
        self.verdict: dict[int, tuple] = {}

    def by_place(self) -> dict[tuple, Any]:
        """The diagnostics by (verdict, line, column, end line, end column)."""
        places: dict[tuple, Any] = {}
        for key, found in self.found.items():
            first = found if type(found) is dict else found[0] if found else None
            if first is not None:
                span = first["range"]
                places[(self.verdict[key], span["start"]["line"], span["start"]["character"],
                        span["end"]["line"], span["end"]["character"])] = found
        return places


class DiagnosticCache:
    """The diagnostics of a document's uses, in the form they travel in (LSP JSON).  The range-free part
    of each is kept per verdict, and each use's diagnostics for the document's next publication, by the
    use itself: after a re-analysis, a use that an edit did not touch is the same object (``Analysis``
    keeps the uses an edit only moved, with their lag), so after a keystroke its diagnostic is reused
    when it is on the same line, and a use moved by a new line only needs its range written again.  No
    lsprotocol object is built for a publication (thousands per keystroke); ``lsp.protocol.converter``
    sends these dicts as they are, and nothing per use is kept besides them (the garbage collector
    tracks every container that survives a publication)."""

    LIMIT = 50_000
    MANY = 64  # a publication with more new uses than this (or than half) looks for their diagnostics by place too

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self._parts: dict[tuple, list[dict[str, Any]]] = {}
        self._last: dict[str, Published] = {}  # uri -> its last publication

    def payload(self, uses: list[Any], uri: str | None = None,
                lag: list[tuple[int, int]] | None = None) -> list[dict[str, Any]]:
        """The diagnostics of ``uses`` (each ``lag[i][1]`` lines below its range, if given: see
        ``Analysis.held``) as LSP JSON objects, kept for the next publication of ``uri``."""
        before = self._last.get(uri) if uri is not None else None
        now = Published(uses)
        found_before = before.found if before is not None else {}
        out: list[dict[str, Any]] = []
        new: list[tuple[int, int, Any]] = []  # (index in out, line, use) of the uses not kept from before
        for index, use in enumerate(uses):
            line = use.range.start.line + lag[index][1] if lag is not None else use.range.start.line
            key = id(use)
            found: Any = found_before.get(key)
            if found is None or before is None:
                new.append((len(out), line, use))
                found = ()
            else:
                now.verdict[key] = before.verdict[key]
                if before.line[key] != line:  # moved by whole lines (its columns are the same): a new range
                    start, end = use.range
                    found = self._build(use, now.verdict[key], line, start.character, end.line + line - start.line,
                                        end.character)
            now.found[key] = found
            now.line[key] = line
            out.append(found)
        # Uses built again (a full analysis after a structural edit) find their diagnostics by verdict and place.
        by_place = before.by_place() if before is not None and len(new) > min(self.MANY, len(uses) // 2) else {}
        for index, line, use in new:
            start, end = use.range
            place = (verdict(use), line, start.character, end.line + line - start.line, end.character)
            found = by_place.get(place)
            if found is None:
                found = self._build(use, *place)
            key = id(use)
            now.found[key] = out[index] = found
            now.verdict[key] = place[0]
        if uri is not None:
            self._last[uri] = now
        flat: list[dict[str, Any]] = []
        for found in out:
            if type(found) is dict:
                flat.append(found)
            else:
                flat.extend(found)
        return flat

    def diagnostics(self, uses: Iterable[Any], uri: str | None = None) -> list[types.Diagnostic]:
        """The same as lsprotocol objects (tests, and anything that reads them)."""
        from lsp.protocol import converter

        structure = converter().structure
        return [structure(d, types.Diagnostic) for d in self.payload(list(uses), uri)]

    def _build(self, use: Any, key: tuple, line: int, character: int, end_line: int,
               end_character: int) -> dict[str, Any] | tuple[dict[str, Any], ...]:
        """A use's diagnostics: the one diagnostic itself (most uses), else a tuple of them (a shared empty
        one for none): no list object per use is kept between publications."""
        found = self._parts.get(key)
        if found is None:
            if len(self._parts) > self.LIMIT:
                self._parts.clear()
            found = self._parts[key] = parts(use, self.settings)
        if not found:
            return ()
        span = {"start": {"line": line, "character": character}, "end": {"line": end_line, "character": end_character}}
        if len(found) == 1:
            return {"range": span, **found[0]}
        return tuple({"range": span, **p} for p in found)

    def forget(self, uri: str) -> None:
        """Drop what is kept for ``uri`` (it was closed)."""
        self._last.pop(uri, None)
