"""Generated docs: Markdown pages, one offline HTML table and the README CLI reference.

    KB (kb.query) ──load──▶ Corpus ──render──▶ {relative path: text} ──sync/diff──▶ docs/

``generate()`` is pure (same DB, same output: sorted, no timestamps); ``kb.docs.files``
writes only what changed and removes stale pages from the generated subfolders.
"""
from __future__ import annotations

from kb.docs import caveats, html, links, pages, performance, tables
from kb.docs.corpus import Corpus, load
from kb.query import KB

__all__ = ["generate", "render", "Corpus", "load", "SAMPLE", "in_git"]

# The per-API pages (docs/api/, about 8,000 files and 45 MB) are a build artifact ('msmap docs --out
# DIR' writes the whole site); the repository keeps the index pages and these pages, a fixed sample
# that 'msmap docs --check' compares, so a change to the page renderer shows in review.
SAMPLE = ("einops.rearrange", "torch.Tensor.view", "torch.cat", "torch.nn.BatchNorm2d", "torch.nn.Conv2d",
          "torch.nn.Dropout", "torch.nn.LayerNorm", "torch.nn.Linear", "torch.nn.Module",
          "torch.nn.functional.relu", "torch.nn.functional.scaled_dot_product_attention", "torch.optim.Adam",
          "torch.zeros")


def in_git(rel: str) -> bool:
    """Whether a generated file is kept in the repository (index pages, and the sample of API pages)."""
    return not rel.startswith("api/") or rel[len("api/"):-len(".md")] in SAMPLE


def render(corpus: Corpus) -> dict[str, str]:
    """Every generated file, keyed by its path relative to the docs folder."""
    caveats_page, anchors = caveats.render(corpus)
    files = {links.INDEX: pages.render_index(corpus), links.CAVEATS: caveats_page, links.HTML: html.render(corpus),
             links.PERFORMANCE: performance.render(corpus.timings)}
    for ns, records in corpus.namespaces().items():
        files[links.table_path(ns)] = tables.render_namespace(ns, records, corpus)
    for rec in corpus.records:
        if rec["torch"] in corpus.pages:
            files[corpus.pages[rec["torch"]]] = pages.render_api(rec, corpus, anchors)
    return dict(sorted(files.items()))


def generate(kb: KB) -> dict[str, str]:
    return render(load(kb))
