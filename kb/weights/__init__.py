"""torch checkpoints -> MindSpore parameters (``msmap weights``; also used by ``msmap verify``).

``map_weights`` is the one place state_dict keys become MindSpore names (rules from the KB).
Its names are loaded on first use: importing this package needs no numpy, so ``msmap weights``
can say what to install before anything imports it (``usercode.require``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kb.weights.mapping import WeightMap, load_rules, map_weights

__all__ = ["WeightMap", "load_rules", "map_weights"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from kb.weights import mapping

        return getattr(mapping, name)
    raise AttributeError(f"module 'kb.weights' has no attribute {name!r}")
