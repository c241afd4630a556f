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
    fallback = f" ({use.choice.target.get('family')} API; none in the configured family)" if use.fallback else ""
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


def parts(use: Any, settings: ServerSettings) -> list[dict[str, Any]]:
    """The diagnostics of one use, without their range (none, one, or two with a device note)."""
    if use.kind == "import":
        return []  # the uses of an imported name carry the diagnostics
    key, caveat = severity_key(use)
    href = {"href": settings.docs_url(use.torch_name)}
    out = []
    level = getattr(settings.severity, key)
    if level != "off":
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
    return (use.torch_name, use.kind, use.category, use.reason, use.behaviour, use.guess,
            target.get("api") if target else None, target.get("relation") if target else None,
            choice.fallback if choice is not None else False)


class DiagnosticCache:
    """The diagnostics of a document's uses, in the form they travel in (LSP JSON).  The range-free part
    of each is kept per verdict, and each use's diagnostics per (verdict, range) for the document's next
    publication: after a keystroke, every use off the edited line is the same use at the same place, and
    a use moved by a new line only needs its range written again.  No lsprotocol object is built for a
    publication (thousands per keystroke); ``lsp.protocol.converter`` sends these dicts as they are."""

    LIMIT = 50_000

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self._parts: dict[tuple, list[dict[str, Any]]] = {}
        self._last: dict[str, dict[tuple, list[dict[str, Any]]]] = {}  # uri -> its last publication, by use key

    def payload(self, uses: Iterable[Any], uri: str | None = None) -> list[dict[str, Any]]:
        """The diagnostics of ``uses`` as LSP JSON objects (kept for the next publication of ``uri``)."""
        previous = self._last.get(uri, {}) if uri is not None else {}
        current: dict[tuple, list[dict[str, Any]]] = {}
        out: list[dict[str, Any]] = []
        for use in uses:
            s, e = use.range.start, use.range.end
            key = (verdict(use), s.line, s.character, e.line, e.character)
            found = previous.get(key)
            if found is None:
                found = self._build(use, key)
            current[key] = found
            out.extend(found)
        if uri is not None:
            self._last[uri] = current
        return out

    def diagnostics(self, uses: Iterable[Any], uri: str | None = None) -> list[types.Diagnostic]:
        """The same as lsprotocol objects (tests, and anything that reads them)."""
        from lsp.protocol import converter

        structure = converter().structure
        return [structure(d, types.Diagnostic) for d in self.payload(uses, uri)]

    def _build(self, use: Any, key: tuple) -> list[dict[str, Any]]:
        found = self._parts.get(key[0])
        if found is None:
            if len(self._parts) > self.LIMIT:
                self._parts.clear()
            found = self._parts[key[0]] = parts(use, self.settings)
        if not found:
            return []
        span = {"start": {"line": key[1], "character": key[2]}, "end": {"line": key[3], "character": key[4]}}
        return [{"range": span, **p} for p in found]

    def forget(self, uri: str) -> None:
        """Drop what is kept for ``uri`` (it was closed)."""
        self._last.pop(uri, None)
