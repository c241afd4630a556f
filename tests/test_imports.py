"""No import cycle among msmap's own modules (kb/, lsp/).

The graph is read from the AST of each module's module-level imports (also those under a top-level
``if``/``try``; not ``if TYPE_CHECKING:`` blocks, and not imports inside functions, which run
later). ``from pkg import name`` points at ``pkg.name`` when that is a module, else at ``pkg``.
Importing ``pkg.mod`` also runs ``pkg/__init__.py`` first; that implicit edge is not counted (every
package's ``__init__`` importing its own submodules would otherwise be a cycle).
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("kb", "lsp")


def module_names(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    out = {}
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _is_type_checking(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _module_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, ast.If) and not _is_type_checking(node):
            todo += node.body + node.orelse
        elif isinstance(node, ast.Try):
            todo += node.body + node.orelse + node.finalbody + [s for h in node.handlers for s in h.body]
    return found


def import_graph(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    """{module: the modules of ``packages`` it imports at module level}."""
    modules = module_names(root, packages)

    def ours(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in _module_level_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(filter(None, (ours(a.name) for a in node.names)))
                continue
            base = node.module or ""
            if node.level:
                here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                here = here[:len(here) - (node.level - 1)]
                base = ".".join(here + ([node.module] if node.module else []))
            for alias in node.names:
                target = f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else ours(base)
                if target:
                    targets.add(target)
        graph[name] = targets - {name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None (iterative depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if state.get(start):
            continue
        path, stack = [start], [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph.get(nxt, ()))))
    return None


def test_our_modules_import_each_other_without_a_cycle():
    graph = import_graph()
    assert len(graph) > 100 and "kb.derive" in graph["kb.build"]  # the graph is really read
    assert "kb.analysis.engine" in graph["kb.analysis"]  # `from kb.analysis.engine import ...` in __init__
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_a_cycle_is_found_through_relative_and_package_imports(tmp_path):
    pkg = tmp_path / "kb"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from kb.sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("from .c import helper\n")
    (pkg / "sub" / "b.py").write_text("import os\ntry:\n    from kb.sub import helper\nexcept ImportError:\n    pass\n")
    (pkg / "sub" / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from kb import a\n"
                                      "def f():\n    from kb import a\n")
    graph = import_graph(tmp_path, ("kb",))
    assert graph["kb.a"] == {"kb.sub.b"} and graph["kb.sub.b"] == {"kb.sub"} and graph["kb.sub.c"] == set()
    assert find_cycle(graph) is None  # TYPE_CHECKING and function-level imports do not count
    (pkg / "sub" / "c.py").write_text("from .. import a\n")
    assert find_cycle(import_graph(tmp_path, ("kb",))) == ["kb.a", "kb.sub.b", "kb.sub", "kb.sub.c", "kb.a"]


def test_the_library_never_imports_the_language_server():
    """The server sits on the library, never the reverse: no module of kb/ imports lsp (at any level, functions
    included); ``msmap lsp`` is reached through the CLI dispatcher's module name (kb/cli.py -> lsp/command.py)."""
    offenders = []
    for name, path in module_names(ROOT, ("kb",)).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            offenders += [f"{name} imports {t}" for t in targets if t == "lsp" or t.startswith("lsp.")]
    assert not offenders, offenders
