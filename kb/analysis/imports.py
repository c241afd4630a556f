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
from typing import Any, TypeGuard

from kb.analysis.text import TextEdit
from kb.analysis.words import word_starts

IMPORT_TYPES = frozenset({"import_statement", "import_from_statement", "future_import_statement"})
MINDSPORE = "mindspore"


@dataclass(frozen=True, slots=True)
class ImportedName:
    bound: str  # the name the statement binds (``nn`` in ``import torch.nn as nn``)
    target: str | None  # dotted path it stands for; None for relative imports
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


_IDENT = rb"[A-Za-z_][A-Za-z0-9_]*"
_DOTTED = rb"%s(?:\.%s)*" % (_IDENT, _IDENT)
_ITEM = rb"(%s)(?:[ \t]+as[ \t]+(%s))?" % (_DOTTED, _IDENT)  # groups: the name, its alias
_ANY_ITEMS = rb"%s(?:[ \t]+as[ \t]+%s)?(?:[ \t]*,[ \t]*%s(?:[ \t]+as[ \t]+%s)?)*" % (_DOTTED, _IDENT, _DOTTED, _IDENT)
_SIMPLE_IMPORT = re.compile(rb"import[ \t]+(%s)" % _ANY_ITEMS)
_SIMPLE_FROM = re.compile(rb"from[ \t]+(\.*)(%s)?[ \t]+import[ \t]+(%s)" % (_DOTTED, _ANY_ITEMS))
_EACH_ITEM = re.compile(_ITEM)


def _simple_bound_names(stmt: Any, text: bytes) -> list[ImportedName] | None:
    """``bound_names`` read from the text of a one-line, plain ASCII statement; None for any other.

    Most import statements look like ``import torch.nn as nn`` or ``from typing import Any, Optional``;
    reading those from their text spares building a node per name.  The tree's reading is the
    definition (see ``bound_names``); a test holds the two equal on every import in torch's sources.
    """
    base = stmt.start_byte
    if text.startswith(b"import"):
        match = _SIMPLE_IMPORT.fullmatch(text)
        if match is None:
            return None
        found = []
        for item in _EACH_ITEM.finditer(text, match.start(1), match.end(1)):
            dotted, alias = item[1].decode("ascii"), item[2]
            start, end = base + item.start(1), base + item.end(1)
            if alias is not None:
                found.append(ImportedName(alias.decode("ascii"), dotted, start, end, base + item.start(2)))
            else:
                first = dotted.split(".", 1)[0]
                found.append(ImportedName(first, first, start, end, start))
        return found
    match = _SIMPLE_FROM.fullmatch(text)
    if match is None:
        return None
    module = "" if match[1] or match[2] is None else match[2].decode("ascii")
    found = []
    for item in _EACH_ITEM.finditer(text, match.start(3), match.end(3)):
        if b"." in item[1]:  # ``from m import a.b`` is not Python
            return None
        ident = 2 if item[2] is not None else 1
        found.append(ImportedName(item[ident].decode("ascii"),
                                  f"{module}.{item[1].decode('ascii')}" if module else None,
                                  base + item.start(1), base + item.end(1), base + item.start(ident)))
    return found


def bound_names(stmt: Any, source: bytes | None = None) -> list[ImportedName]:
    """What an import statement binds (no names for ``*`` or broken statements)."""
    if source is not None and stmt.type != "future_import_statement" and not stmt.has_error:
        text = source[stmt.start_byte:stmt.end_byte]
        if b"\n" not in text and b"(" not in text and b"\\" not in text and b";" not in text and b"#" not in text:
            simple = _simple_bound_names(stmt, text)
            if simple is not None:
                return simple
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
                found.append(ImportedName(alias.text.decode(), dotted, name.start_byte, name.end_byte,
                                          alias.start_byte))
            else:
                found.append(ImportedName(first.text.decode(), first.text.decode(), name.start_byte,
                                          name.end_byte, first.start_byte))
        else:  # from m import a [as x]
            target = f"{module}.{dotted}" if module else None
            ident = alias if alias is not None else name.named_children[0]
            found.append(ImportedName(ident.text.decode(), target, name.start_byte, name.end_byte, ident.start_byte))
    return found


def import_statement_of(node: Any) -> Any | None:
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


# Packages whose names the engine resolves in the knowledge base: torch and the torch-only libraries model code
# imports beside it (their tensors are torch tensors, so none of them runs on MindSpore as it is).
ROOTS = frozenset({"torch", "torchvision", "torchaudio", "torchtext", "einops", "timm", "functorch"})


def mentions_roots(source: bytes) -> bool:
    """Whether ``source`` may import one of the ``ROOTS`` (a cheap test before parsing a file)."""
    return b"torch" in source or b"einops" in source or b"timm" in source  # (torch also finds torchvision ...)


def is_torch_path(target: str | None) -> TypeGuard[str]:
    """A dotted name under one of the ``ROOTS`` (``torch.nn``, ``einops.rearrange``)."""
    return target is not None and target.partition(".")[0] in ROOTS


@dataclass
class ImportTable:
    statements: dict[int, Any] = field(default_factory=dict)  # start byte -> node
    names: list[tuple[Any, ImportedName]] = field(default_factory=list)
    by_statement: dict[int, list[ImportedName]] = field(default_factory=dict)
    source: bytes | None = field(default=None, repr=False, compare=False)  # lets ``bound_names`` read text

    @classmethod
    def build(cls, root: Any, source: bytes) -> ImportTable:
        """The module's import statements, also those one block down (``try:``, ``if ...:``).

        Imports deeper inside functions are added by the resolver when it meets
        a torch name in them; other names are only needed at module level.
        """
        table = cls(source=source)
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
        found = bound_names(stmt, self.source)
        self.by_statement[stmt.start_byte] = found
        self.names.extend((stmt, name) for name in found)

    def mindspore_alias(self) -> str | None:
        """The name of a module-level ``import mindspore [as x]``, if any."""
        for stmt, name in self.names:
            if (
                name.target == MINDSPORE and stmt.type == "import_statement"
                and stmt.parent is not None and stmt.parent.type == "module"
            ):
                return name.bound
        return None


ALIASES = ("ms", "mindspore", "ms_", "mindspore_")  # how a file may name MindSpore, in the order tried


def _name_in_use(root: Any, source: bytes, name: str) -> bool:
    word = name.encode()
    for at in word_starts(source, word):
        node = root.named_descendant_for_byte_range(at, at + len(word))
        if node is not None and node.type == "identifier" and node.start_byte == at:
            return True
    return False


def choose_alias(root: Any, source: bytes, imports: ImportTable) -> tuple[str, TextEdit | None]:
    """The name MindSpore is reached by, and the edit importing it when it is not yet."""
    existing = imports.mindspore_alias()
    if existing:
        return existing, None
    alias = next((a for a in ALIASES if not _name_in_use(root, source, a)), "mindspore_ms")
    text = "import mindspore\n" if alias == "mindspore" else f"import mindspore as {alias}\n"
    offset = _import_offset(root, source, imports)
    return alias, TextEdit(offset, offset, text)


def _import_offset(root: Any, source: bytes, imports: ImportTable) -> int:
    """Start of the line of the first module-level torch import; else after docstring and __future__."""
    fallback, first_statement = None, True
    for child in root.named_children:
        if child.type in ("comment",):
            continue
        is_first, first_statement = first_statement, False
        if child.type in ("import_statement", "import_from_statement") and child.start_byte in imports.statements:
            if any(is_torch_path(n.target) for n in imports.by_statement.get(child.start_byte, ())):
                return source.rfind(b"\n", 0, child.start_byte) + 1
        if fallback is None:
            first = child.named_children[0] if child.named_children else None
            docstring = is_first and child.type == "expression_statement" and first is not None \
                and first.type == "string"
            if not docstring and child.type != "future_import_statement":
                fallback = source.rfind(b"\n", 0, child.start_byte) + 1
    if fallback is not None:
        return fallback
    return len(source) if source.endswith(b"\n") else 0
