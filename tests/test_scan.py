"""msmap scan: project walks, per-file errors, report formats (SARIF 2.1.0 structure), exit codes."""
from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest

from kb.cli import main

MODEL = (
    "import torch\nimport torch.nn as nn\n\nclass Net(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n    def forward(self, x):\n"
    "        return self.fc(x).view(-1)\n\nwith torch.no_grad():\n    y = torch.cat([a, b], dim=0)\n"
    "scripted = torch.jit.script(Net())\n"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "model.py").write_text(MODEL)
    (root / "pkg" / "plain.py").write_text("print('no framework here')\n")
    (root / "pkg" / "notes.txt").write_text("torch.nn.Linear\n")
    for skipped in (".hidden", "venv", ".venv", "__pycache__", "lib/site-packages", "env"):
        (root / skipped).mkdir(parents=True)
        (root / skipped / "skipped.py").write_text(MODEL)
    (root / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    (root / "build").mkdir()
    (root / "build" / "generated.py").write_text(MODEL)
    return root


def scan(capsys, kb_path, *args: str) -> tuple[int, str, str]:
    code = main(["scan", "--db", str(kb_path), *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def db(real_kb) -> Path:
    return real_kb.path


def test_table(capsys, db, project):
    code, out, err = scan(capsys, db, str(project), "--exclude", "build")
    assert code == 0 and err == ""
    assert "torch.nn.Linear" in out and "pkg/model.py" in out and "skipped.py" not in out
    assert "generated.py" not in out
    assert "call sites that convert automatically:" in out
    assert "2 files" in out  # model.py and plain.py; the skipped directories are not walked


def test_json_counts(capsys, db, project):
    code, out, _ = scan(capsys, db, str(project), "--format", "json", "--exclude", "build")
    data = json.loads(out)
    (model,) = [f for f in data["files"] if f["path"].endswith("model.py")]
    categories = [u["category"] for u in model["uses"]]
    assert sum(data["summary"]["totals"].values()) == len(categories)
    assert "guess" in categories and "direct" in categories  # x.view(...); torch.no_grad() is removed
    assert data["summary"]["call_sites"] == len([c for c in categories if c != "guess"])
    share = data["summary"]["automatic_share"]
    assert 0 < share < 1
    assert data["apis"]["torch.nn.Linear"]
    first = model["uses"][0]
    assert {"torch", "kind", "category", "line", "column", "target", "reason"} <= set(first)


def test_no_guesses_and_family(capsys, db, project):
    _, out, _ = scan(capsys, db, str(project / "pkg"), "--format", "json", "--no-guesses", "--family", "mint")
    uses = [u for f in json.loads(out)["files"] for u in f["uses"]]
    assert all(u["category"] != "guess" for u in uses)
    assert any((u["target"] or "").startswith("mindspore.mint.") for u in uses)


def test_csv(capsys, db, project):
    _, out, _ = scan(capsys, db, str(project / "pkg"), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows and set(rows[0]) == {"file", "line", "column", "torch", "kind", "category", "target", "reason",
                                     "error"}
    assert any(r["torch"] == "torch.nn.Linear" and r["line"] == "7" for r in rows)


def test_sarif_structure(capsys, db, project, tmp_path):
    bad = project / "pkg" / "latin1.py"
    bad.write_bytes(b"# caf\xe9\nimport torch\n")
    code, out, _ = scan(capsys, db, str(project / "pkg"), "--format", "sarif")
    assert code == 1
    sarif = json.loads(out)
    assert sarif["version"] == "2.1.0" and sarif["$schema"].endswith("sarif-2.1.0.json")
    (run,) = sarif["runs"]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert run["tool"]["driver"]["name"] == "msmap" and len(set(ids)) == len(ids) == 5
    for rule in rules:
        assert rule["shortDescription"]["text"] and rule["defaultConfiguration"]["level"] in ("note", "warning",
                                                                                               "error")
    assert run["results"]
    for result in run["results"]:
        assert result["ruleId"] in ids and ids[result["ruleIndex"]] == result["ruleId"]
        assert result["level"] in ("none", "note", "warning", "error") and result["message"]["text"]
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        assert physical["artifactLocation"]["uri"].endswith(".py")
        region = physical["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        assert (region["endLine"], region["endColumn"]) >= (region["startLine"], region["startColumn"])
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is False
    assert any("latin1.py" in n["message"]["text"] for n in invocation["toolExecutionNotifications"])


def test_sarif_columns_are_one_based_utf16(capsys, db, tmp_path):
    path = tmp_path / "u.py"
    path.write_text("import torch\ns = '😀'; x = torch.cat(a)\n", encoding="utf-8")
    _, out, _ = scan(capsys, db, str(path), "--format", "sarif")
    (result,) = json.loads(out)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 2
    assert result["locations"][0]["physicalLocation"]["region"]["startColumn"] == 15  # emoji = 2 units


@pytest.mark.parametrize("make, message", [
    pytest.param(lambda p: p.write_bytes(b"x = '\xff'\nimport torch\n"), "not UTF-8", id="not-utf8"),
    pytest.param(lambda p: p.write_bytes(b"import torch\x00\x01\x02"), "binary", id="binary"),
    pytest.param(lambda p: p.symlink_to(p.parent / "missing.py"), "no such file", id="dangling-symlink"),
    pytest.param(lambda p: (p.symlink_to(p.parent / "loop_b.py"), (p.parent / "loop_b.py").symlink_to(p)),
                 "cannot read", id="symlink-loop"),
    pytest.param(lambda p: p.mkdir(), "is a directory", id="directory-named-py"),
])
def test_bad_files_are_reported_and_the_scan_goes_on(capsys, db, tmp_path, make, message):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "good.py").write_text(MODEL)
    make(root / "bad.py")
    code, out, _ = scan(capsys, db, str(root), "--format", "json")
    data = json.loads(out)
    errors = {Path(f["path"]).name: f["error"] for f in data["files"] if f["error"]}
    assert code == 1 and message in errors["bad.py"]
    assert any(f["uses"] for f in data["files"] if f["path"].endswith("good.py"))


def test_directory_symlink_loop_is_not_followed(capsys, db, tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "m.py").write_text(MODEL)
    os.symlink(root, root / "loop")
    code, out, _ = scan(capsys, db, str(root), "--format", "json")
    assert code == 0 and len(json.loads(out)["files"]) == 1


def test_bom_is_accepted(capsys, db, tmp_path):
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbf" + MODEL.encode())
    code, out, _ = scan(capsys, db, str(path), "--format", "json")
    (entry,) = json.loads(out)["files"]
    assert code == 0 and entry["uses"][0]["line"] == 4  # class Net(nn.Module) on line 4


@pytest.mark.parametrize("args", [
    pytest.param(["does-not-exist.py"], id="missing-path"),
    pytest.param(["--format", "xml", "."], id="bad-format"),
    pytest.param(["--ms-version", "latest", "."], id="bad-version"),
    pytest.param([], id="no-path"),
])
def test_bad_usage_exits_2(capsys, db, args):
    with pytest.raises(SystemExit) as exc:
        raise SystemExit(scan(capsys, db, *args)[0])
    assert exc.value.code == 2


def test_parallel_equals_serial(capsys, db, tmp_path):
    root = tmp_path / "many"
    root.mkdir()
    for index in range(24):
        (root / f"m{index:02d}.py").write_text(MODEL if index % 3 else "x = 1\n")
    _, serial, _ = scan(capsys, db, str(root), "--format", "json", "--jobs", "1")
    _, parallel, _ = scan(capsys, db, str(root), "--format", "json", "--jobs", "2")
    assert json.loads(serial) == json.loads(parallel)


def test_no_progress_bar_when_stderr_is_not_a_terminal(capsys, db, project):
    _, _, err = scan(capsys, db, str(project))
    assert "scanning" not in err


def test_a_report_crosses_processes_unchanged(db, tmp_path):
    import pickle

    from kb.analysis import project
    from kb.analysis.settings import EngineSettings

    path = tmp_path / "model.py"
    path.write_text(MODEL)
    project._init_worker(db, EngineSettings())
    report = project.scan_file(project._ENGINE, path)
    assert len(report.uses) > 3
    back = pickle.loads(pickle.dumps(report))
    assert back == report
    assert [list(row) for row in back.uses] == [list(project.USE_FIELDS)] * len(report.uses)


def test_progress_counts_up_to_every_file(db, tmp_path):
    from kb.analysis import project
    from kb.analysis.settings import EngineSettings

    files = []
    for index in range(30):
        path = tmp_path / f"m{index:02d}.py"
        path.write_text(MODEL)
        files.append(path)
    seen: list[tuple[int, int]] = []
    reports = project.scan_files(files, db, EngineSettings(), jobs=2, progress=lambda done, total: seen.append((done, total)))
    assert [r.path for r in reports] == [str(f) for f in files] and all(r.uses and not r.error for r in reports)
    assert seen[-1] == (30, 30) and all(total == 30 for _, total in seen)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


def test_a_worker_that_dies_costs_its_files_not_the_scan(db, tmp_path, monkeypatch):
    from kb.analysis import project
    from kb.analysis.settings import EngineSettings

    files = []
    for index in range(40):
        path = tmp_path / f"m{index:02d}.py"
        path.write_text(MODEL)
        files.append(path)
    (tmp_path / "m07.py").write_text(MODEL + "# boom\n")
    real = project._scan_one

    def fragile(name):  # runs in the forked workers: one file kills its worker outright
        if name.endswith("m07.py"):
            os._exit(3)
        return real(name)

    monkeypatch.setattr(project, "_scan_one", fragile)
    reports = project.scan_files(files, db, EngineSettings(), jobs=2)
    assert [r.path for r in reports] == [str(f) for f in files]
    lost = [r for r in reports if r.error]
    assert reports[7] in lost and all("stopped unexpectedly" in r.error for r in lost)
    assert all(r.uses for r in reports if not r.error) and len(lost) < len(files)


def test_workers_that_cannot_start_say_why_for_every_file(tmp_path):
    from kb.analysis import project
    from kb.analysis.settings import EngineSettings

    files = []
    for index in range(12):
        path = tmp_path / f"m{index:02d}.py"
        path.write_text(MODEL)
        files.append(path)
    broken = tmp_path / "broken.sqlite"
    broken.write_text("not a database")
    reports = project.scan_files(files, broken, EngineSettings(), jobs=2)
    assert [r.path for r in reports] == [str(f) for f in files]
    assert all(r.error and r.error.startswith("not scanned: the scan worker could not start: ") for r in reports)
    assert "not a usable msmap database" in reports[0].error
