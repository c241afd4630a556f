"""Every spelling of the installed torch's objects, from their identities (``msmap snapshot``).

``spellings(roots)`` imports each public module below the roots (``torch``, and ``torchvision``
when it imports) and groups every module-level name by the object it is bound to: the
implementation path ``torch.nn.modules.linear.Linear``, the re-exports ``torch.nn.Linear`` and
``torch.nn.modules.Linear`` are one group.  For each class it also lists its own members by kind
(enum members, methods, properties, special methods ...) and its bases, so a member of a known
class resolves without torch (``kb/spellings.py`` reads the table from the DB).

Written into the torch snapshot (keys ``spellings`` and ``members``); only the standard library
and the framework are needed, as for the rest of ``kb.introspect``.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from collections.abc import Callable, Mapping
from typing import Any

# Modules never imported while walking: they start servers, need a GPU toolchain, or print on import;
# nor test helpers (``testing``, ``_testing``): they register fakes (an rpc backend added to an enum).
SKIP = ("torch.utils.tensorboard", "torch.utils.bottleneck", "torch.utils.benchmark.examples",
        "torch.distributed.elastic.agent.server.health_check_server", "torch.testing", "torch.contrib",
        "torch.onnx", "torch.utils.hipify", "torch.backends._coreml", "torch.utils.model_dump",
        "torch.__main__", "torchvision.prototype")
KINDS = ("enum member", "method", "classmethod", "staticmethod", "property", "special method", "attribute")


def _public(name: str) -> bool:
    return not any(part.startswith("_") for part in name.split("."))


def _modules(root: Any, log: Callable[[str], None]) -> list[str]:
    """Names of the modules below ``root`` that import (imported as a side effect): the public ones,
    and the private children of public packages other than the root (``torch.distributed._tensor``,
    an old home of ``distribute_tensor``; not ``torch._dynamo``), which are not walked further."""
    found = [root.__name__]
    pending = [root]
    while pending:
        package = pending.pop()
        for info in pkgutil.iter_modules(getattr(package, "__path__", []), package.__name__ + "."):
            name = info.name
            private = not _public(name)
            helper = {"testing", "_testing"} & set(name.split("."))
            if name.startswith(SKIP) or helper or (private and package is root) or name.rpartition(".")[2][:2] == "__":
                continue
            try:
                module = importlib.import_module(name)
            except BaseException as exc:  # noqa: BLE001 (an optional dependency, a failing import: skip it)
                log(f"skipped {name}: {type(exc).__name__}")
                continue
            found.append(name)
            if info.ispkg and not private:
                pending.append(module)
    return found


def _kind(cls: type, name: str, value: Any, members: Mapping | None) -> str:
    if members is not None and name in members:
        return "enum member"
    if isinstance(value, classmethod):
        return "classmethod"
    if isinstance(value, staticmethod):
        return "staticmethod"
    if name.startswith("__") and name.endswith("__"):
        return "special method"
    if isinstance(value, property) or inspect.isdatadescriptor(value):
        return "property"
    if callable(value):
        return "method"
    return "attribute"


def _identity(obj: Any) -> str | None:
    """``__module__.__qualname__`` when that path leads back to ``obj`` (else None)."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        return None
    found: Any = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return f"{module}.{qualname}" if found is obj else None


def spellings(roots: tuple[str, ...] = ("torch", "torchvision"), log: Callable[[str], None] = print) -> dict:
    """``{"spellings": {identity: [other spellings]}, "members": {class identity: {"mro": [...],
    kind: [names]}}, "spelling_roots": [roots that imported], "object_members": dir(object)}``."""
    groups: dict[int, set[str]] = {}
    objects: dict[int, Any] = {}
    imported = []
    for root in roots:
        try:
            package = importlib.import_module(root)
        except BaseException as exc:  # noqa: BLE001 (torchvision may not import next to this torch)
            log(f"skipped {root}: {type(exc).__name__}: {exc}")
            continue
        imported.append(root)
        walked = _modules(package, log)  # then private modules something imported (torch.distributed._tensor)
        loaded = walked + sorted(n for n in set(sys.modules) - set(walked) if n.partition(".")[0] == root)
        for name in loaded:
            module = sys.modules.get(name)
            for attr, obj in list(vars(module).items()) if module is not None else ():
                if attr.startswith("_") or not (inspect.isclass(obj) or inspect.isroutine(obj)):
                    continue
                home = getattr(obj, "__module__", None)
                if not isinstance(home, str) or home.partition(".")[0] not in roots:
                    continue
                groups.setdefault(id(obj), set()).add(f"{name}.{attr}")
                objects[id(obj)] = obj
    table: dict[str, list[str]] = {}
    keys: dict[int, str] = {}
    for key, bound in groups.items():
        identity = _identity(objects[key])
        everything = bound | ({identity} if identity else set())
        if len(everything) < 2 or not any(_public(n) for n in everything):
            if any(_public(n) for n in everything) and inspect.isclass(objects[key]):
                keys[key] = identity or min(everything)  # a class with one spelling: its members still count
            continue
        head = identity or min(everything, key=lambda n: (not _public(n), n.count("."), n))
        keys[key] = head
        table[head] = sorted(everything - {head})
    members: dict[str, dict[str, list[str]]] = {}
    for key, head in keys.items():
        cls = objects[key]
        if not inspect.isclass(cls):
            continue
        enum_members = getattr(cls, "__members__", None)
        enum_members = enum_members if isinstance(enum_members, Mapping) else None  # enum.Enum, pybind11 enums
        own: dict[str, list[str]] = {}
        for name, value in list(vars(cls).items()) + [(n, None) for n in (enum_members or {})]:
            if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
                continue
            if name in ("__dict__", "__doc__", "__module__", "__weakref__", "__annotations__", "__qualname__"):
                continue
            kind = _kind(cls, name, value, enum_members)
            if name not in own.setdefault(kind, []):
                own[kind].append(name)
        mro = [keys[id(base)] for base in cls.__mro__[1:] if id(base) in keys]
        entry = {kind: sorted(names) for kind, names in sorted(own.items())}
        if mro:
            entry["mro"] = mro
        if entry:
            members[head] = entry
    return {"spelling_roots": imported, "object_members": sorted(dir(object)),
            "spellings": dict(sorted(table.items())), "members": dict(sorted(members.items()))}
