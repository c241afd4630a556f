"""msmap lookup NAME: a torch API's MindSpore equivalents, or a MindSpore API's torch sources."""
from __future__ import annotations

import argparse

from kb.commands._common import add_db_options, api_name, ms_version, open_kb, print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", type=api_name,
                        help="API name as you would write it: torch.nn.Dropout, nn.Linear, F.relu, "
                        "Tensor.view, x.view, torch.optim (a prefix lists its entries), mindspore.nn.Dense")
    parser.add_argument("--family", choices=("classic", "mint"), help="show only this MindSpore target family")
    parser.add_argument("--ms-version", metavar="X.Y.Z", type=ms_version,
                        help="mark targets that do not apply to this MindSpore version")
    parser.add_argument("--device", choices=("CPU", "GPU", "Ascend"), default="CPU",
                        help="device for the performance line (default: CPU, the machine users try first, where "
                        "msmap's timings are measured; the same default in every command and the language server)")
    add_db_options(parser)


def run(args: argparse.Namespace) -> int:
    from kb import render
    from kb.errors import NotFound

    kb = open_kb(args)
    name, others = kb.resolve_all(args.name)
    if name is None:
        prefix = _as_prefix(kb, args.name)
        if prefix:
            items = kb.namespace(prefix)
            if args.json:
                print_json({"namespace": prefix, "entries": items})
            else:
                print(f"{prefix}: {len(items)} entries")
                for it in items:
                    print(f"  {it['torch']:<48} {it['summary']}")
            return 0
        if others:
            msg = f"'{args.name}' is ambiguous; did you mean: " + ", ".join(others[:8])
        else:
            sugg = kb.suggest(args.name)
            msg = f"unknown API '{args.name}'" + (f"; did you mean: {', '.join(sugg)}" if sugg else "")
        if args.json:
            print_json({"error": "not_found", "query": args.name, "suggestions": others or kb.suggest(args.name)})
            return 1
        raise NotFound(msg)
    if name.startswith("mindspore"):
        rec = kb.reverse(name)
        if args.json:
            print_json(rec)
        else:
            print(render.render_reverse(rec))
        return 0
    rec = kb.mapping(name)
    if args.family:
        rec = dict(rec, targets=[t for t in rec["targets"] if t["family"] == args.family])
    note = kb.explain(args.name)  # another spelling of the object, or a member of the class
    if args.json:
        print_json(dict(rec, spelling={"query": args.name, "note": note}) if note else rec)
    else:
        if note:
            print(note)
        print(render.render_mapping(rec, ms_version=args.ms_version, device=args.device))
    return 0


def _as_prefix(kb, text: str) -> str | None:
    from kb import names

    for cand in names.candidates(text):
        if not names.is_mindspore(cand) and kb.namespace(cand):
            return cand
    return None


