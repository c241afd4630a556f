"""Hover: Markdown cards for torch uses and MindSpore names, nothing on ordinary code."""
from __future__ import annotations

import pytest
import pytest_asyncio
from lsprotocol import types

from tests.lsp.conftest import NEOVIM, VSCODE, open_doc, pos, rng, session, uri_of, wait_diagnostics

# One server for the read-only tests of this module (each server start costs a second or two).
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(fixed_env):
    async with session(fixed_env) as shared:
        yield shared


SOURCE = """\
import mindspore as ms
from mindspore import nn as msnn
import torch
from torch import nn

layer = nn.Linear(3, 4)
dense = ms.nn.Dense(3, 4)
other = msnn.Dropout(p=0.5)
value = 1 + 2
s = "é😀"; act = torch.nn.functional.relu(value)
"""

LINEAR_CLASSIC = """\
**torch.nn.Linear** · class · torch.nn

**MindSpore (classic):** `mindspore.nn.Dense` — `param_names_differ` · ✓ verified on mindspore 2.10.0  
**MindSpore (mint):** `mindspore.mint.nn.Linear` — `consistent`  

**Parameters** → `mindspore.nn.Dense`

| torch | MindSpore | torch default | MindSpore default | change |
|---|---|---|---|---|
| `in_features` | `in_channels` | — | — | renamed |
| `out_features` | `out_channels` | — | — | renamed |
| `bias` | `has_bias` | `True` | `True` | renamed |

```python
torch.nn.Linear(in_features, out_features, bias=True, device=None, dtype=None)
mindspore.nn.Dense(in_channels, out_channels, weight_init=None, bias_init=None, has_bias=True, activation=None, dtype=mindspore.float32)
mindspore.mint.nn.Linear(in_features, out_features, bias=True, weight_init=None, bias_init=None, dtype=None)
```
"""

DENSE = """\
**mindspore.nn.Dense** · MindSpore API

present in mindspore 2.10.0  
✓ verified on mindspore 2.10.0

| torch | family | relation |
|---|---|---|
| `torch.nn.Linear` | classic | `param_names_differ` |

```python
mindspore.nn.Dense(in_channels, out_channels, weight_init=None, bias_init=None, has_bias=True, activation=None, dtype=mindspore.float32)
```
"""

DROPOUT = """\
**mindspore.nn.Dropout** · MindSpore API

present in mindspore 2.10.0  

| torch | family | relation |
|---|---|---|
| `torch.nn.Dropout` | classic | `param_semantics_differ` / `consistent` |

**Caveats**

- ⛔ **error** — **Dropout probability meaning is inverted in 1.x** (mindspore <2.0; not for 2.10.0): In MindSpore 1.x `keep_prob` is the probability of keeping an element.

```python
mindspore.nn.Dropout(keep_prob=None, p=None, dtype=mindspore.float32)
```
"""


async def hover(client, uri: str, line: int, character: int):
    return await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=pos(line, character)))


async def opened(client, name: str = "hover.py", text: str = SOURCE) -> str:
    uri = uri_of(name)
    open_doc(client, uri, text)
    await wait_diagnostics(client, uri, 1)
    return uri


@pytest.mark.parametrize("capabilities", [VSCODE, NEOVIM])
async def test_hover_on_torch_call(fixed_env, capabilities):
    async with session(fixed_env, capabilities=capabilities) as client:
        uri = await opened(client)
        result = await hover(client, uri, 5, 12)
    assert result == types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=LINEAR_CLASSIC),
                                 range=rng(5, 8, 5, 17))


async def test_hover_puts_the_configured_family_first(fixed_env):
    async with session(fixed_env, {"targetFamily": "mint"}) as client:
        uri = await opened(client)
        result = await hover(client, uri, 5, 8)
    lines = result.contents.value.splitlines()
    assert lines[2] == "**MindSpore (mint):** `mindspore.mint.nn.Linear` — `consistent`  "
    assert lines[3].startswith("**MindSpore (classic):** `mindspore.nn.Dense`")


@pytest.mark.parametrize("line, character, expected, span", [
    pytest.param(6, 14, DENSE, rng(6, 8, 6, 19), id="ms.nn.Dense"),
    pytest.param(7, 14, DROPOUT, rng(7, 8, 7, 20), id="from-mindspore-import-nn-as-msnn"),
])
async def test_hover_on_mindspore_name(client, line, character, expected, span):
    uri = await opened(client)
    result = await hover(client, uri, line, character)
    assert result.contents.value == expected
    assert result.range == span


@pytest.mark.parametrize("line, character", [
    pytest.param(8, 9, id="arithmetic"),
    pytest.param(8, 0, id="plain-name"),
    pytest.param(3, 18, id="torch-module-import"),
    pytest.param(6, 11, id="ms-module-prefix"),
    pytest.param(40, 0, id="past-the-end"),
])
async def test_no_hover_on_ordinary_code(client, line, character):
    uri = await opened(client)
    assert await hover(client, uri, line, character) is None


async def test_hover_range_counts_utf16_units(client):
    uri = await opened(client)
    result = await hover(client, uri, 9, 32)
    # 16 code points precede "torch", but "😀" is two UTF-16 units: the range starts at 17
    assert result.range == rng(9, 17, 9, 41)
    assert result.contents.value.startswith("**torch.nn.functional.relu** · function · torch.nn.functional\n")


async def test_hover_on_unknown_document_is_null(client):
    assert await hover(client, uri_of("never-opened.py"), 0, 0) is None


async def test_hover_with_the_bundled_knowledge_base(real_env):
    async with session(real_env) as client:
        uri = await opened(client, "real.py", "import torch.nn as nn\nlayer = nn.Linear(3, 4)\n")
        result = await hover(client, uri, 1, 12)
    card = result.contents.value
    assert card.startswith("**torch.nn.Linear** · class · torch.nn\n")
    assert "**MindSpore (classic):** `mindspore.nn.Dense`" in card
    assert result.range == rng(1, 8, 1, 17)


@pytest.mark.parametrize("text, character", [
    pytest.param("from mindspore import nn\nlayer = nn.Dense(3, 4)\n", 12, id="from-mindspore-import-nn"),
    pytest.param("import mindspore\nlayer = mindspore.nn.Dense(3, 4)\n", 22, id="mindspore.nn.Dense"),
    pytest.param("import mindspore.nn as nn\nlayer = nn.Dense(3, 4)\n", 12, id="import-mindspore.nn-as-nn"),
])
async def test_mindspore_spellings(client, text, character):
    uri = await opened(client, "spellings.py", text)
    result = await hover(client, uri, 1, character)
    assert result.contents.value == DENSE


async def test_torch_nn_is_not_mindspore_nn(client):
    uri = await opened(client, "torch_nn.py", "from torch import nn\nlayer = nn.Dense(3, 4)\n")
    assert await hover(client, uri, 1, 12) is None


async def test_mindspore_hover_follows_edits_to_the_imports(client):
    from tests.lsp.conftest import change_doc

    uri = await opened(client, "ms_edit.py", "from torch import nn\nlayer = nn.Dense(3, 4)\n")
    assert await hover(client, uri, 1, 12) is None  # torch's nn: no Dense there
    change_doc(client, uri, 2, "from mindspore import nn\nlayer = nn.Dense(3, 4)\n")
    await wait_diagnostics(client, uri, 2)
    result = await hover(client, uri, 1, 12)
    assert result is not None and result.contents.value == DENSE
