"""msmap docs on a full disk (issue 28): one clear line naming what was not written, no traceback,
and the next run, with room again, finishes in the same folder instead of refusing it.

``prlimit --fsize`` stands in for the full disk: a write past the limit fails part-way (EFBIG, as
ENOSPC would; Python ignores SIGXFSZ)."""
from __future__ import annotations

import shutil

import pytest

from tests.reliability.conftest import msmap, one_line_error

pytestmark = pytest.mark.skipif(shutil.which("prlimit") is None, reason="needs prlimit (util-linux)")


def test_docs_on_a_full_disk_says_so_and_the_rerun_finishes(env, tmp_path):
    out = tmp_path / "docs"
    full = msmap(env, "docs", "--out", str(out), "--no-readme", prefix=["prlimit", "--fsize=5000"])
    line = one_line_error(full, 1, str(out), "not written", "mapping.html")
    assert "File too large" in line or "No space" in line, line
    assert (out / ".msmap-docs").is_file()  # written first: the folder is known as msmap's
    again = msmap(env, "docs", "--out", str(out), "--no-readme")
    assert again.returncode == 0, again.stderr
    assert (out / "mapping.html").stat().st_size > 5000
    check = msmap(env, "docs", "--out", str(out), "--no-readme", "--check")
    assert check.returncode == 0, check.stdout + check.stderr
