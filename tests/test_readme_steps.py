"""The README's three steps (convert, weights, verify) run exactly as printed, on a small model."""
from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
NET = '''\
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(3, num_classes)

    def forward(self, x):
        return self.fc(self.pool(x).flatten(1))
'''


def _steps() -> list[list[str]]:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## From torch to MindSpore in three steps"):]
    start = section.index("```console\n") + len("```console\n")
    block = section[start:section.index("```\n", start)]
    commands = " ".join(re.sub(r"\s+#.*$", "", line) for line in block.splitlines()).replace("\\ ", " ")
    return [shlex.split(c.strip()) for c in commands.split("$ ") if c.strip()]


def test_the_three_steps_work_as_printed(tmp_path):
    steps = _steps()
    assert [s[:2] for s in steps] == [["msmap", "convert"], ["msmap", "weights"], ["msmap", "verify"]]
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "net.py").write_text(NET)
    namespace: dict = {}
    exec(NET, namespace)
    torch.save(namespace["Net"](num_classes=10).state_dict(), tmp_path / "model.pth")
    for step in steps:
        done = subprocess.run([sys.executable, "-m", "kb", *step[1:]], cwd=tmp_path, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, f"{shlex.join(step)}: {done.stdout}{done.stderr}"
    assert done.stdout.startswith("match"), done.stdout
