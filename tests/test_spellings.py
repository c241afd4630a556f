"""Every spelling resolves (issue 26, item 6): implementation paths and re-exports from the installed
torch's object identities, members of known classes and enums, dunders; generated into the torch
snapshot (kb/introspect/spellings.py) and answered without torch (kb/spellings.py)."""
from __future__ import annotations

import importlib
import json
import random
import sqlite3
from pathlib import Path

import pytest

from kb.spellings import Spellings, tables

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = ROOT / "data" / "snapshots" / "torch-2.13.0.json"

FAKE = {"framework": "torch", "version": "9", "apis": {},
        "object_members": ["__init__", "__repr__"],
        "spellings": {"torch.nn.modules.linear.Linear": ["torch.nn.Linear", "torch.nn.modules.Linear"],
                      "torch.nn.modules.module.Module": ["torch.nn.Module"],
                      "torch._C._Backend": ["torch.backends.Backend", "torch.nn.attention.Backend"],
                      "torch.cuda.random.manual_seed": ["torch.cuda.manual_seed"],
                      "torch._private.helper": ["torch._other.helper"]},
        "members": {"torch.nn.modules.linear.Linear": {"method": ["forward"],
                                                       "mro": ["torch.nn.modules.module.Module"]},
                    "torch.nn.modules.module.Module": {"method": ["forward", "state_dict", "cuda"]},
                    "torch._C._Backend": {"enum member": ["MATH"], "property": ["name"]}}}
RECORDS = {"torch.nn.Linear", "torch.nn.Module", "torch.nn.Module.state_dict", "torch.nn.attention.Backend",
           "torch.manual_seed"}


@pytest.fixture
def spelled(tmp_path):
    rows, classes = tables([FAKE], RECORDS)
    conn = sqlite3.connect(tmp_path / "s.sqlite")
    conn.execute("CREATE TABLE spellings (name TEXT PRIMARY KEY, canonical TEXT, identity TEXT)")
    conn.execute("CREATE TABLE classes (identity TEXT PRIMARY KEY, members TEXT, mro TEXT)")
    conn.executemany("INSERT INTO spellings VALUES (:name, :canonical, :identity)", rows)
    conn.executemany("INSERT INTO classes VALUES (:identity, :members, :mro)", classes)
    return Spellings(conn)


@pytest.mark.parametrize("name, canonical", [
    ("torch.nn.modules.linear.Linear", "torch.nn.Linear"), ("torch.nn.modules.Linear", "torch.nn.Linear"),
    ("torch.backends.Backend", "torch.nn.attention.Backend"), ("torch._C._Backend", "torch.nn.attention.Backend"),
])
def test_another_spelling_of_a_known_object_answers_with_its_record(spelled, name, canonical):
    assert spelled.canonical(name) == canonical


@pytest.mark.parametrize("name", ["torch.nn.Linear",  # the record itself
                                  "torch.cuda.manual_seed",  # another object with the same leaf: not torch.manual_seed
                                  "torch._other.helper",  # a group without a record
                                  "torch.nn.modules.conv.Conv2d"])  # not in the table
def test_a_name_that_is_no_other_spelling_of_a_record_stays(spelled, name):
    assert spelled.canonical(name) is None


@pytest.mark.parametrize("name, answer, note", [
    ("torch.nn.attention.Backend.MATH", "torch.nn.attention.Backend", "MATH: enum member of torch.nn.attention"),
    ("torch.backends.Backend.name", "torch.nn.attention.Backend", "name: property of"),
    ("torch.nn.modules.linear.Linear.forward", "torch.nn.Linear", "forward: method of torch.nn.Linear;"),
    ("torch.nn.Linear.state_dict", "torch.nn.Module.state_dict", "state_dict: method torch.nn.Linear inherits"),
    ("torch.nn.Linear.cuda", "torch.nn.Linear", "(inherited from torch.nn.Module)"),
    ("torch.nn.Linear.__repr__", "torch.nn.Linear", "__repr__: special method of torch.nn.Linear (inherited from obj"),
])
def test_a_member_of_a_known_class_answers_with_a_note(spelled, name, answer, note):
    found = spelled.member(name, RECORDS)
    assert found is not None and found[0] == answer and note in found[1], found


@pytest.mark.parametrize("name", ["torch.nn.Linear.bogus", "torch.nn.Linear.__bogus__", "torch.cuda.manual_seed.x",
                                  "torch.nn.Linear", "Linear"])
def test_no_member_is_made_up(spelled, name):
    assert spelled.member(name, RECORDS) is None


def test_a_database_without_the_tables_answers_nothing():
    empty = Spellings(sqlite3.connect(":memory:"))
    assert empty.canonical("torch.nn.modules.linear.Linear") is None
    assert empty.member("torch.nn.Linear.x", set()) is None


# -- the generated table against the installed torch ------------------------------------------------
def _readings(name: str) -> list:
    """What ``name`` can be: an attribute chain from the root (a package's attribute first: the function
    ``torch.ao.quantization.fuse_modules``), and the longest importable module plus attributes."""
    found = []
    parts = name.split(".")
    try:
        value = importlib.import_module(parts[0])
        for index, part in enumerate(parts[1:], 2):
            value = getattr(value, part) if hasattr(value, part) else importlib.import_module(".".join(parts[:index]))
        found.append(value)
    except (ImportError, AttributeError):
        pass
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
            for part in parts[cut:]:
                value = getattr(value, part)
        except (ImportError, AttributeError):
            continue
        found.append(value)
        break
    return found


def _find(name: str):
    readings = _readings(name)
    assert readings, f"{name} is nothing in the installed torch"
    return readings[0]


def _same(a: str, b: str) -> bool:
    return any(x is y for x in _readings(a) for y in _readings(b))


def _has(cls: type, name: str) -> bool:
    """A member defined on the class or a base (a descriptor may refuse to be read on the class)."""
    return any(name in vars(klass) for klass in cls.__mro__) or hasattr(cls, name)


@pytest.fixture(scope="module")
def snapshot():
    return json.loads(SNAPSHOT.read_text())


def test_a_sample_of_spellings_is_one_object_in_the_installed_torch(snapshot):
    torch = pytest.importorskip("torch")
    if torch.__version__.split("+")[0] != snapshot["version"]:
        pytest.skip(f"torch {torch.__version__} is not the snapshot's {snapshot['version']}")
    groups = sorted(snapshot["spellings"].items())
    sample = random.Random(26).sample(groups, 120) + [
        (k, v) for k, v in groups if k in ("torch.nn.modules.linear.Linear", "torch.autograd.profiler.record_function",
                                           "torch.distributed.fsdp.api.StateDictType")]
    for identity, others in sample:
        for other in others:
            assert _same(identity, other), (identity, other)


def test_a_sample_of_class_members_exists_in_the_installed_torch(snapshot):
    torch = pytest.importorskip("torch")
    if torch.__version__.split("+")[0] != snapshot["version"]:
        pytest.skip("another torch")
    members = snapshot["members"]
    sample = random.Random(6).sample(sorted(members), 60) + ["torch.distributed.fsdp.api.StateDictType"]
    for identity in sample:
        cls = _find(identity)
        for kind, names in members[identity].items():
            if kind == "mro":
                assert all(issubclass(cls, _find(base)) for base in names), identity
                continue
            for name in names:
                assert _has(cls, name), (identity, name)
                if kind == "enum member":
                    assert name in cls.__members__, (identity, name)


def test_every_public_class_of_torch_nn_is_in_the_table(snapshot):
    """No hand list: each class torch.nn exports is found under its implementation path too."""
    torch = pytest.importorskip("torch")
    if torch.__version__.split("+")[0] != snapshot["version"]:
        pytest.skip("another torch")
    spelled = {name for identity, others in snapshot["spellings"].items() for name in [identity, *others]}
    for name, obj in vars(torch.nn).items():
        if not name.startswith("_") and isinstance(obj, type) and obj.__module__.startswith("torch.nn.modules."):
            assert f"torch.nn.{name}" in spelled and f"{obj.__module__}.{obj.__qualname__}" in spelled, name


# -- the bundled knowledge base ---------------------------------------------------------------------
@pytest.mark.parametrize("query, answer", [
    ("torch.nn.modules.linear.Linear", "torch.nn.Linear"),
    ("torch.nn.attention.SDPBackend.MATH", "torch.nn.attention.SDPBackend"),
    ("torch.distributed.fsdp.StateDictType.FULL_STATE_DICT", "torch.distributed.fsdp.StateDictType"),
    ("torch.distributed.fsdp.FullyShardedDataParallel.state_dict", "torch.nn.Module.state_dict"),
    ("torch.autograd.profiler.record_function.__enter__", "torch.autograd.profiler.record_function"),
])
def test_lookup_resolves_the_spellings_the_issue_names(real_kb, query, answer):
    assert real_kb.resolve(query) == answer
    assert real_kb.explain(query)


@pytest.mark.parametrize("query", ["torch.nn.Linear", "torch.cuda.manual_seed"])
def test_a_known_name_resolves_to_itself_without_a_note(real_kb, query):
    assert real_kb.resolve(query) == query and real_kb.explain(query) is None


def test_the_engine_reads_an_implementation_path_as_its_public_name(real_kb):
    from kb.analysis.catalog import Catalog

    catalog = Catalog(real_kb)
    record = catalog.lookup("torch.distributed.checkpoint.state_dict.FSDP")
    assert record is not None and record["torch"] == "torch.distributed.fsdp.FullyShardedDataParallel"
    assert catalog.lookup("torch.cuda.random.manual_seed")["torch"] == "torch.cuda.random.manual_seed"  # a record
