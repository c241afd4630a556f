"""``model.eval()``, ``self.model.train()``, ``model.parameters()`` on a receiver used as a model
(kb/analysis/trainloop.py): uses of torch's ``nn.Module`` methods, rewritten from their records."""
from __future__ import annotations

from collections.abc import Hashable, Iterable

from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.trainloop import MODEL_RECORD, MODEL_TITLE, mode_sites


@register
class ModelMethods(Rule):
    name = "model-methods"
    scope = "class"  # a ``self`` attribute's evidence lies anywhere in its class (and what classes hold: inputs)
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
        for site in mode_sites(context.root, context.source, context.catalog, skip, taken, context.torch_classes,
                               *context.within):
            yield Finding(site.node, site=site)

    def inputs(self, context: Context) -> Hashable:
        """The lines defining a class or importing from the package: what says a class is no torch module."""
        return tuple(line for word in (b"class", b"from") for line in _lines_starting(context.source, word))


def _lines_starting(source: bytes, word: bytes) -> list[bytes]:
    found, at = [], source.find(word)
    while at >= 0:
        end = source.find(b"\n", at)
        end = len(source) if end < 0 else end
        if at == 0 or source[at - 1] == 10:  # (``\n``)
            found.append(source[at:end])
        at = source.find(word, end)
    return found
