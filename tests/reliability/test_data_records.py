"""A malformed record in data/** JSON Lines stops the build with its file and line."""
from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import KBDATA
from tests.reliability.conftest import msmap, one_line_error

GOOD_CHECK = {"subject": "torch.nn.Linear", "result": "pass", "ms_version": "2.10.0", "kind": "claim:exists"}


@pytest.mark.parametrize("bad,problem", [
    ("[1, 2]", "JSON object"),
    (json.dumps({"result": "pass", "ms_version": "2.10.0"}), "'subject': missing"),
    (json.dumps({**GOOD_CHECK, "result": 3}), "'result': must be a string"),
    ('{"subject": ', "invalid JSON"),
])
def test_a_malformed_check_record_names_file_and_line(env, tmp_path, bad, problem):
    data = tmp_path / "data"
    shutil.copytree(KBDATA, data)
    (data / "checks").mkdir()
    path = data / "checks" / "mindspore-2.10.0.jsonl"
    path.write_text(json.dumps(GOOD_CHECK) + "\n\n" + bad + "\n")
    done = msmap({**env, "MSMAP_DATA": str(data)}, "build", "--db", str(tmp_path / "new.sqlite"))
    one_line_error(done, 3, f"{path}:3", problem)


def test_a_malformed_probe_record_names_file_and_line(env, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(KBDATA, data)
    (data / "probes").mkdir()
    path = data / "probes" / "results-mindspore-2.10.0-cpu.jsonl"
    path.write_text(json.dumps({"torch": "torch.nn.Linear", "result": "holds", "ms_version": "2.10.0"}) + "\n")
    done = msmap({**env, "MSMAP_DATA": str(data)}, "build", "--db", str(tmp_path / "new.sqlite"))
    one_line_error(done, 3, f"{path}:1", "'ms_api': missing")
