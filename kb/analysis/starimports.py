"""Torch names that reach a module through ``from .sibling import *``.

timm's ``create_act.py`` uses ``nn``, ``F`` and ``torch`` without importing them: they come with
``from .activations import *``, because ``activations.py`` imports them and has no ``__all__``.
Each file is converted on its own, and the sibling loses those imports once its own uses are
converted, so the names would be undefined after conversion (a NameError at import). Before a
file of a project is converted (or scanned), the torch imports its relative star imports bring in
are written out right after the star import; the names then convert like any imported name, and
the ones left unused are removed with the other unused torch imports.

Only star imports of files that exist in the project are followed (relative ones, and absolute ones of
the package the file lives in: ``from geffnet.activations.x import *`` inside ``geffnet/``; one level of
their own star imports too), read by ``sourcefile.read_source`` with the inputs' bounds (size, syntax); a sibling's
``__all__``, when it is a literal list or tuple of strings, decides what a star import exports,
as Python does; otherwise every name not starting with ``_``.
"""
from __future__ import annotations

import ast
from pathlib import Path

from kb.analysis.imports import mentions_roots
from kb.analysis.sourcefile import read_source

TORCH_ROOT = "torch"


def _is_torch(path: str) -> bool:
    return path == TORCH_ROOT or path.startswith(TORCH_ROOT + ".")


def _parse(data: bytes) -> ast.Module | None:
    try:
        return ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _module_file(path: Path, node: ast.ImportFrom) -> Path | None:
    if not node.level:  # ``from geffnet.activations.x import *`` inside geffnet/: the project's own package
        parts = (node.module or "").split(".")
        root = next((a for a in path.parents if parts[0] and a.name == parts[0]), None) \
            if not _is_torch(node.module or "") else None
        if root is None:
            return None
        target = root.parent.joinpath(*parts)
        return next((c for c in (target.with_suffix(".py"), target / "__init__.py") if c.is_file()), None)
    base = path.parent
    for _ in range(node.level - 1):
        base = base.parent
    parts = (node.module or "").split(".") if node.module else []
    target = base.joinpath(*parts) if parts else base
    for candidate in (target.with_suffix(".py") if parts else None, target / "__init__.py"):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


module_file = _module_file  # the file a relative ``from`` import reads (siblingclasses.py too)


def sibling(path: Path, node: ast.ImportFrom) -> bool:
    """A relative import, or an absolute one of the package ``path`` lives in."""
    if node.level:
        return True
    first = (node.module or "").split(".")[0]
    return bool(first) and not _is_torch(node.module or "") and any(a.name == first for a in path.parents)


def _exported(tree: ast.Module) -> set[str] | None:
    """The names of a literal ``__all__``, or None when the module has none (or not a literal)."""
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                     for t in statement.targets):
            value = statement.value
            if isinstance(value, (ast.List, ast.Tuple)):
                names = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                if len(names) == len(value.elts):
                    return set(names)
            return None
    return None


def _torch_bindings(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound by torch imports: bound name -> dotted path."""
    found: dict[str, str] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if _is_torch(alias.name):
                    if alias.asname:
                        found[alias.asname] = alias.name
                    else:
                        found[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(statement, ast.ImportFrom) and statement.level == 0 and statement.module \
                and _is_torch(statement.module):
            for alias in statement.names:
                if alias.name != "*":
                    found[alias.asname or alias.name] = f"{statement.module}.{alias.name}"
    return found


def brought_in(path: Path, node: ast.ImportFrom, depth: int = 1) -> dict[str, str]:
    """The torch names ``from .x import *`` at ``path`` binds: name -> dotted torch path."""
    module = _module_file(path, node)
    data = read_source(module)[0] if module is not None else None  # bounded as the inputs are
    tree = _parse(data) if data is not None and mentions_roots(data) else None
    if tree is None or module is None:
        return {}
    found = _torch_bindings(tree)
    if depth > 0:
        for statement in tree.body:
            if (isinstance(statement, ast.ImportFrom) and sibling(module, statement)
                    and any(a.name == "*" for a in statement.names)):
                for name, target in brought_in(module, statement, depth - 1).items():
                    found.setdefault(name, target)
    exported = _exported(tree)
    return {name: target for name, target in found.items()
            if (name in exported if exported is not None else not name.startswith("_"))}


def _import_line(name: str, target: str) -> str:
    if name == target:
        return f"import {target}"
    if "." in target:
        parent, leaf = target.rsplit(".", 1)
        return f"from {parent} import {leaf}" + (f" as {name}" if name != leaf else "")
    return f"import {target} as {name}"


def explicit_star_imports(path: Path, source: bytes) -> bytes:
    """``source`` with the torch imports its relative star imports bring in written out after them."""
    if b"import *" not in source:
        return source
    tree = _parse(source)
    if tree is None:
        return source
    own = set(_torch_bindings(tree))
    lines = source.splitlines(keepends=True)
    inserts: list[tuple[int, str]] = []
    for statement in tree.body:
        if not (isinstance(statement, ast.ImportFrom) and sibling(Path(path), statement)
                and any(a.name == "*" for a in statement.names)) or statement.end_lineno is None:
            continue
        names = {n: t for n, t in brought_in(Path(path), statement).items() if n not in own}
        if not names:
            continue
        own |= set(names)
        newline = b"\r\n" if lines[statement.end_lineno - 1].endswith(b"\r\n") else b"\n"
        text = "".join(_import_line(n, t) + newline.decode() for n, t in sorted(names.items()))
        inserts.append((statement.end_lineno, text))
    for line, text in reversed(inserts):
        if not lines[line - 1].endswith((b"\n", b"\r")):
            lines[line - 1] += b"\n"
        lines.insert(line, text.encode())
    return b"".join(lines)
