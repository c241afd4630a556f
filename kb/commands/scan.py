"""msmap scan PATH...: report torch API uses in files or projects."""
from __future__ import annotations

import argparse
import sys

EPILOG = """\
categories: direct (converts directly), caveats (converts, but check a caveat or a
behaviour difference), manual (context change or not automatic), none (no MindSpore
equivalent), guess (looks like a torch.Tensor method; the receiver's type is unknown).
The automatic share counts call sites (imports and guesses are not sites).

exit codes: 0 scan done; 1 scan done but some files could not be read (each is
reported: unreadable, not UTF-8, binary, dangling or looping symlink); 2 bad usage
(unknown option, a PATH that does not exist); 3 knowledge base problem."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from kb.analysis.project import MAX_SOURCE_BYTES
    from kb.commands._common import JOBS, db_file, megabytes, ms_version

    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    parser.add_argument("paths", nargs="+", metavar="PATH", help="Python files or directories to scan")
    parser.add_argument("--format", choices=("table", "json", "csv", "sarif"), default="table",
                        help="output format (default: table)")
    parser.add_argument("--family", choices=("classic", "mint"), default="classic",
                        help="MindSpore target family (default: classic)")
    parser.add_argument("--ms-version", default="2.10.0", metavar="X.Y.Z", type=ms_version,
                        help="MindSpore version to target (default: 2.10.0)")
    parser.add_argument("--device", choices=("CPU", "GPU", "Ascend"), default="CPU",
                        help="target device (default: CPU, the machine users try first, where msmap's "
                        "timings are measured; the same default in every command and the language server)")
    parser.add_argument("--no-guesses", action="store_true",
                        help="do not report possible torch.Tensor methods (x.view(...))")
    parser.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                        help="skip files or directories matching GLOB (repeatable)")
    parser.add_argument("--jobs", "-j", type=JOBS, default=0, metavar="N",
                        help="worker processes (default: all cores)")
    parser.add_argument("--max-file-size", type=megabytes, default=MAX_SOURCE_BYTES, metavar="MB",
                        help=f"skip (and report) source files larger than MB megabytes "
                        f"(default {MAX_SOURCE_BYTES // 1_000_000})")
    parser.add_argument("--db", metavar="PATH", type=db_file,
                        help="SQLite knowledge base to use (default: built from data/)")


def settings_from(args: argparse.Namespace):
    from kb.analysis.settings import EngineSettings
    from kb.errors import MsmapError

    try:
        return EngineSettings(family=args.family, ms_version=args.ms_version, device=args.device,
                              tensor_method_guesses=not getattr(args, "no_guesses", False))
    except ValueError as exc:
        raise MsmapError(str(exc), exit_code=2) from None


def check_paths(paths: list[str]) -> None:
    import os

    from kb.errors import MsmapError

    missing = [p for p in paths if not os.path.lexists(p)]
    if missing:
        raise MsmapError(f"no such file or directory: {', '.join(missing)}", exit_code=2)


def knowledge_base_path(args: argparse.Namespace):
    from pathlib import Path

    from kb.query import ensure_db

    return ensure_db(db=Path(args.db) if args.db else None, quiet=False)


def performance(spec, uses: dict[str, int], settings) -> dict:
    """The project's measured ops that will dominate a slowdown (kb.timings), for the summaries of
    scan and convert; ``uses``: {torch API: number of uses}."""
    from kb.query import KB
    from kb.timings import project_costs

    return project_costs(uses, KB(spec).timings_for, settings.family, settings.ms_version, settings.device)


def progress_printer():
    """A progress callback drawing on stderr, or None when stderr is not a terminal."""
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        if done == total or done % 25 == 0:
            sys.stderr.write(f"\rscanning: {done}/{total} files")
            if done == total:
                sys.stderr.write("\r" + " " * 40 + "\r")
            sys.stderr.flush()

    return show


def run(args: argparse.Namespace) -> int:
    from kb.analysis.project import project_settings, python_files, scan_files
    from kb.analysis.reports import RENDERERS, summarize

    check_paths(args.paths)
    settings = settings_from(args)
    files = list(python_files(args.paths, args.exclude))
    settings = project_settings(files, settings, args.max_file_size)  # files without a torch import
    spec = knowledge_base_path(args)
    reports = scan_files(files, spec, settings, jobs=args.jobs or None, progress=progress_printer(),
                         max_bytes=args.max_file_size)
    summary = summarize(reports)
    summary.performance = performance(spec, {name: sum(c.values()) for name, c in summary.per_api.items()}, settings)
    sys.stdout.write(RENDERERS[args.format](reports, summary))
    return 1 if summary.failed else 0
