"""msmap search WORDS: ranked, typo-tolerant full-text search."""
from __future__ import annotations

import argparse

from kb.commands._common import add_db_options, int_in, open_kb, print_json

MAX_RESULTS = 1000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("words", nargs="+", help="words to look for in API names, notes and caveats")
    parser.add_argument("-n", "--limit", type=int_in(1, MAX_RESULTS), default=20,
                        help="show at most N results (default 20)")
    add_db_options(parser)


def run(args: argparse.Namespace) -> int:
    from kb.errors import MsmapError
    from kb.search import check_query

    try:
        check_query(" ".join(args.words))
    except ValueError as exc:
        raise MsmapError(f"argument words: {exc}") from None
    kb = open_kb(args)
    results = kb.search(" ".join(args.words), args.limit)
    if args.json:
        print_json({"query": " ".join(args.words), "results": results})
        return 0 if results else 1
    if not results:
        print(f"no matches for '{' '.join(args.words)}'")
        return 1
    if results[0].get("corrected"):
        fixes = ", ".join(f"{w} → {'/'.join(c)}" for w, c in results[0]["corrected"].items())
        print(f"(searched for: {fixes})")
    for r in results:
        label = r["title"] if r["kind"] == "mapping" else f"caveat {r['ref']}: {r['title']}"
        extra = r.get("summary") or r.get("snippet") or ""
        print(f"{label}\n    {extra}")
    return 0
