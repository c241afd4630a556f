"""Code actions from the engine's fixes: quick-fixes, fix-all, and class migration.

The engine plans every edit (``Analysis.fix``, ``Engine.fix_all``); this module only
wraps them as LSP ``CodeAction``s and ``WorkspaceEdit``s.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lsprotocol import types

from lsp.diagnostics import SOURCE
from lsp.protocol import lsp_range

FIX_ALL_KIND = "source.fixAll.msmap"
FIX_ALL_TITLE = "Fix all msmap issues in file"
KINDS = [types.CodeActionKind.QuickFix, types.CodeActionKind.RefactorRewrite, FIX_ALL_KIND]


def wanted(kind: str, only: Iterable[str] | None) -> bool:
    """LSP kinds are hierarchical: ``source.fixAll`` asks for ``source.fixAll.msmap`` too."""
    if not only:
        return True
    return any(kind == o or kind.startswith(o + ".") for o in only)


def workspace_edit(uri: str, version: int | None, edits: Iterable[Any], versioned: bool) -> types.WorkspaceEdit:
    text_edits = [types.TextEdit(range=lsp_range(e.range), new_text=e.new_text) for e in edits]
    if versioned:
        doc = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=doc, edits=text_edits)])
    return types.WorkspaceEdit(changes={uri: text_edits})


def quick_fixes(analysis: Any, start: int, end: int, diagnostics: list[types.Diagnostic], uri: str,
                versioned: bool) -> list[types.CodeAction]:
    out, seen = [], set()
    for use in analysis.uses_between(start, end):
        fix = analysis.fix(use)
        if fix is None or fix.key in seen:
            continue
        seen.add(fix.key)
        span = lsp_range(use.range)
        matching = [d for d in diagnostics if d.source == SOURCE and d.range == span]
        title = fix.title if fix.safe else f"{fix.title} (if the receiver is a torch.Tensor)"
        out.append(types.CodeAction(
            title=title, kind=types.CodeActionKind.QuickFix, diagnostics=matching or None,
            is_preferred=fix.safe and not fix.changes_behaviour,
            edit=workspace_edit(uri, analysis.version, fix.edits, versioned)))
    return out


def class_at(root: Any, offset: int) -> Any | None:
    node = root.named_descendant_for_byte_range(offset, offset)
    while node is not None and node.type != "class_definition":
        node = node.parent
    return node


def migrate_class(analysis: Any, offset: int, uri: str, versioned: bool) -> types.CodeAction | None:
    """'Migrate class X to MindSpore Cell' for the torch-derived class around the cursor."""
    node = class_at(analysis.tree.root_node, offset)
    if node is None:
        return None
    # The base written in this class's header (not by ``group``: a use's group is the class's offset when it
    # was analysed, and an incremental re-analysis keeps it while an edit above moves the class).
    body = node.child_by_field_name("body")
    header_end = body.start_byte if body is not None else node.end_byte
    index = next((i for i, (u, start) in enumerate(zip(analysis.held()[0], analysis.starts, strict=True))
                  if u.kind == "class_base" and node.start_byte <= start < header_end),
                 None)  # (``held``: the other uses are not moved for it, see ``Analysis.placed``)
    base = analysis.placed(index) if index is not None else None
    fix = analysis.fix(base) if base is not None else None
    if base is None or fix is None:
        return None
    name_node = node.child_by_field_name("name")
    name = name_node.text.decode("utf-8", "replace") if name_node is not None else "class"
    title = f"Migrate class {name} to MindSpore {(base.api or 'Cell').rsplit('.', 1)[-1]}"
    if fix.changes_behaviour and base.behaviour:
        title += f" (changes behaviour: {base.behaviour})"
    return types.CodeAction(title=title, kind=types.CodeActionKind.RefactorRewrite,
                            edit=workspace_edit(uri, analysis.version, fix.edits, versioned))


def has_safe_fix(analysis: Any) -> bool:
    return any(u.edits and not u.guess for u in analysis.held()[0])  # (where they are does not matter)


def fix_all_action(uri: str, edit: types.WorkspaceEdit | None = None) -> types.CodeAction:
    return types.CodeAction(title=FIX_ALL_TITLE, kind=FIX_ALL_KIND, edit=edit,
                            data=None if edit is not None else {"uri": uri, "action": "fixAll"})


def fix_all_edit(engine: Any, document: Any, versioned: bool) -> tuple[types.WorkspaceEdit | None, int]:
    """The whole-file edit of ``Engine.fix_all`` and how many fixes it applies."""
    result = engine.fix_all(document)
    edit = result.edit()
    if edit is None:
        return None, 0
    edit = document.lines.edit(edit)
    return workspace_edit(document.uri, document.version, [edit], versioned), len(result.applied)


def for_request(engine: Any, analysis: Any, params: types.CodeActionParams, versioned: bool,
                lazy: bool) -> list[types.CodeAction]:
    """The actions for a ``textDocument/codeAction`` request, filtered by ``context.only``.

    With ``lazy`` (the client resolves edits) fix-all is sent without its edit, which
    ``codeAction/resolve`` fills in: the whole-file rewrite is planned only when chosen.
    """
    doc, uri = analysis.document, params.text_document.uri  # doc: for fix-all planning only
    only = [str(getattr(k, "value", k)) for k in params.context.only or []]
    start = analysis.offset(params.range.start.line, params.range.start.character)
    end = analysis.offset(params.range.end.line, params.range.end.character)
    found: list[types.CodeAction] = []
    if wanted(types.CodeActionKind.QuickFix.value, only):
        found += quick_fixes(analysis, start, end, list(params.context.diagnostics), uri, versioned)
    if wanted(types.CodeActionKind.RefactorRewrite.value, only):
        found += [a for a in [migrate_class(analysis, start, uri, versioned)] if a is not None]
    if wanted(FIX_ALL_KIND, only) and has_safe_fix(analysis):
        edit = None if lazy else fix_all_edit(engine, doc, versioned)[0]
        if lazy or edit is not None:
            found.append(fix_all_action(uri, edit))
    return found
