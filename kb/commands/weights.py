"""msmap weights: convert a torch checkpoint to a MindSpore .ckpt (names by the KB's rules)."""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from kb.commands._common import megabytes, print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("checkpoint", type=Path, help="torch .pt/.pth state_dict or .safetensors file")
    parser.add_argument("--model", metavar="FILE.py:EXPR",
                        help="the converted MindSpore model: its file and an expression building it, "
                             "e.g. net.py:Net(num_classes=10) (runs that code)")
    parser.add_argument("--out", type=Path, required=True, metavar="OUT.ckpt", help="MindSpore checkpoint to write")
    parser.add_argument("--family", choices=("classic", "mint"),
                        help="the family the model was converted with (convert --family): the name rules "
                             "without --model (default classic); with --model each parameter's name decides "
                             "its rule and this names the family in the report (default: guessed from the names)")
    parser.add_argument("--max-expanded-size", type=megabytes, metavar="MB",
                        help="refuse a checkpoint that expands to more than this: its zip members, or "
                             "its tensors' values written out (default: 10 times the file's size plus 64 MiB)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace) -> int:
    from kb.weights.output import check_out
    from kb.weights.usercode import parse_target, require

    check_out(args.checkpoint, args.out)  # before anything is loaded or run
    # MindSpore's own log goes to stderr as '[WARNING] ME(...)' lines: errors only (its public GLOG_v
    # variable, read when mindspore is imported; a value the user set is kept)
    os.environ.setdefault("GLOG_v", "3")
    require("numpy", "torch", "mindspore")  # torch reads the checkpoint (also .safetensors' tensors)
    from kb.weights.convert import convert, report_text

    model = parse_target(args.model) if args.model else None
    result = convert(args.checkpoint, args.out, model, args.family, args.max_expanded_size)
    if args.json:
        print_json(result.as_dict())
    else:
        print(report_text(result))
    return result.exit_code
