"""Tensor-method guesses: ``x.view(...)`` may be ``torch.Tensor.view`` where the resolver cannot type ``x``
(kb/analysis/guesses.py). The engine plans each site found here from its record, marked as a guess."""
from __future__ import annotations

from typing import Any

from kb.analysis.guesses import tensor_method_sites
from kb.analysis.rules import SiteContext, SiteFinder, register


@register
class TensorMethods(SiteFinder):
    name = "tensor-methods"
    order = 10
    example = """\
def flatten(x):
    return x.view(x.size(0), -1).contiguous()
"""

    def find(self, context: SiteContext) -> list[Any]:
        if not (context.settings.tensor_method_guesses and context.tensors):
            return []
        return tensor_method_sites(context.root, context.source, context.catalog, context.skip, context.taken,
                                   context.start, context.end)
