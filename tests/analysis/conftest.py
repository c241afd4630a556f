from __future__ import annotations

import pytest

from kb.analysis import Engine, EngineSettings
from tests.analysis.kbdata import make_kb


@pytest.fixture(scope="session")
def kb():
    return make_kb()


@pytest.fixture
def engine(kb):
    return Engine(kb, EngineSettings())


@pytest.fixture
def mint_engine(kb):
    return Engine(kb, EngineSettings(family="mint"))


# Engines over the bundled knowledge base, as ``msmap convert --device CPU`` runs them. A test file
# that needs other settings (no device, Ascend) defines its own fixture of the same name.
@pytest.fixture(scope="session")
def classic(real_kb):
    return Engine(real_kb, EngineSettings(device="CPU"))


@pytest.fixture(scope="session")
def mint_cpu(real_kb):
    return Engine(real_kb, EngineSettings(family="mint", device="CPU"))


@pytest.fixture(scope="session")
def mint(mint_cpu):
    return mint_cpu
