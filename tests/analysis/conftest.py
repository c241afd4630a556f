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
