"""``model.eval()``, ``self.model.train()``, ``model.parameters()`` on a receiver used as a model
(kb/analysis/trainloop.py): uses of torch's ``nn.Module`` methods, rewritten from their records."""
from __future__ import annotations

from collections.abc import Iterable

from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.trainloop import MODEL_RECORD, MODEL_TITLE, mode_sites


@register
class ModelMethods(Rule):
    name = "model-methods"
    scope = "file"  # a ``self`` attribute's evidence lies anywhere in its class
    record = MODEL_RECORD
    title = MODEL_TITLE
    order = 5
    example = """\
import torch
class Runner:
    def __init__(self, net):
        self.model = net
    def evaluate(self, x):
        self.model.eval()
        return self.model(x)
"""

    def find(self, context: Context) -> Iterable[Finding]:
        taken = context.spans_of_uses()
        skip = {n.bound for _, n in context.imports.names}
        for site in mode_sites(context.root, context.source, context.catalog, skip, taken, context.torch_classes):
            yield Finding(site.node, site=site)
