"""Fetch the sources of a held-out batch: PyPI packages nobody here has read, pinned by version.

    python benchmarks/heldout/fetch.py [batch1] [--dest DIR]

Each package of the batch file (``benchmarks/heldout/<batch>.json``: ``packages`` maps a PyPI
name to its exact version) is downloaded with ``pip download --no-deps`` (a wheel when PyPI has
one, else the sdist) into ``$MSMAP_HELDOUT`` (default /tmp/msmap-heldout), and its ``.py`` files are
extracted to ``<dest>/src/<name>-<version>/`` (an sdist's top folder dropped).  The repository keeps
only the case descriptors and versions, never the sources.  Exit 1 when a package or a file a case
lists is missing.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEST = Path(os.environ.get("MSMAP_HELDOUT", "/tmp/msmap-heldout"))


def load_batch(batch: str) -> dict:
    return json.loads((HERE / f"{Path(batch).name}.json").read_text())


def source_dir(dest: Path, package: str, version: str) -> Path:
    return dest / "src" / f"{package}-{version}"


def _archive(folder: Path) -> Path | None:
    found = sorted(p for p in folder.iterdir() if p.suffix in (".whl", ".zip") or p.name.endswith(".tar.gz"))
    return found[0] if found else None


def extract(archive: Path, out: Path) -> int:
    """The archive's .py files under ``out``; an sdist's single top folder is dropped."""
    if archive.name.endswith(".tar.gz"):
        with tarfile.open(archive) as tar:
            files = {m.name: tar.extractfile(m).read() for m in tar.getmembers()
                     if m.isfile() and m.name.endswith(".py")}
    else:
        with zipfile.ZipFile(archive) as zf:
            files = {n: zf.read(n) for n in zf.namelist() if n.endswith(".py")}
    strip = 0 if archive.suffix == ".whl" else 1
    count = 0
    for name, data in files.items():
        parts = Path(name).parts[strip:]
        if not parts or ".." in parts:
            continue
        target = out.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        count += 1
    return count


def fetch(batch: dict, dest: Path) -> list[str]:
    problems = []
    for package, version in sorted(batch["packages"].items()):
        folder = dest / "dist" / f"{package}-{version}"
        out = source_dir(dest, package, version)
        if out.exists():
            continue
        folder.mkdir(parents=True, exist_ok=True)
        if _archive(folder) is None:
            proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(folder),
                                   f"{package}=={version}"], capture_output=True, text=True)
            if proc.returncode or _archive(folder) is None:
                tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:]
                problems.append(f"{package}=={version}: {tail[0] if tail else 'no archive'}")
                continue
        part = out.with_name(out.name + ".part")
        shutil.rmtree(part, ignore_errors=True)
        n = extract(_archive(folder), part)
        part.rename(out)  # whole or not at all
        print(f"{package}=={version}: {n} .py files")
    for case in batch["cases"]:
        src = case["source"]
        root = source_dir(dest, src["package"], src["version"])
        for path in src["paths"]:
            if root.exists() and not (root / src["root"] / path).exists():
                problems.append(f"{case['name']}: {src['root']}/{path} not in {src['package']}=={src['version']}")
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("batch", nargs="?", default="batch1")
    parser.add_argument("--dest", default=str(DEST), help="cache folder (default $MSMAP_HELDOUT or %(default)s)")
    args = parser.parse_args(argv)
    problems = fetch(load_batch(args.batch), Path(args.dest))
    for p in problems:
        print(f"fetch: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
