"""Torch classes that reach a module through ``from .sibling import Name``.

torchvision's ``vision_transformer.py`` has ``class MLPBlock(MLP)`` with ``MLP`` from
``.misc``, where ``class MLP(torch.nn.Sequential)``; ``swin_transformer.py`` builds
``self.mlp = MLP(...)`` and walks ``self.mlp.modules()``.  Each file is converted on its own,
so without a look at the sibling ``MLPBlock`` is not known to be an ``nn.Module`` and
``self.modules()`` stays, an ``AttributeError`` once the sibling's class is a ``Cell``.

Before a file of a project is converted (or scanned), the classes its relative imports name are
looked up in the sibling files: a class whose bases reach torch (through the sibling's own torch
imports, its own classes, or its relative imports, a few levels deep) is an ``ImportedClass``,
with the torch bases it reaches and the methods its own lineage defines (``self.forward`` of a
subclass is the user's method, not a torch API).  The resolver binds such a name like a class
of the file itself.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from kb.analysis.imports import is_torch_path
from kb.analysis.sourcefile import read_source
from kb.analysis.starimports import module_file, sibling

MAX_DEPTH = 4  # relative imports followed from one sibling to the next


@dataclass(frozen=True)
class ImportedClass:
    name: str  # the name bound in the importing file
    torch_bases: tuple[str, ...]  # dotted torch classes its lineage derives from
    methods: frozenset[str]  # methods its lineage (outside torch) defines


def _parse(path: Path) -> ast.Module | None:
    data, _ = read_source(path)  # bounded as the inputs are (size, syntax)
    if data is None or b"class" not in data:
        return None
    try:
        return ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


class _Module:
    """One sibling file: its top-level classes and what its imports bind."""

    def __init__(self, path: Path, tree: ast.Module) -> None:
        self.path = path
        self.classes = {s.name: s for s in tree.body if isinstance(s, ast.ClassDef)}
        self.torch: dict[str, str] = {}  # bound name -> dotted torch path
        self.relative: dict[str, ast.ImportFrom] = {}  # bound name -> relative import naming it
        self.original: dict[str, str] = {}  # bound name -> name in the module it comes from
        for statement in tree.body:
            if isinstance(statement, ast.Import):
                for alias in statement.names:
                    if is_torch_path(alias.name):
                        if alias.asname:
                            self.torch[alias.asname] = alias.name
                        else:
                            self.torch.setdefault("torch", "torch")
            elif isinstance(statement, ast.ImportFrom) and statement.module is not None and statement.level == 0 \
                    and is_torch_path(statement.module):
                for alias in statement.names:
                    if alias.name != "*":
                        self.torch[alias.asname or alias.name] = f"{statement.module}.{alias.name}"
            elif isinstance(statement, ast.ImportFrom) and sibling(path, statement):
                for alias in statement.names:
                    if alias.name != "*":
                        self.relative[alias.asname or alias.name] = statement
                        self.original[alias.asname or alias.name] = alias.name


class _Finder:
    def __init__(self) -> None:
        self._modules: dict[Path, _Module | None] = {}

    def module(self, path: Path) -> _Module | None:
        key = path.resolve()
        if key not in self._modules:
            tree = _parse(path)
            self._modules[key] = _Module(path, tree) if tree is not None else None
        return self._modules[key]

    def lineage(self, path: Path, statement: ast.ImportFrom, name: str, depth: int,
                seen: set) -> tuple[list[str], set[str]] | None:
        """(torch bases, methods) of ``name`` imported by ``statement`` in ``path``, or None."""
        target = module_file(path, statement)
        module = self.module(target) if target is not None and depth < MAX_DEPTH else None
        if module is None:
            return None
        if name in module.classes:
            return self._class(module, module.classes[name], depth, seen)
        if name in module.relative:  # re-exported from another sibling
            return self.lineage(module.path, module.relative[name], module.original[name], depth + 1, seen)
        return None

    def _class(self, module: _Module, node: ast.ClassDef, depth: int,
               seen: set) -> tuple[list[str], set[str]] | None:
        key = (module.path.resolve(), node.name)
        if key in seen:
            return None
        seen = seen | {key}
        bases: list[str] = []
        methods = {s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for base in node.bases:
            dotted = _dotted(base)
            if dotted is None:
                continue
            head, _, rest = dotted.partition(".")
            found = None
            if head in module.torch:
                bases.append(module.torch[head] + (f".{rest}" if rest else ""))
            elif not rest and head in module.classes:
                found = self._class(module, module.classes[head], depth, seen)
            elif not rest and head in module.relative:
                found = self.lineage(module.path, module.relative[head], module.original[head], depth + 1, seen)
            if found is not None:
                bases.extend(b for b in found[0] if b not in bases)
                methods |= found[1]
        return (bases, methods) if bases else None


def imported_classes(path: Path, source: bytes) -> dict[str, ImportedClass]:
    """Classes deriving from torch that ``source`` (the file at ``path``) imports from its siblings."""
    if b"import" not in source:
        return {}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    finder, found = _Finder(), {}
    for statement in tree.body:
        if not (isinstance(statement, ast.ImportFrom) and sibling(Path(path), statement)):
            continue
        for alias in statement.names:
            if alias.name == "*":
                continue
            lineage = finder.lineage(Path(path), statement, alias.name, 0, set())
            if lineage is not None:
                bound = alias.asname or alias.name
                found[bound] = ImportedClass(bound, tuple(lineage[0]), frozenset(lineage[1]))
    return found
