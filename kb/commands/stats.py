"""msmap stats: how many torch APIs have an entry, per namespace."""
from __future__ import annotations

import argparse

from kb.commands._common import add_db_options, open_kb, print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_db_options(parser)


def run(args: argparse.Namespace) -> int:
    s = open_kb(args).stats()
    if args.json:
        print_json(s)
        return 0
    print(f"torch {s['torch_version']} → mindspore {', '.join(s['ms_versions'])}; "
          f"{s['curated']} curated entries, {s['caveats']} caveats")
    head = f"{'namespace':<28}{'entries':>9}{'classic':>9}{'mint':>9}{'no equiv':>10}"
    print(head)
    print("-" * len(head))
    for ns, d in s["namespaces"].items():
        print(f"{ns:<28}{d['entries']:>9}{d['classic']:>9}{d['mint']:>9}{d['no_equivalent']:>10}")
    t = s["total"]
    print("-" * len(head))
    print(f"{'total':<28}{t['entries']:>9}{t['classic']:>9}{t['mint']:>9}{t['no_equivalent']:>10}")
    for fam, d in s.get("rewrites", {}).items():
        print(f"{fam} automatic rewrites: {d['auto']}, proven by an executed rewrite probe: {d['proven']}, "
              f"unprobed: {d['unprobed']}; turned off by a failed rewrite probe: {d['failed']}")
    return 0
