"""The analysis + rewrite engine: find torch uses in Python source, plan MindSpore rewrites.

    source ──tree-sitter──▶ Document ──Resolver──▶ Site ──plan──▶ Use (+ edits) ──▶ Fix / fix_all / convert

Modules, in the order the data flows:
- ``document``  – text + incremental tree-sitter parse (``Document.update``/``apply_change``).
- ``text``, ``words`` – positions (UTF-16 and bytes), text edits, fast whole-word search.
- ``scopes``, ``roles``, ``imports``, ``classes`` – Python name binding, read from the tree.
- ``resolver``  – torch names however imported, objects of known torch type.
- ``guesses``   – ``x.view(...)``: possible ``torch.Tensor`` methods.
- ``settings``  – ``EngineSettings`` and the choice of a target per KB record.
- ``transforms``, ``arguments``, ``rewrite`` – data-driven call/class rewrites.
- ``engine``    – ``Engine.analyze`` -> ``Analysis`` (uses, fixes), the public entry point.
- ``incremental`` – after a small edit, redo the edited statement and shift the other uses.
- ``fixall``    – every safe fix, import added once, unused torch imports removed.
- ``convert``   – fix-all plus ``# msmap:`` notes on what is left (``msmap convert``).
- ``project``, ``reports`` – files, parallel scans and report formats (``msmap scan``).
"""
from kb.analysis.catalog import Catalog, KnowledgeBase, MemoryKB
from kb.analysis.document import Document
from kb.analysis.engine import Analysis, Engine
from kb.analysis.settings import EngineSettings, TargetChoice, choose_target
from kb.analysis.text import LineIndex, Position, Range, TextEdit, apply_edits
from kb.analysis.uses import CATEGORIES, CATEGORY_LABELS, Fix, Use

__all__ = [
    "Analysis", "CATEGORIES", "CATEGORY_LABELS", "Catalog", "Document", "Engine", "EngineSettings", "Fix",
    "KnowledgeBase", "LineIndex", "MemoryKB", "Position", "Range", "TargetChoice", "TextEdit", "Use",
    "apply_edits", "choose_target",
]
