"""Docs generated from the real data/: every link and anchor resolves, tables are well formed,
and a second generation is byte-identical."""
from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path

import pytest

from kb.docs import files, generate, links

LINK = re.compile(r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"(`+).*?\1")
RAW_HTML = re.compile(r"(?<!\\)<[A-Za-z!/][^>]*>")  # an escaped \< is text


@pytest.fixture(scope="module")
def real_docs(real_kb, tmp_path_factory):
    out = tmp_path_factory.mktemp("realdocs")
    generated = generate(real_kb)
    files.sync(out, generated)
    return out, generated


def _prose_lines(md: str):
    """(line number, line) outside fenced code blocks."""
    fenced = False
    for n, line in enumerate(md.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield n, line


def _check_target(out: Path, page: str, target: str, anchors_of) -> str | None:
    if re.match(r"^[a-z]+:", target):
        return None  # external (https:, mailto:): not checked offline
    path, _, anchor = target.partition("#")
    dest = posixpath.normpath(posixpath.join(posixpath.dirname(page), path)) if path else page
    if dest.startswith("..") or not (out / dest).is_file():
        return f"{page}: link to missing file {target}"
    if anchor and dest.endswith(".md") and anchor not in anchors_of(dest):
        return f"{page}: link to missing anchor {target}"
    return None


def test_every_relative_link_and_anchor_resolves(real_docs):
    out, generated = real_docs
    cache: dict[str, set[str]] = {}

    def anchors_of(page: str) -> set[str]:
        if page not in cache:
            cache[page] = links.page_anchors((out / page).read_text(encoding="utf-8"))
        return cache[page]

    problems, checked = [], 0
    for page in generated:
        if not page.endswith(".md"):
            continue
        for _, line in _prose_lines((out / page).read_text(encoding="utf-8")):
            for _, target in LINK.findall(line):
                checked += 1
                problems.append(_check_target(out, page, target, anchors_of))
    problems = [p for p in problems if p]
    assert not problems, "\n".join(problems[:20])
    assert checked >= len(generated) - 1


def test_html_page_links_resolve(real_docs):
    out, generated = real_docs
    page = generated[links.HTML]
    data = json.loads(re.search(r'<script id="msmap-data" type="application/json">(.*?)</script>', page, re.S)
                      .group(1))
    targets = [r["p"] for r in data["rows"] if r["p"]] + list(data["tables"].values())
    targets += re.findall(r'href="([^"#]+)"', page)
    missing = [t for t in targets if not (out / t).is_file()]
    assert not missing, missing[:10]
    table_rows = sum(sum(1 for line in text.splitlines() if line.startswith("| ")) - 1  # minus the header
                     for p, text in generated.items() if p.startswith("tables/"))
    assert len(data["rows"]) == table_rows


def test_every_detail_page_is_linked_from_its_namespace_table(real_docs):
    _, generated = real_docs
    tables = "".join(text for page, text in generated.items() if page.startswith("tables/"))
    orphans = [p for p in generated if p.startswith("api/") and f"](../{p})" not in tables]
    assert not orphans, orphans[:10]


def test_markdown_tables_have_one_cell_per_column_and_no_raw_html(real_docs):
    _, generated = real_docs
    problems = []
    for page, text in generated.items():
        if not page.endswith(".md"):
            continue
        width = None
        for n, line in _prose_lines(text):
            if line.startswith("|"):
                cells = len(re.findall(r"(?<!\\)\|", line))
                width = width or cells
                if cells != width:
                    problems.append(f"{page}:{n}: {cells - 1} cells, header has {width - 1}")
            else:
                width = None
            if page.startswith(("api/", "tables/")) or page == links.INDEX:  # pages made only by the generator
                if RAW_HTML.search(CODE_SPAN.sub("", line)):
                    problems.append(f"{page}:{n}: raw HTML")
    assert not problems, "\n".join(problems[:20])


def test_generation_is_deterministic(real_kb, real_docs):
    _, generated = real_docs
    again = generate(real_kb)
    assert list(again) == list(generated)
    assert again == generated
    assert not files.diff(real_docs[0], again)


def test_every_generated_example_is_valid_python(real_kb):
    from kb.docs import examples

    bad, made = [], 0
    for name in sorted(real_kb.torch_names):
        rec = real_kb.mapping(name)
        for t in rec["targets"]:
            ex = None if t.get("example") else examples.generate(rec, t)
            for side, code in (ex or {}).items():
                made += 1
                try:
                    compile(code, f"<{name} {side}>", "exec")
                except SyntaxError as exc:
                    bad.append(f"{name} → {t['api']} ({side}): {exc.msg}\n{code}")
    assert not bad, "\n\n".join(bad[:5])
