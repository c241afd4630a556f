"""msmap convert PATH...: rewrite torch code to MindSpore where it is safe."""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

EPILOG = """\
Every safe rewrite is applied (the same rules as the editor's fix-all); each use
that needs a human gets a '# msmap: <reason> (see: msmap lookup <name>)' comment.
Converting twice gives the same result as converting once.  Without --out or
--in-place the diff is printed and nothing is written.

exit codes: 0 done; 1 some files were left unchanged because they could not be
read or do not parse, or --in-place refused to touch files with uncommitted
changes; 2 bad usage; 3 knowledge base problem."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from kb.commands._common import out_dir
    from kb.commands.scan import add_arguments as scan_arguments

    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--out", metavar="DIR", type=out_dir,
                      help="write converted files and copies of the others under DIR (modes, symlinks and "
                      "hidden files kept; DIR must not overlap the input)")
    mode.add_argument("--in-place", action="store_true", help="rewrite the files themselves")
    mode.add_argument("--diff", action="store_true", help="print a unified diff and write nothing (the default)")
    parser.add_argument("--force", action="store_true",
                        help="with --in-place: also rewrite files that have uncommitted changes in git")
    scan_arguments(parser)
    for action in parser._actions:  # scan's report options do not apply here
        if action.dest in ("format", "no_guesses"):
            action.help = argparse.SUPPRESS


def git_dirty(files: list[Path], roots: list[str]) -> dict[Path, str]:
    """The files ``--in-place`` must not rewrite without ``--force`` (``kb.worktree``): path -> why."""
    from kb.worktree import uncommitted

    return uncommitted(files, roots)


def run(args: argparse.Namespace, dirty: Callable[[list[Path], list[str]], dict[Path, str]] | None = None) -> int:
    from kb.analysis import writing
    from kb.analysis.leftovers import IMPORT_LEFT, Tally, short_reason
    from kb.analysis.patches import unified_diff
    from kb.analysis.project import BOM, convert_files, excluded, project_settings, python_files
    from kb.commands.scan import check_paths, knowledge_base_path, performance, settings_from
    from kb.worktree import report_lines

    check_paths(args.paths)
    settings = settings_from(args)
    roots = [Path(p) for p in args.paths]
    out = args.out
    if out is not None:
        writing.check_out(roots, out)
    files = list(python_files(args.paths, args.exclude))
    if args.in_place and not args.force:
        refused = (dirty or git_dirty)([f for f in files if f.is_file()], args.paths)
        if refused:
            sys.stderr.write("msmap convert: refusing --in-place on files with uncommitted changes, or whose "
                             "state git cannot tell (commit or stash them, or pass --force):\n")
            sys.stderr.writelines(report_lines(refused))
            return 1
    settings = project_settings(files, settings, args.max_file_size)  # files without a torch import
    spec = knowledge_base_path(args)
    show_diff = not (out or args.in_place)
    report = sys.stderr if show_diff else sys.stdout
    if not show_diff:  # what a run killed while writing (kill -9) left beside the files it writes
        for stale in writing.remove_stale_temporaries(writing.folders_written(files, roots, out)):
            report.write(f"{stale}: removed a temporary file left by an interrupted msmap run\n")
    totals = {"files": 0, "changed": 0, "failed": 0, "complete": 0, "torch": 0}
    tally = Tally()
    apis: dict[str, int] = {}
    written: set[str] = set()
    for result in convert_files(files, spec, settings, jobs=args.jobs or None, max_bytes=args.max_file_size):
        path = Path(result.path)
        totals["files"] += 1
        tally.add(result.found, len(result.left), len(result.unsure), len(result.references), result.guarded)
        for name, n in result.apis.items():
            apis[name] = apis.get(name, 0) + n
        if result.error:
            totals["failed"] += 1
            report.write(f"{path}: left unchanged: {result.error}\n")
        new = result.converted if result.changed else None
        if new is not None:
            totals["changed"] += 1
        where = path  # the file whose converted text the line numbers below count in
        if show_diff and new is not None:
            sys.stdout.write(unified_diff(path, result.original or b"", new))
        elif out is not None and os.path.lexists(path) and not path.is_dir():
            target = where = writing.destination(path, roots, out)
            written.add(str(path))
            if new is not None and not path.is_symlink():
                problem = writing.write_copy(target, (BOM if result.bom else b"") + new, path, out)
            else:  # as it is (a symlink stays one; a file that was not converted is copied)
                problem = writing.copy_entry(path, target, out)
            if problem:
                totals["failed"] += 1
                report.write(f"{path}: {problem}\n")
        elif args.in_place and new is not None:
            problem = writing.write_in_place(path, (BOM if result.bom else b"") + new)
            if problem:
                totals["failed"] += 1
                totals["changed"] -= 1
                report.write(f"{path}: left unchanged: {problem}\n")
        for name, line, reason in sorted(result.left + result.unsure + result.references, key=lambda item: item[1]):
            report.write(f"{where}:{line}: {name}: {short_reason(reason)}\n")
        if result.torch_imports and not any(why == IMPORT_LEFT for _, _, why in result.references):
            report.write(f"{path}: {result.torch_imports} torch import(s) left (something still refers to torch)\n")
        if b"torch" in (result.original or b"") or result.unsure:
            totals["torch"] += 1
            totals["complete"] += result.complete
    if out is not None:
        for rest, problem in writing.copy_rest(roots, out, lambda p, r: excluded(p, r, args.exclude), written):
            report.write(f"{rest}: {problem}\n")
    report.write(f"{totals['files']} files, {totals['changed']} changed, {totals['failed']} left unchanged "
                 f"(unreadable or not parsing); {tally.summary()}\n")
    if totals["torch"]:
        report.write(f"files converted completely (no use left, no marker, no torch import): "
                     f"{totals['complete']} of {totals['torch']} that use torch\n")
    from kb.timings import project_lines

    report.writelines(line + "\n" for line in project_lines(performance(spec, apis, settings)))
    return 1 if totals["failed"] else 0
