"""Walk a namespace table and describe every public API it lists.

Both surfaces (``surface_torch``, ``surface_mindspore``) are data: a list of
``Namespace`` rows.  This module applies the rules they share:

- private names (leading ``_``) and submodules are never APIs;
- names come from ``__all__`` (``names="all"``, falling back to ``dir()`` when a
  module has none), from ``dir()`` only (``"dir"``), or from both
  (``"union"``: for modules whose ``__all__`` is known to be incomplete);
- names reached only through ``dir()`` must be routines or classes defined
  under the framework's own package, outside its private modules;
- exceptions and warnings, and objects defined outside the framework
  (``typing``, ``collections.abc``, ``builtins`` ...) are skipped;
- ``members=True`` rows list a class's public methods (kind ``method``) and
  properties/descriptors (kind ``attribute``), named ``<class path>.<name>``;
  ``own_only=True`` keeps only those defined on the class itself.
"""
from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from kb.introspect.describe import describe

CALLABLE_KINDS = frozenset({"function", "class"})
DESCRIPTOR_TYPES = ("getset_descriptor", "member_descriptor", "property", "cached_property")


@dataclass(frozen=True)
class Namespace:
    bucket: str  # recorded as the API's "namespace"
    path: str  # importable module, or module path + "." + class name when members=True
    names: str = "all"  # all | dir | union
    kinds: frozenset = CALLABLE_KINDS  # kinds kept: function, class, dtype, attribute
    members: bool = False
    own_only: bool = False
    optional: bool = False  # silently absent in versions that lack it
    skip: re.Pattern | None = None  # names matching this are not APIs


@dataclass
class Rules:
    """Framework-specific hooks used by ``walk``."""

    root: str  # "torch" or "mindspore"
    is_dtype: Callable[[object], bool]
    keep: Callable[[Namespace, str, object, bool], bool] = lambda ns, name, obj, listed: True
    constant_types: tuple = field(default_factory=tuple)  # non-callables kept as "attribute"
    private_ok: tuple = ()  # private modules whose dir()-only routines are still public APIs


def resolve(path: str):
    """Import ``path`` as a module, or as ``module.attr`` (a class)."""
    try:
        return importlib.import_module(path)
    except ImportError:
        module, _, attr = path.rpartition(".")
        if not module:
            raise
        return getattr(importlib.import_module(module), attr)


def walk(namespaces: list[Namespace], rules: Rules, log=None) -> dict[str, dict]:
    """Snapshot entries by fully qualified name, for every row of ``namespaces``.

    An object recorded by an earlier row of the same bucket (a submodule
    re-exporting its parent's API) is not recorded again.  ``log`` receives a line per optional row skipped.
    """
    apis: dict[str, dict] = {}
    seen: set[tuple[str, int]] = set()
    for ns in namespaces:
        try:
            owner = resolve(ns.path)
        except (ImportError, AttributeError) as exc:
            if not ns.optional:
                raise
            if log:
                log(f"skipped {ns.path}: {type(exc).__name__}: {exc}")
            continue
        if ns.members:
            found = _members(owner, ns, rules)
        else:
            rows = _module_apis(owner, ns, rules)
            found = {name: describe(obj, kind) for name, (obj, kind) in rows.items()
                     if (ns.bucket, id(obj)) not in seen}
            seen.update((ns.bucket, id(obj)) for obj, _ in rows.values())
        for name, entry in found.items():
            entry["namespace"] = ns.bucket
            apis.setdefault(f"{ns.path}.{name}", entry)
    return apis


def _names(module, mode: str) -> tuple[list[str], set[str]]:
    listed = [n for n in getattr(module, "__all__", None) or [] if isinstance(n, str)]
    public = [n for n in dir(module) if not n.startswith("_")]
    if mode == "dir" or (mode == "all" and not listed):
        return public, set(public)
    if mode == "all":
        return listed, set(listed)
    return sorted(set(listed) | set(public)), set(listed)


def _module_apis(module, ns: Namespace, rules: Rules) -> dict[str, tuple]:
    names, listed = _names(module, ns.names)
    out: dict[str, tuple] = {}
    for name in names:
        if name.startswith("_") or (ns.skip and ns.skip.search(name)):
            continue
        try:
            obj = getattr(module, name)
        except Exception:  # stale __all__ entries, lazy attributes that fail
            continue
        kind = classify(obj, rules)
        if kind is None or kind not in ns.kinds:
            continue
        if name not in listed and not _defined_publicly(obj, kind, rules):
            continue
        if not rules.keep(ns, name, obj, name in listed):
            continue
        out[name] = (obj, kind)
    return out


def classify(obj, rules: Rules) -> str | None:
    """function | class | dtype | attribute, or None for things that are not APIs."""
    if inspect.ismodule(obj):
        return None
    if inspect.isclass(obj):
        if issubclass(obj, BaseException) or not _in_framework(obj, rules.root):
            return None
        return "class"
    if rules.is_dtype(obj):
        return "dtype"
    if inspect.isroutine(obj) or callable(obj):
        return "function" if _in_framework(obj, rules.root) else None
    if isinstance(obj, rules.constant_types) and not isinstance(obj, bool):
        return "attribute"
    return None


def _in_framework(obj, root: str) -> bool:
    """Defined by the framework (C builtins may carry no ``__module__``)."""
    if inspect.isclass(obj) or inspect.isroutine(obj):
        module = getattr(obj, "__module__", None)
        if module is None and inspect.isbuiltin(obj):
            return True
    else:
        module = type(obj).__module__
    return isinstance(module, str) and (module == root or module.startswith(root + "."))


def _defined_publicly(obj, kind: str, rules: Rules) -> bool:
    """For names found only via dir(): a constant, or a routine/class from a public module."""
    if kind in ("dtype", "attribute"):
        return True
    if not (inspect.isclass(obj) or inspect.isroutine(obj)):
        return False
    module = getattr(obj, "__module__", None) or rules.root
    if module in rules.private_ok:
        return True
    return not any(part.startswith("_") for part in module.split("."))


def _members(cls, ns: Namespace, rules: Rules) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for name in dir(cls):
        if name.startswith("_") or (ns.skip and ns.skip.search(name)):
            continue
        if ns.own_only and name not in vars(cls):
            continue
        try:
            raw = inspect.getattr_static(cls, name)
            obj = getattr(cls, name)
        except Exception:
            continue
        if type(raw).__name__ in DESCRIPTOR_TYPES:
            kind = "attribute"
        elif inspect.isroutine(obj):
            kind = "method"
        elif inspect.isclass(obj) or inspect.ismodule(obj):
            continue
        else:
            kind = "attribute"
        if kind == "attribute" and "attribute" not in ns.kinds:
            continue
        if not rules.keep(ns, name, obj, True):
            continue
        method = not isinstance(raw, (staticmethod, classmethod))
        out[name] = describe(obj, kind, method=method)
    return out
