"""Plans are cached by the text of a call, but a class base's plan names its class."""
from __future__ import annotations

from kb.analysis import Document, Engine, EngineSettings

# No forward method: nothing to rename, so the plan of the base alone decides the title.
SRC_A = "import torch.nn as nn\n\nclass Alpha(nn.Module):\n    pass\n"
SRC_B = "import torch.nn as nn\n\nclass Beta(nn.Module):\n    pass\n"


def _class_fix_titles(engine, src):
    analysis = engine.analyze(Document(src))
    return [f.title for f in analysis.fixes() if any(u.kind == "class_base" for u in f.uses)]


def test_class_migration_title_names_its_own_class(real_kb):
    engine = Engine(real_kb, EngineSettings())
    first = _class_fix_titles(engine, SRC_A)
    second = _class_fix_titles(engine, SRC_B)  # same base text, different class: must not reuse Alpha's plan
    assert first and "Alpha" in first[0]
    assert second and "Beta" in second[0] and "Alpha" not in second[0]
