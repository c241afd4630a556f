"""Run ``msmap lsp`` and, at exit, write the names in ``sys.modules`` to the file in argv[1]."""
import atexit
import sys


def _dump(path: str) -> None:
    with open(path, "w") as out:
        out.write("\n".join(sorted(sys.modules)))


if __name__ == "__main__":
    atexit.register(_dump, sys.argv[1])
    from kb.cli import main

    raise SystemExit(main(["lsp", *sys.argv[2:]]))
