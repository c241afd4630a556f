"""Corpus: a deterministic sample of 120 files of the installed torch package (the suite's budget; 300 took 2.5 min).

Every converted file must parse and a second convert must change nothing.  The
whole corpus (about 2,300 files) is one command: ``python benchmarks/convert_corpus.py``.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")


def test_sample_of_torch_converts_and_is_idempotent(real_kb):
    import convert_corpus
    from kb.analysis import EngineSettings

    files = convert_corpus.corpus(sample=120)
    assert len(files) == 120
    rows = convert_corpus.run(files, real_kb.path, EngineSettings(), jobs=os.cpu_count() or 1)
    problems = [(r["path"], r["problem"]) for r in rows if r["problem"]]
    assert problems == []
    checked = [r for r in rows if not r["skipped"]]
    assert len(checked) >= 115 and sum(r["changed"] for r in rows) > 20
