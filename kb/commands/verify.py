"""msmap verify: a torch model and its MindSpore conversion on the same inputs -> match/mismatch/error."""
from __future__ import annotations

import argparse

from kb.commands._common import float_in, int_in, print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("torch_model", metavar="TORCH_FILE.py:EXPR", help="the torch model, e.g. net.py:Net(10)")
    parser.add_argument("ms_model", metavar="MS_FILE.py:EXPR", help="the converted MindSpore model")
    parser.add_argument("--input", action="append", required=True, metavar="SPEC", dest="inputs",
                        help="one per forward argument: SHAPE[:DTYPE[:HIGH|:LOW:HIGH]] or =VALUES[:DTYPE], "
                             "e.g. 1,3,32,32 or 2,8:int64:100 or =12,9:int64")
    parser.add_argument("--rtol", type=float_in(0, 1e6), default=1e-4, help="relative tolerance (default 1e-4)")
    parser.add_argument("--atol", type=float_in(0, 1e6), default=1e-5, help="absolute tolerance (default 1e-5)")
    parser.add_argument("--seed", type=int_in(0, 2**32 - 1), default=0,
                        help="seed of the inputs and of the torch model (default 0)")
    parser.add_argument("--grad", action="store_true", help="also compare gradients of sum(outputs) per parameter")
    parser.add_argument("--timeout", type=float_in(0, 86_400, low_open=True), default=300.0,
                        help="seconds for both processes (default 300)")
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")


def run(args: argparse.Namespace) -> int:
    from kb.weights.usercode import parse_target, require

    require("numpy", "torch", "mindspore")  # before any module that imports them
    from kb.verify.inputs import check_total, parse_spec
    from kb.verify.report import verdict_text
    from kb.verify.run import Pair, verify_many

    specs = [parse_spec(s) for s in args.inputs]
    check_total(specs)
    pair = Pair(parse_target(args.torch_model, "TORCH_FILE:EXPR"), parse_target(args.ms_model, "MS_FILE:EXPR"),
                specs, args.seed, args.grad, args.rtol, args.atol)
    verdict = verify_many([pair], timeout=args.timeout)[0]
    if args.json:
        print_json(verdict.as_dict())
    else:
        print(verdict_text(verdict))
    return verdict.exit_code
