"""What convert reads is bounded (issue 28): a sibling module it follows obeys --max-file-size like the
inputs, and a file with more code than fits in bounded memory is refused at once, with the figure,
instead of taking gigabytes (a 5.4 MB file of calls peaked at 2.5 GB)."""
from __future__ import annotations

import subprocess
import sys
import tracemalloc

from kb.analysis.settings import EngineSettings
from kb.analysis.sourcefile import MEMORY_PER_BYTE, analysis_cost, memory_limit
from tests.conftest import ROOT
from tests.reliability.conftest import msmap

MAIN = "from .helper import *\n\nlayer = nn.Linear(2, 3)\n"
PEAK_RSS = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, done.stdout)
"""


def package(tmp_path, helper: str):
    pkg = tmp_path / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "main.py").write_text(MAIN)
    (pkg / "helper.py").write_text(helper)
    return pkg


def test_a_sibling_over_the_size_limit_is_not_read(env, tmp_path):
    small = package(tmp_path / "small", "import torch.nn as nn\n")
    followed = msmap(env, "convert", str(small / "main.py"), "--max-file-size", "1")
    assert "layer = nn.Linear(2, 3)" in followed.stdout  # the star import was followed: main.py changed
    big = package(tmp_path / "big", "import torch.nn as nn\n" + "# padding\n" * 120_000)  # 1.2 MB
    done = msmap(env, "convert", str(big / "main.py"), "--max-file-size", "1")
    assert done.returncode == 0 and "---" not in done.stdout, done.stdout  # not followed: nothing to change


def peak_rss(env, *args: str) -> tuple[int, int, str]:
    """(exit code, peak RSS in bytes, output) of ``msmap ARGS``."""
    done = subprocess.run([sys.executable, "-c", PEAK_RSS, sys.executable, "-m", "kb", *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=60)
    code, peak, output = done.stdout.split(" ", 2)
    return int(code), int(peak), output


def test_a_file_too_costly_to_analyse_is_refused_at_once(env, tmp_path):
    dense = tmp_path / "dense.py"
    dense.write_text("import torch\nx = torch.zeros(3)\n" + "torch.abs(x)\n" * 160_000)  # 2 MB, 160k calls
    tiny = tmp_path / "tiny.py"
    tiny.write_text("import torch\nx = torch.zeros(3)\n")
    code, peak, output = peak_rss(env, "convert", str(dense))
    assert code == 1 and "Traceback" not in output
    assert "too much code to analyse in bounded memory" in output and "the limit is 256 MB" in output
    extra = peak - peak_rss(env, "convert", str(tiny))[1]
    assert extra < MEMORY_PER_BYTE * dense.stat().st_size, f"{extra / 1e6:.0f} MB more than for a tiny file"


def test_an_analysed_file_stays_within_its_estimate(built_db, tmp_path):
    from kb.analysis import project

    project._init_worker(str(built_db), EngineSettings())
    docs = tmp_path / "documented.py"  # 2 MB, nearly all one docstring: few syntax nodes
    docs.write_text('import torch\n"""\n' + "A line of documentation, as long as real ones are.\n" * 40_000 +
                    '"""\nlayer = torch.nn.Linear(2, 3)\n')
    calls = tmp_path / "calls.py"  # dense code: the estimate, not the size, bounds it
    calls.write_text("import torch\nx = torch.zeros(3)\n" + "y = torch.abs(x) + torch.relu(x)\n" * 80)
    for path, ratio in ((docs, MEMORY_PER_BYTE), (calls, None)):
        data = path.read_bytes()
        tracemalloc.start()
        try:
            result = project.convert_file(project._ENGINE, path)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert result.error is None and result.converted is not None
        assert peak <= analysis_cost(data) + 16_000_000 and analysis_cost(data) <= memory_limit(len(data))
        if ratio:
            assert peak < ratio * len(data), f"{peak / len(data):.1f}x the file's size"
