"""msmap stats: how many torch APIs have an entry, per namespace; per family, automatic rewrites and
how many an executed rewrite probe proves, with the parameter values proven."""
from __future__ import annotations

import argparse

from kb.commands._common import add_db_options, open_kb, print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_db_options(parser)
    parser.add_argument("--unproven", action="store_true",
                        help="list the targets that are not automatic for want of a proof (gated off) or because a "
                             "rewrite probe found other results (failed), per family, with the class of reason")


def _unproven(args: argparse.Namespace) -> int:
    from kb.proof_gaps import REASONS, gaps, summary

    rows = gaps(open_kb(args).conn)
    if args.json:
        print_json({"summary": summary(rows), "targets": rows})
        return 0
    for r in rows:
        print(f"{r['family']:<8} {r['status']:<7} {r['reason']:<12} {r['torch']} -> {r['api']}: {r['detail'][:160]}")
    head = f"{'family':<9}" + "".join(f"{k:>13}" for k in REASONS)
    print()
    print(head)
    print("-" * len(head))
    for fam, counts in summary(rows).items():
        print(f"{fam:<9}" + "".join(f"{counts[k]:>13}" for k in REASONS))
    return 0


def run(args: argparse.Namespace) -> int:
    if args.unproven:
        return _unproven(args)
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
    rewrites = s.get("rewrites", {})
    if rewrites:
        print()
        head = (f"{'family':<9}{'automatic':>10}{'proven':>8}{'%':>6}{'no call':>9}{'unproven':>10}"
                f"{'gated off':>11}{'failed':>8}{'with values':>13}{'values ok':>11}{'values bad':>12}")
        print(head)
        print("-" * len(head))
        for fam, d in rewrites.items():
            share = 100.0 * d["proven"] / d["auto"] if d["auto"] else 0.0
            print(f"{fam:<9}{d['auto']:>10}{d['proven']:>8}{share:>6.1f}{d['not_call_probed']:>9}{d['unprobed']:>10}"
                  f"{d['unproven_off']:>11}{d['failed']:>8}{d['values_targets']:>13}{d['values_proven']:>11}"
                  f"{d['values_failed']:>12}")
        print("automatic: rewritten by convert and the quick-fixes; proven: an executed rewrite probe ran the "
              "emitted code next to torch and it matched; no call: automatic without a call probe (not a tensor "
              "computation, not a call); unproven: automatic without either (0: not proven is not automatic); "
              "gated off: not automatic for want of a proof; failed: a probe found other results; with values: "
              "proven targets whose parameter values were varied; values ok/bad: (parameter, value class) pairs "
              "proven / found different (a call using one gets a marker)")
    return 0
