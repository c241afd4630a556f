"""msmap docs: regenerate docs/ (tables, detail pages, caveats, offline HTML) and the README
CLI reference from the knowledge base; --check reports drift instead (exit 1), for CI."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from kb.commands._common import add_db_options, open_kb, out_dir, print_json


def _checkout() -> Path | None:
    """The checkout this msmap runs from (an editable install), or None (an installed msmap)."""
    root = Path(__file__).resolve().parent.parent.parent
    return root if (root / "pyproject.toml").is_file() and (root / "kb").is_dir() else None


def _repo_root() -> Path:
    return _checkout() or Path.cwd()


def _wants_readme(args: argparse.Namespace) -> bool:
    """The README's CLI reference is regenerated when asked (--readme), or with the checkout's own
    docs/ (no --out, or --out naming it); never for docs written elsewhere or outside a checkout."""
    if args.no_readme:
        return False
    if args.readme:
        return True
    checkout = _checkout()
    if checkout is None:
        return False
    return args.out is None or Path(args.out).resolve() == (checkout / "docs").resolve()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", metavar="DIR", type=out_dir,
                        help="docs folder to write or check (default: docs/ of this checkout)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 and list the files that differ from what the DB generates: "
                        "the pages the repository keeps (index pages and a fixed sample of API pages; "
                        "--full: every page)")
    parser.add_argument("--full", action="store_true",
                        help="with --check, compare every generated page (a full site written with --out)")
    parser.add_argument("--readme", metavar="PATH",
                        help="README whose CLI reference block to regenerate (default: README.md of this "
                        "checkout, when the docs go to its docs/; docs written anywhere else leave every "
                        "README alone)")
    parser.add_argument("--no-readme", action="store_true", help="leave the README CLI reference alone")
    parser.add_argument("--force", action="store_true",
                        help="write into a folder that holds other files and no .msmap-docs marker "
                        "(they are kept)")
    add_db_options(parser)


def _show(path: Path) -> str:
    """A path as the user would type it: relative below the working folder, else absolute."""
    try:
        shown = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)
    return str(path.resolve()) if shown.startswith("..") else shown


README_LIMIT = 10_000_000  # bytes of a README msmap reads to update its CLI reference


def _readme(args: argparse.Namespace) -> tuple[Path, str | None, str | None]:
    """(path, current text, regenerated text); the texts are None when there is nothing to do."""
    from kb.docs import cliref
    from kb.reading import read_text

    path = Path(args.readme) if args.readme else _repo_root() / "README.md"
    if not path.is_file():
        raise cliref.MarkersMissing(f"{_show(path)}: no such file; create it with the CLI reference markers "
                                    f"'{cliref.START}' and '{cliref.END}', or pass --no-readme")
    text, why = read_text(path, README_LIMIT, "a README")
    if text is None:
        raise cliref.MarkersMissing(f"{_show(path)}: {why}; pass --no-readme to leave it alone")
    return path, text, cliref.splice(text, cliref.block(), _show(path))


def run(args: argparse.Namespace) -> int:
    from kb.docs import files as docfiles
    from kb.docs import generate, in_git
    from kb.errors import MsmapError
    from kb.safepaths import write_file

    out = Path(args.out) if args.out else _repo_root() / "docs"
    if not args.check:
        docfiles.check_writable(out, args.force)  # before the work, not after
    generated = generate(open_kb(args))
    readme_path, readme_error, readme_new, readme_old = None, None, None, None
    if _wants_readme(args):
        try:
            readme_path, readme_old, readme_new = _readme(args)
        except MsmapError as exc:
            readme_error = str(exc)
    if args.check:
        checked = generated if args.full else {rel: text for rel, text in generated.items() if in_git(rel)}
        problems = [(_show(out / rel), status) for rel, status in docfiles.diff(out, checked)
                    if status != "stale" or args.full or in_git(rel)]
        if readme_path and readme_new != readme_old:
            problems.append((_show(readme_path), "CLI reference differs"))
        if args.json:
            print_json({"ok": not problems and not readme_error, "out": str(out),
                        "problems": [{"path": p, "status": s} for p, s in problems], "readme_error": readme_error})
        else:
            for path, status in problems:
                print(f"{path}: {status}")
            if readme_error:
                sys.stderr.write(f"msmap docs: {readme_error}\n")
            if problems:
                print(f"{len(problems)} file(s) out of date; run 'msmap docs' to regenerate")
            elif not readme_error:
                print(f"{_show(out)}: {len(checked)} generated files up to date"
                      + ("" if args.full else f" (of {len(generated)}; the others: --out DIR, then --check --full)"))
        return 1 if problems or readme_error else 0
    changes = docfiles.sync(out, generated, force=args.force)
    readme_state = "error" if readme_error else "skipped"
    if readme_path and readme_new is not None:
        readme_state = "unchanged" if readme_new == readme_old else "updated"
        if readme_state == "updated":
            problem = write_file(readme_path, readme_new.encode("utf-8"))
            if problem:
                raise MsmapError(f"{_show(readme_path)}: {problem}", exit_code=1)
    if args.json:
        print_json({"out": str(out), "files": len(generated), "written": changes.written,
                    "removed": changes.removed, "unchanged": changes.unchanged, "readme": readme_state,
                    "readme_error": readme_error})
    else:
        print(f"{_show(out)}: {len(generated)} files ({len(changes.written)} written, "
              f"{len(changes.removed)} removed, {changes.unchanged} unchanged)")
        if readme_path and readme_state != "error":
            print(f"{_show(readme_path)}: CLI reference {readme_state}")
        if readme_error:
            sys.stderr.write(f"msmap docs: {readme_error}\n")
    return 1 if readme_error else 0
