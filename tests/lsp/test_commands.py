"""Server commands (a contract with the VS Code extension): msmap.search and msmap.lookup.

msmap.fixAll is exercised with the other fixes in test_code_actions.py.
"""
from __future__ import annotations

import pytest
import pytest_asyncio
from lsprotocol import types

from tests.lsp.conftest import session


# One server for the read-only tests of this module (each server start costs a second or two).
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(fixed_env):
    async with session(fixed_env) as shared:
        yield shared


async def run(client, command, *arguments):
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=command, arguments=list(arguments)))


async def test_capabilities(client):
    caps = client.init_result.capabilities
    assert list(caps.execute_command_provider.commands) == ["msmap.search", "msmap.lookup", "msmap.fixAll"]
    assert list(caps.code_action_provider.code_action_kinds) == ["quickfix", "refactor.rewrite", "source.fixAll.msmap"]
    assert caps.code_action_provider.resolve_provider is True
    assert (caps.hover_provider, caps.position_encoding) == (True, "utf-16")
    assert caps.text_document_sync.change == types.TextDocumentSyncKind.Incremental
    assert client.init_result.server_info.name == "msmap"


async def test_search(client):
    assert await run(client, "msmap.search", "dropout") == [{
        "name": "torch.nn.Dropout", "relation": "consistent",
        "summary": "classic: mindspore.nn.Dropout [consistent]"}]


async def test_search_limit_and_typo(client):
    results = await run(client, "msmap.search", "linaer", 1)
    assert [r["name"] for r in results] == ["torch.nn.Linear"]
    assert results[0]["relation"] == "param_names_differ"


@pytest.mark.parametrize("arguments", [[], [3], ["", 5], ["zzqqxxj"]])
async def test_search_with_odd_arguments_is_empty(client, arguments):
    assert await run(client, "msmap.search", *arguments) == []


async def test_lookup_torch_name(client):
    card = await run(client, "msmap.lookup", "nn.Linear")
    assert card.startswith("**torch.nn.Linear** · class · torch.nn\n\n**MindSpore (classic):** `mindspore.nn.Dense`")


async def test_lookup_mindspore_name(client):
    card = await run(client, "msmap.lookup", "ms.nn.Dense")
    assert card.startswith("**mindspore.nn.Dense** · MindSpore API\n")


@pytest.mark.parametrize("arguments", [["torch.nn.NoSuchThing"], [], [42]])
async def test_lookup_unknown_is_null(client, arguments):
    assert await run(client, "msmap.lookup", *arguments) is None


async def test_search_in_the_bundled_knowledge_base(real_env):
    async with session(real_env) as client:
        results = await run(client, "msmap.search", "linear", 5)
    assert "torch.nn.Linear" in [r["name"] for r in results]
    assert set(results[0]) == {"name", "relation", "summary"}
