"""Building a user's model from FILE.py:EXPR: packages, relative imports, and where failures are."""
from __future__ import annotations

from pathlib import Path

import pytest

from kb.errors import MsmapError
from kb.weights.usercode import UserCodeError, build, parse_target, run_stage


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def package(base: Path, value: int) -> Path:
    write(base / "pkg" / "__init__.py", "")
    write(base / "pkg" / "consts.py", f"VALUE = {value}\n")
    return write(base / "pkg" / "model.py", "from .consts import VALUE\n\n\ndef make(k):\n    return VALUE * k\n")


def test_parse_target(tmp_path):
    f = write(tmp_path / "net.py", "X = 1\n")
    assert parse_target(f"{f}:Net(num_classes=10, name='a:b')") == (f.resolve(), "Net(num_classes=10, name='a:b')")
    for bad, why in ((f"{f}", "expected FILE.py:EXPRESSION"), (f"{f}:", "expected FILE.py:EXPRESSION"),
                     (f"{tmp_path / 'no.py'}:X", "no such file"), (f"{f}:Net(", "not valid Python")):
        with pytest.raises(MsmapError, match=why):
            parse_target(bad)


def test_relative_imports_and_same_named_packages_from_two_folders(tmp_path):
    first = package(tmp_path / "torch_side", 3)
    second = package(tmp_path / "ms_side", 5)
    assert build(first, "make(2)") == 6
    assert build(second, "make(2)") == 10  # not the first folder's package, already imported
    assert build(first, "make(1)") == 3


def test_failures_name_stage_and_the_users_line(tmp_path):
    broken = write(tmp_path / "broken.py", "import math\n\nx = (\n")
    with pytest.raises(UserCodeError) as err:
        build(broken, "x")
    assert err.value.stage == "import" and err.value.where == f"{broken}:3"
    net = write(tmp_path / "net.py", "class Net:\n    def __init__(self, n):\n        self.n = 1 / n\n\n"
                                     "    def __call__(self, x):\n        return x[self.n]\n")
    with pytest.raises(UserCodeError) as err:
        build(net, "Net(0)")
    assert (err.value.stage, err.value.where) == ("build", f"{net}:3")
    assert str(err.value) == f"{net}:3: build: ZeroDivisionError: division by zero"
    with pytest.raises(UserCodeError) as err:
        run_stage("forward", net, build(net, "Net(1)"), [])
    assert (err.value.stage, err.value.where) == ("forward", f"{net}:6")
    with pytest.raises(UserCodeError, match="NameError: name 'Nett' is not defined") as err:
        build(net, "Nett(1)")
    assert err.value.where == "" and str(err.value).startswith(f"{net}: build:")


def test_missing_framework_is_named():
    from kb.weights.usercode import require

    require("json")
    with pytest.raises(MsmapError, match="needs no_such_framework_xyz installed"):
        require("json", "no_such_framework_xyz")
