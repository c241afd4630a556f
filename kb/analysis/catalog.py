"""The engine's view of the knowledge base.

``KnowledgeBase`` is the small protocol the engine codes against (``kb.query.KB``
provides it; tests use ``MemoryKB``).  ``Catalog`` wraps one and memoizes every
answer, so a name is looked up once per process however often it occurs, and it
turns any failure of the KB into "not found": analysis never raises.
"""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

Record = dict[str, Any]


@runtime_checkable
class KnowledgeBase(Protocol):
    def mapping(self, torch_name: str) -> Record | None: ...

    def is_torch_api(self, name: str) -> bool: ...

    def tensor_method(self, method_name: str) -> str | None: ...

    def reverse(self, ms_name: str) -> Record | None: ...

    def resolve(self, name: str) -> str | None: ...


def could_be_reexport(name: str) -> bool:
    """Cheap test before asking the KB to canonicalize (see ``is_reexport``)."""
    parts = name.split(".")
    leaf = parts[-1].lower()
    return any(p == "modules" or _private(p) or p == leaf for p in parts[1:-1])


def is_reexport(name: str, canonical: str) -> bool:
    """True when ``canonical`` is the public spelling of the implementation path ``name``.

    ``torch.nn.modules.conv.Conv2d`` -> ``torch.nn.Conv2d`` and ``torch.optim.sgd.SGD``
    -> ``torch.optim.SGD`` qualify; ``torch.cuda.manual_seed`` -> ``torch.manual_seed``
    does not (a different API that happens to share its leaf name).  A dropped part
    must be private (``_C``), the leaf's own module (``sgd``), or come after a
    dropped ``modules`` (``conv`` in ``nn.modules.conv``).
    """
    parts, kept = name.split("."), canonical.split(".")
    if parts[-1] != kept[-1] or not canonical.startswith("torch"):
        return False
    head, modules = parts[:-1], set(kept[:-1])
    if [p for p in head if p in modules] != kept[:-1]:
        return False
    removed = [i for i, p in enumerate(head) if p not in modules]
    if not removed:
        return False
    cut = head.index("modules") if "modules" in head and "modules" not in modules else len(head)
    return all(i >= cut or _droppable(head[i], parts[-1]) for i in removed)


def _private(part: str) -> bool:
    """A private module (``_C``, ``_tensor``); a dunder (``__version__``, ``__class__``) is a value's
    attribute, so what follows it is that value's member (``torch.__version__.split`` is str.split)."""
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _droppable(part: str, leaf: str) -> bool:
    return _private(part) or part == leaf.lower()


class Catalog:
    """Memoizing, never-raising front of a ``KnowledgeBase``."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self._records: dict[str, Record | None] = {}
        self._methods: dict[str, str | None] = {}
        self._longest: dict[tuple[str, tuple[str, ...]], tuple[int, str, Record] | None] = {}
        self._reachable: dict[str, bool] = {}
        self.tensor_methods: dict[bytes, str | None] = {}  # a cache the tensor-method guesses fill
        self._names: list[str] | None = None
        self._index: dict[str, set[str]] | None = None
        self._parameter_names: dict[str, dict[str, str]] | None = None

    def parameter_names(self) -> dict[str, dict[str, str]]:
        """MindSpore layer class -> {torch parameter name: MindSpore name}, from the KB's weight
        rules (``{}`` for a KB without them)."""
        if self._parameter_names is None:
            from kb.analysis.narrowing import parameter_names

            rules = getattr(self.kb, "weight_rules", None)
            try:
                self._parameter_names = parameter_names(rules() if rules is not None else [])
            except Exception:  # a broken KB must not break analysis
                self._parameter_names = {}
        return self._parameter_names

    def lookup(self, name: str) -> Record | None:
        """The record of a fully qualified torch name, or None."""
        try:
            return self._records[name]
        except KeyError:
            pass
        known = self._safe(self.kb.is_torch_api, name)
        record = self._safe(self.kb.mapping, name) if known is not False else None
        if record is None and hasattr(self.kb, "spelling"):  # the same object, by torch's identities (kb/spellings.py)
            canonical = self._safe(self.kb.spelling, name)
            record = self._safe(self.kb.mapping, canonical) if isinstance(canonical, str) else None
        if record is None and name.count(".") >= 2 and could_be_reexport(name):
            # Canonicalize module paths (torch.nn.modules.linear.Linear -> torch.nn.Linear),
            # but only when the leaf name stays the same: no fuzzy matches here.
            canonical = self._safe(self.kb.resolve, name)
            if canonical is None and hasattr(self.kb, "resolve_all"):
                # a leaf shared by several APIs (torch.nn.Linear, torch.nn.quantized.Linear): keep the one
                # that is a re-export of ``name``, if exactly one is
                _, others = self._safe(self.kb.resolve_all, name) or (None, [])
                public = [other for other in others if is_reexport(name, other)]
                canonical = public[0] if len(public) == 1 else None
            if isinstance(canonical, str) and canonical != name and is_reexport(name, canonical):
                record = self._safe(self.kb.mapping, canonical)
        if not isinstance(record, dict):
            record = None
        self._records[name] = record
        return record

    def longest(self, base: str, attrs: tuple[str, ...]) -> tuple[int, str, Record] | None:
        """The longest known name among ``base``, ``base.attrs[0]``, ... as (attrs used, name, record).

        Memoized: the same chains (``torch.float32``, ``nn.Linear``) recur across a project.
        """
        key = (base, attrs)
        try:
            return self._longest[key]
        except KeyError:
            pass
        names, name = [base], base
        for attr in attrs:
            name = f"{name}.{attr}"
            names.append(name)
        found = None
        for index in range(len(names) - 1, -1, -1):
            record = self.lookup(names[index])
            if record is not None:
                found = (index, names[index], record)
                break
        if len(self._longest) > 200_000:
            self._longest.clear()
        self._longest[key] = found
        return found

    def reaches(self, path: str) -> bool:
        """Whether some ``path.a.b...`` could name a known API (directly or as a re-export).

        False for torch internals with nothing public below them (``torch._inductor.config``,
        ``torch.testing._internal.opinfo.core.DecorateInfo``): the resolver then never looks
        at the name's occurrences, which are about half of all names in torch's own sources.
        Errs towards True: a True that could be False only costs time.
        """
        found = self._reachable.get(path)
        if found is None:
            found = self._reachable[path] = self._reaches(path)
        return found

    def _reaches(self, path: str) -> bool:
        if self.lookup(path) is not None:
            return True
        names = self._sorted_names()
        if names is None:
            return True  # the KB cannot list its names: assume anything may be known
        at, below = bisect_left(names, path), bisect_left(names, path + ".")
        if (at < len(names) and names[at] == path) or (below < len(names) and names[below].startswith(path + ".")):
            return True  # a known name is ``path`` or lies below it
        # A re-export keeps every part before a dropped ``modules`` unless it is private or
        # the leaf's own module: some known name must hold all such parts (or end in one).
        parts = path.split(".")
        if "modules" in parts:
            parts = parts[: parts.index("modules")]
        needed = [p for p in parts if not p.startswith("_")]
        by_part = self._by_part(names)
        candidates: set[str] | None = None
        for part in needed:
            holders = by_part.get(part, set())
            candidates = holders if candidates is None else candidates & holders
            if not candidates:
                return False
        return bool(names if candidates is None else candidates)  # all parts private: any known name

    def names_below(self, path: str) -> list[str]:
        """The KB's torch names one level below ``path`` (``torch.nn`` -> ``torch.nn.Conv2d``, ...)."""
        names = self._sorted_names() or []
        prefix = path + "."
        at = bisect_left(names, prefix)
        found = []
        while at < len(names) and names[at].startswith(prefix):
            if "." not in names[at][len(prefix):]:
                found.append(names[at])
            at += 1
        return found

    def _sorted_names(self) -> list[str] | None:
        """The KB's torch names, sorted (None when the KB cannot list them)."""
        if self._names is None:
            listed = getattr(self.kb, "torch_names", None)
            if listed is None:
                listed = getattr(self.kb, "records", None)
            if listed is None:
                return None
            self._names = sorted(listed)
        return self._names

    def _by_part(self, names: list[str]) -> dict[str, set[str]]:
        """Known names by module part or lower-cased leaf (built the first time a path needs it)."""
        if self._index is None:
            by_part: dict[str, set[str]] = {}
            for name in names:
                parts = name.split(".")
                for part in set(parts[:-1]) | {parts[-1].lower()}:
                    by_part.setdefault(part, set()).add(name)
            self._index = by_part
        return self._index

    def tensor_method(self, method: str) -> str | None:
        """'torch.Tensor.<method>' when the KB has that Tensor method, else None."""
        try:
            return self._methods[method]
        except KeyError:
            pass
        found = self._safe(self.kb.tensor_method, method)
        found = found if isinstance(found, str) and self.lookup(found) is not None else None
        self._methods[method] = found
        return found

    @staticmethod
    def _safe(fn: Any, arg: str) -> Any:
        try:
            return fn(arg)
        except Exception:  # a broken KB must not break analysis
            return None


class MemoryKB:
    """An in-memory ``KnowledgeBase`` built from record dicts (tests, fixtures)."""

    def __init__(self, records: Iterable[Record], aliases: dict[str, str] | None = None) -> None:
        self.records: dict[str, Record] = {r["torch"]: r for r in records}
        self.aliases = dict(aliases or {})
        self._reverse: dict[str, Record] = {}
        for record in self.records.values():
            for target in record.get("targets") or []:
                if target.get("api"):
                    self._reverse.setdefault(target["api"], record)

    def mapping(self, torch_name: str) -> Record | None:
        return self.records.get(torch_name)

    def is_torch_api(self, name: str) -> bool:
        return name in self.records

    def tensor_method(self, method_name: str) -> str | None:
        name = f"torch.Tensor.{method_name}"
        return name if name in self.records else None

    def reverse(self, ms_name: str) -> Record | None:
        return self._reverse.get(ms_name)

    def resolve(self, name: str) -> str | None:
        if name in self.records:
            return name
        return self.aliases.get(name)
