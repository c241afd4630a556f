"""The recorded timings (data/timing/) where a user decides: an editor hover on nn.Conv2d, and
``msmap scan`` of a CNN.  These assert what the recorded measurements say (mindspore 2.10.0's CPU
convolutions are far slower than 2.7.1's); re-measuring with other results fails them on purpose."""
from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from tests.conftest import ROOT, run_msmap
from tests.lsp.conftest import open_doc, pos, server_env, session, uri_of, wait_diagnostics

CNN = ROOT / "tests" / "fixtures" / "mnist_cnn.py"


@pytest.fixture(scope="module")
def real_data_env(real_kb):
    return server_env(ROOT / "data", real_kb.path)  # the knowledge base built once for the whole run


async def _hover_conv2d(env: dict, options: dict) -> str:
    source = "import torch\nfrom torch import nn\n\nconv = nn.Conv2d(3, 16, 3)\n"
    async with session(env, options) as client:
        uri = uri_of("perf_hover.py")
        open_doc(client, uri, source)
        await wait_diagnostics(client, uri, 1)
        result = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=pos(3, 12)))
    return result.contents.value


@pytest.mark.asyncio
async def test_hover_on_conv2d_shows_the_cpu_cliff_and_the_version_that_avoids_it(real_data_env):
    text = await _hover_conv2d(real_data_env, {"device": "CPU", "mindsporeVersion": "2.10.0",
                                               "targetFamily": "classic"})
    perf = next(line for line in text.splitlines() if line.startswith("**Performance:**"))
    assert "CPU, mindspore 2.10.0 (classic):" in perf
    assert "slower than torch" in perf and "slower than 2.7.1" in perf
    assert "mindspore 2.7.1 avoids it" in perf


@pytest.mark.asyncio
async def test_hover_on_an_unmeasured_device_says_not_measured(real_data_env):
    text = await _hover_conv2d(real_data_env, {"device": "Ascend", "mindsporeVersion": "2.10.0"})
    perf = next(line for line in text.splitlines() if line.startswith("**Performance:**"))
    assert perf.startswith("**Performance:** Ascend: not measured. CPU, mindspore 2.10.0")


def test_scan_of_a_cnn_names_convolution_as_the_cost(real_data_env):
    out = run_msmap("scan", str(CNN), "--device", "CPU", db=Path(real_data_env["MSMAP_DB"]))
    assert out.returncode == 0, out.stderr
    tail = out.stdout.split("performance (classic, mindspore 2.10.0, CPU): these ops dominate the slowdown:")[1]
    first = tail.strip().splitlines()[0]
    assert first.startswith("torch.nn.Conv2d (2 uses): CPU, mindspore 2.10.0 (classic):"), first
