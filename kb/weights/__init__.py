"""torch checkpoints -> MindSpore parameters (``msmap weights``; also used by ``msmap verify``).

``map_weights`` is the one place state_dict keys become MindSpore names (rules from the KB).
"""
from kb.weights.mapping import WeightMap, load_rules, map_weights

__all__ = ["WeightMap", "load_rules", "map_weights"]
