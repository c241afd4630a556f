"""Import statements: what each one binds, and the file's import table.

``bound_names(stmt)`` reads one ``import``/``from … import`` node into
``ImportedName`` rows: the name bound in the scope, the dotted module path it
stands for (``None`` for relative imports), and the byte span to point at.
``ImportTable`` finds the import statements of a module (its top level and
one block down), so the engine knows torch's aliases, MindSpore's alias and the
non-torch names (``np``, ``os``) that are never tensors.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional


IMPORT_TYPES = frozenset({"import_statement", "import_from_statement", "future_import_statement"})
MINDSPORE = "mindspore"


@dataclass(frozen=True, slots=True)
class ImportedName:
    bound: str  # the name the statement binds (``nn`` in ``import torch.nn as nn``)
    target: Optional[str]  # dotted path it stands for; None for relative imports
    start: int  # byte span of the imported name (for hover/diagnostics)
    end: int
    ident: int  # start byte of the identifier that is bound


_PLAIN_DOTTED = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def _dotted(node: Any) -> str:
    text = node.text
    if _PLAIN_DOTTED.fullmatch(text):  # the usual spelling: no spaces, continuations or broken parts
        return text.decode("ascii")
    return ".".join(c.text.decode("utf-8", "replace") for c in node.named_children if c.type == "identifier")


_BLOCK_STATEMENTS = frozenset({"try_statement", "if_statement", "with_statement"})


def _blocks(statement: Any) -> list[Any]:
    """The blocks directly under a compound statement (its clauses' bodies included)."""
    found = []
    for child in statement.named_children:
        if child.type == "block":
            found.append(child)
        elif child.type in ("except_clause", "else_clause", "elif_clause", "finally_clause"):
            found.extend(c for c in child.named_children if c.type == "block")
    return found


def bound_names(stmt: Any) -> list[ImportedName]:
    """What an import statement binds (no names for ``*`` or broken statements)."""
    found: list[ImportedName] = []
    if stmt.type == "import_statement":
        module = None
    elif stmt.type == "import_from_statement":
        module_node = stmt.child_by_field_name("module_name")
        if module_node is None:
            return found
        module = _dotted(module_node) if module_node.type == "dotted_name" else ""
    else:
        return found
    for name in stmt.children_by_field_name("name"):
        alias = None
        if name.type == "aliased_import":
            alias = name.child_by_field_name("alias")
            name = name.child_by_field_name("name")
            if name is None or alias is None:
                continue
        if name.type != "dotted_name" or not name.named_children:
            continue
        dotted = _dotted(name)
        if module is None:  # import a.b.c [as x]
            first = name.named_children[0]
            if alias is not None:
                found.append(ImportedName(alias.text.decode(), dotted, name.start_byte, name.end_byte, alias.start_byte))
            else:
                found.append(ImportedName(first.text.decode(), first.text.decode(), name.start_byte,
                                          name.end_byte, first.start_byte))
        else:  # from m import a [as x]
            target = f"{module}.{dotted}" if module else None
            ident = alias if alias is not None else name.named_children[0]
            found.append(ImportedName(ident.text.decode(), target, name.start_byte, name.end_byte, ident.start_byte))
    return found


def import_statement_of(node: Any) -> Optional[Any]:
    """The import statement an identifier belongs to, if any (at most 3 levels up)."""
    for _ in range(3):
        node = node.parent
        if node is None:
            return None
        if node.type in IMPORT_TYPES:
            return node
        if node.type not in ("dotted_name", "aliased_import"):
            return None
    return None


def is_torch_path(target: Optional[str]) -> bool:
    return bool(target) and (target == "torch" or target.startswith("torch."))


@dataclass
class ImportTable:
    statements: dict[int, Any] = field(default_factory=dict)  # start byte -> node
    names: list[tuple[Any, ImportedName]] = field(default_factory=list)
    by_statement: dict[int, list[ImportedName]] = field(default_factory=dict)

    @classmethod
    def build(cls, root: Any, source: bytes) -> "ImportTable":
        """The module's import statements, also those one block down (``try:``, ``if ...:``).

        Imports deeper inside functions are added by the resolver when it meets
        a torch name in them; other names are only needed at module level.
        """
        table = cls()
        for child in root.named_children:
            if child.type in IMPORT_TYPES:
                table.add(child)
            elif child.type in _BLOCK_STATEMENTS and source.find(b"import", child.start_byte, child.end_byte) >= 0:
                for block in _blocks(child):
                    for statement in block.named_children:
                        if statement.type in IMPORT_TYPES:
                            table.add(statement)
        return table

    def add(self, stmt: Any) -> None:
        if stmt.type not in IMPORT_TYPES or stmt.start_byte in self.statements:
            return
        self.statements[stmt.start_byte] = stmt
        found = bound_names(stmt)
        self.by_statement[stmt.start_byte] = found
        self.names.extend((stmt, name) for name in found)

    def non_torch_names(self) -> set[str]:
        return {n.bound for _, n in self.names if not is_torch_path(n.target)}

    def mindspore_alias(self) -> Optional[str]:
        """The name of a module-level ``import mindspore [as x]``, if any."""
        for stmt, name in self.names:
            if (
                name.target == MINDSPORE and stmt.type == "import_statement"
                and stmt.parent is not None and stmt.parent.type == "module"
            ):
                return name.bound
        return None
