"""Code actions: engine quick-fixes, fix-all (lazy, resolved), class migration; edits applied and compared."""
from __future__ import annotations

import itertools

import pytest
import pytest_asyncio
from lsprotocol import types

from tests.lsp.conftest import (
    NEOVIM,
    apply_text_edits,
    change_doc,
    edits_of,
    open_doc,
    rng,
    session,
    uri_of,
    wait_diagnostics,
)
from tests.standin_text import without_definition

SOURCE = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4, bias=False)
        self.act = nn.GELU()

    def forward(self, x):
        with torch.no_grad():
            y = torch.flatten(x)
        return F.relu(self.fc(x)).numpy()
"""

# Fix-all as convert (default device CPU, where the fixture's probe found no kernel for ops.relu):
# torch.no_grad, torch.flatten and F.relu are left, so their imports become stand-ins that raise where
# they are reached (the stand-in's class and reasons table, cut out here, are written above them).
FIXED_ALL = """\
import mindspore as ms


torch = MsUnconverted("torch")
F = MsUnconverted("torch.nn.functional")


class Net(ms.nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = ms.nn.Dense(3, 4, has_bias=False)
        self.act = ms.nn.GELU()

    def construct(self, x):
        with torch.no_grad():
            y = torch.flatten(x)
        return F.relu(self.fc(x)).asnumpy()
"""

MIGRATED = SOURCE.replace("import torch\n", "import mindspore as ms\nimport torch\n", 1) \
    .replace("class Net(nn.Module):", "class Net(ms.nn.Cell):").replace("def forward", "def construct")


# One server for the module: every test opens its own document (see ``opened``).
pytestmark = pytest.mark.asyncio(loop_scope="module")
NAMES = itertools.count()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(fixed_env):
    async with session(fixed_env) as shared:
        yield shared


async def actions(client, uri, span, diagnostics=(), only=None):
    context = types.CodeActionContext(diagnostics=list(diagnostics), only=only)
    return await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=span, context=context)) or []


async def opened(client, text=SOURCE, name="actions.py"):
    uri = uri_of(f"{next(NAMES)}-{name}")
    open_doc(client, uri, text)
    return uri, await wait_diagnostics(client, uri, 1)


def result_of(action, uri, text=SOURCE):
    return apply_text_edits(text, edits_of(action.edit, uri))


async def test_quick_fix_for_a_rename(client):
    uri, diagnostics = await opened(client)
    found = await actions(client, uri, rng(8, 20, 8, 20), diagnostics, only=[types.CodeActionKind.QuickFix])
    assert [(a.title, a.kind, a.is_preferred) for a in found] == [
        ("Replace nn.Linear with ms.nn.Dense", types.CodeActionKind.QuickFix, True)]
    assert [d.code for d in found[0].diagnostics] == ["param_names_differ"]
    assert result_of(found[0], uri) == SOURCE.replace("import torch\n", "import mindspore as ms\nimport torch\n", 1) \
        .replace("nn.Linear(3, 4, bias=False)", "ms.nn.Dense(3, 4, has_bias=False)")
    assert found[0].edit.document_changes[0].text_document.version == 1


async def test_title_says_when_behaviour_changes(client):
    uri, diagnostics = await opened(client)
    found = await actions(client, uri, rng(9, 20, 9, 20), diagnostics, only=[types.CodeActionKind.QuickFix])
    assert [(a.title, a.is_preferred) for a in found] == [
        ("Replace nn.GELU with ms.nn.GELU (changes behaviour: GELU approximates by default)", False)]


async def test_guessed_tensor_method_fix_says_so(client):
    uri, diagnostics = await opened(client)
    found = await actions(client, uri, rng(14, 36, 14, 36), diagnostics, only=[types.CodeActionKind.QuickFix])
    assert [(a.title, a.is_preferred) for a in found] == [
        ("Rename .numpy() to .asnumpy() (if the receiver is a torch.Tensor)", False)]
    assert result_of(found[0], uri) == SOURCE.replace(".numpy()", ".asnumpy()")


async def test_migrate_class_anywhere_inside_it(client):
    uri, diagnostics = await opened(client)
    found = await actions(client, uri, rng(13, 4, 13, 4), diagnostics, only=[types.CodeActionKind.Refactor])
    assert [(a.title, a.kind) for a in found] == [
        ("Migrate class Net to MindSpore Cell", types.CodeActionKind.RefactorRewrite)]
    assert result_of(found[0], uri) == MIGRATED


@pytest.mark.parametrize("only", [["source.fixAll"], ["source.fixAll.msmap"], ["source"]])
async def test_fix_all_is_resolved_lazily(client, only):
    uri, _ = await opened(client)
    found = await actions(client, uri, rng(0, 0, 0, 0), only=only)
    assert [(a.title, a.kind, a.edit) for a in found] == [("Fix all msmap issues in file", "source.fixAll.msmap", None)]
    resolved = await client.code_action_resolve_async(found[0])
    assert without_definition(result_of(resolved, uri)) == FIXED_ALL


async def test_every_kind_when_the_client_does_not_filter(client):
    uri, diagnostics = await opened(client)
    found = await actions(client, uri, rng(11, 10, 11, 10), diagnostics)
    assert [(a.title, a.kind) for a in found] == [
        ("Derive Net from ms.nn.Cell (rename to construct)", types.CodeActionKind.QuickFix),
        ("Migrate class Net to MindSpore Cell", types.CodeActionKind.RefactorRewrite),
        ("Fix all msmap issues in file", "source.fixAll.msmap"),
    ]


async def test_fix_all_command_applies_through_the_client(client):
    uri, _ = await opened(client)
    count = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="msmap.fixAll", arguments=[uri]))
    assert count == 4  # Linear, GELU, the class (base and forward), .numpy() of a known tensor
    applied = client.applied_edits[-1]
    assert applied.label == "Fix all msmap issues in file"
    assert without_definition(result_of(applied, uri)) == FIXED_ALL


async def test_neovim_gets_plain_changes(fixed_env):
    async with session(fixed_env, capabilities=NEOVIM) as client:  # no documentChanges support
        uri, _ = await opened(client)
        found = await actions(client, uri, rng(8, 20, 8, 20), only=[types.CodeActionKind.QuickFix])
        assert found[0].edit.document_changes is None and list(found[0].edit.changes) == [uri]
        [fix_all] = await actions(client, uri, rng(0, 0, 0, 0), only=["source.fixAll"])
        resolved = await client.code_action_resolve_async(fix_all)
    assert list(resolved.edit.changes) == [uri]
    assert without_definition(result_of(resolved, uri)) == FIXED_ALL


@pytest.mark.parametrize("text", [
    pytest.param("import os\nprint(os.getcwd())\n", id="no-torch"),
    pytest.param("import torch\nwith torch.no_grad():\n    pass\n", id="nothing-automatic"),
    pytest.param("import torch.nn as nn\nx = nn.Linear(\n", id="does-not-parse"),
])
async def test_no_fix_all_when_nothing_is_safe(client, text):
    uri, _ = await opened(client, text, "noop.py")
    assert await actions(client, uri, rng(0, 0, 0, 0), only=["source.fixAll"]) == []


async def test_no_actions_on_ordinary_code(client):
    uri, _ = await opened(client, "import torch.nn as nn\nvalue = 1 + 2\nlayer = nn.Linear(1, 1)\n", "plain.py")
    assert await actions(client, uri, rng(1, 4, 1, 4), only=[types.CodeActionKind.QuickFix,
                                                             types.CodeActionKind.Refactor]) == []


async def test_import_is_added_once_across_fixes(client):
    uri, diagnostics = await opened(client)
    [first] = await actions(client, uri, rng(8, 20, 8, 20), diagnostics, only=[types.CodeActionKind.QuickFix])
    text = result_of(first, uri)
    change_doc(client, uri, 2, text)
    diagnostics = await wait_diagnostics(client, uri, 2)
    [second] = await actions(client, uri, rng(10, 20, 10, 20), diagnostics, only=[types.CodeActionKind.QuickFix])
    assert second.title.startswith("Replace nn.GELU with ms.nn.GELU")
    text = result_of(second, uri, text)
    assert text.count("import mindspore as ms\n") == 1
    assert "self.act = ms.nn.GELU()" in text


async def test_resolve_after_close_returns_the_action_unchanged(client):
    uri, _ = await opened(client)
    [fix_all] = await actions(client, uri, rng(0, 0, 0, 0), only=["source.fixAll"])
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    resolved = await client.code_action_resolve_async(fix_all)
    assert (resolved.title, resolved.edit) == ("Fix all msmap issues in file", None)


async def test_class_migration_with_the_bundled_knowledge_base(real_env):
    text = "import torch.nn as nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n        return x\n"
    async with session(real_env) as client:
        uri, _ = await opened(client, text, "real_class.py")
        [action] = await actions(client, uri, rng(5, 0, 5, 0), only=[types.CodeActionKind.RefactorRewrite])
    assert action.title.startswith("Migrate class M to MindSpore Cell (changes behaviour: ")
    assert result_of(action, uri, text) == (
        "import mindspore as ms\nimport torch.nn as nn\n\n\nclass M(ms.nn.Cell):\n"
        "    def construct(self, x):\n        return x\n")


async def test_clients_without_resolve_get_the_fix_all_edit_at_once(fixed_env):
    async with session(fixed_env, capabilities=types.ClientCapabilities()) as client:
        uri, _ = await opened(client, name="eager.py")
        [fix_all] = await actions(client, uri, rng(0, 0, 0, 0), only=["source.fixAll"])
    assert (fix_all.data, fix_all.edit.document_changes) == (None, None)
    assert without_definition(result_of(fix_all, uri)) == FIXED_ALL


async def test_migrate_class_after_an_edit_above_it(fixed_env):
    """Typing above a class is re-analysed incrementally; the class migration is still offered at the class,
    with the edits a fresh analysis plans (it once looked the base up by the offset the class had when it
    was first analysed, and found nothing)."""
    from pathlib import Path

    from kb.analysis import Catalog, Document, Engine
    from kb.query import KB
    from lsp import actions

    kb = KB.open(db=Path(fixed_env["MSMAP_DB"]), data=Path(fixed_env["MSMAP_DATA"]))
    engine, uri = Engine(Catalog(kb)), "file:///migrate.py"
    text = "import torch.nn as nn\n\nx = 1\n\nclass Net(nn.Module):\n    def forward(self, x):\n        return x\n"
    doc = Document(text, uri=uri, version=1)
    engine.analyze(doc)
    doc.apply_change((2, 5), (2, 5), "23", 2)  # x = 123
    analysis = engine.analyze(doc)
    assert analysis.imports is None  # (the incremental path ran)
    at = doc.source.index(b"def forward")
    found = actions.migrate_class(analysis, at, uri, False)
    fresh = actions.migrate_class(Engine(Catalog(kb)).analyze(Document(doc.text)), at, uri, False)
    assert found is not None and fresh is not None
    assert (found.title, found.edit) == (fresh.title, fresh.edit)
