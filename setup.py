"""Builds the knowledge base into the wheel, so an installed msmap answers its first lookup at once.

Everything else about the package is declared in pyproject.toml.  An editable install (a checkout)
skips this: there the DB is built from data/ on first use, and rebuilt whenever data/ changes.
"""
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildPyWithKB(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False) or not (ROOT / "data" / "curated").is_dir():
            return
        sys.path.insert(0, str(ROOT))
        from kb.build import build

        out = Path(self.build_lib) / "kb" / "prebuilt" / "kb.sqlite"
        counts = build(ROOT / "data", out, force=True)
        print(f"msmap: built {out} ({counts['mappings']} mappings) in {counts['seconds']} s")


setup(cmdclass={"build_py": BuildPyWithKB})
