"""msmap derive: signature comparison, candidates, version ranges, committed files."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kb.derive import compare_params, derive, normalise_default, write_derived
from kb.introspect.describe import format_signature
from kb.introspect.snapfile import find, load
from kb.model import DerivedMapping

DATA = Path(__file__).resolve().parents[1] / "data"
REQ = None  # a required parameter has no default text


def api(namespace: str, *params, kind: str = "function", signature: bool = True) -> dict:
    """A snapshot entry; each param is (name, default) or (name, default, inspect kind)."""
    rows = [[p[0], p[2] if len(p) == 3 else "POSITIONAL_OR_KEYWORD", p[1]] for p in params]
    return {
        "kind": kind, "namespace": namespace, "params": rows if signature else [],
        "signature": format_signature(rows) if signature else None,
        "sig_source": "inspect" if signature else "none",
    }


def snap(framework: str, version: str, apis: dict) -> dict:
    return {"framework": framework, "version": version, "apis": apis}


def by_family(mapping: dict) -> dict:
    return {t["family"]: t for t in mapping["targets"]}


# ------------------------------------------------------------ compare_params
def test_positional_rename_is_detected():
    relation, params = compare_params(
        api("torch", ("input", REQ), ("dim", REQ)), api("mindspore.ops", ("x", REQ), ("axis", REQ))
    )
    assert relation == "param_names_differ"
    assert [(p["torch"], p["ms"], p["kind"]) for p in params] == [
        ("input", "x", "renamed"), ("dim", "axis", "renamed"),
    ]


def test_defaults_differ_but_equal_literals_do_not():
    relation, params = compare_params(
        api("torch", ("input", REQ), ("dim", "0"), ("eps", "1e-05")),
        api("mindspore.ops", ("input", REQ), ("dim", "1"), ("eps", "1e-5")),
    )
    assert relation == "defaults_differ"
    assert params[1]["torch_default"] == "0" and params[1]["ms_default"] == "1"
    assert params[1]["note"] == "default differs"
    assert params[2]["note"] is None  # 1e-05 == 1e-5
    same, _ = compare_params(api("torch", ("k", "(1, 1)"), ("p", "1")), api("x", ("k", "[1, 1]"), ("p", "1.0")))
    assert same == "consistent"


def test_dtype_defaults_compare_across_frameworks():
    assert normalise_default("torch.float32") == normalise_default("mindspore.float32")
    assert normalise_default("torch.float") == normalise_default("mstype.float32")
    assert normalise_default("True") != normalise_default("1")


def test_torch_only_params_are_unsupported_or_dropped():
    relation, params = compare_params(
        api("torch", ("input", REQ), ("alpha", "1", ), ("out", "None", "KEYWORD_ONLY")),
        api("mindspore.ops", ("input", REQ)),
    )
    assert relation == "torch_more_params"
    kinds = {p["torch"]: p["kind"] for p in params}
    assert kinds == {"input": "same", "alpha": "unsupported", "out": "unsupported"}
    assert "new tensor" in params[2]["note"]
    relation, params = compare_params(
        api("torch", ("size", REQ), ("device", "None", "KEYWORD_ONLY")), api("mindspore.ops", ("size", REQ))
    )
    assert relation == "consistent" and params[1]["kind"] == "dropped"


def test_optional_device_is_dropped_even_where_mindspore_has_one():
    relation, params = compare_params(
        api("torch", ("size", REQ), ("device", "None", "KEYWORD_ONLY")),
        api("mindspore.mint", ("size", REQ), ("device", "None", "KEYWORD_ONLY")),
    )
    assert relation == "consistent"
    assert [(p["torch"], p["ms"], p["kind"]) for p in params] == [("size", "size", "same"), ("device", None, "dropped")]
    assert "'CPU'" in params[1]["note"]  # MindSpore's device= takes its own names only
    _, params = compare_params(  # a required torch device (Module.to_empty) is passed on
        api("torch", ("device", REQ, "KEYWORD_ONLY")), api("mindspore.nn", ("device", "None")),
    )
    assert [(p["torch"], p["ms"], p["kind"]) for p in params] == [("device", "device", "same")]


def test_known_torch_only_param_is_not_taken_for_a_rename():
    _, params = compare_params(
        api("torch", ("n", REQ), ("device", "None")), api("mindspore.nn", ("n", REQ), ("weight_init", "None"))
    )
    assert [(p["torch"], p["ms"], p["kind"]) for p in params] == [
        ("n", "n", "same"), ("device", None, "dropped"), (None, "weight_init", "added"),
    ]


def test_rename_outranks_more_params_and_reorders_count_as_renames():
    relation, _ = compare_params(
        api("torch", ("input", REQ), ("other", "2")), api("ms", ("x", REQ))
    )
    assert relation == "param_names_differ"
    relation, params = compare_params(  # nn.Dropout: p moved behind keep_prob
        api("torch.nn", ("p", "0.5"), ("inplace", "False"), kind="class"),
        api("mindspore.nn", ("keep_prob", "0.5"), ("p", "None"), kind="class"),
    )
    assert relation == "param_names_differ"
    assert "another position" in params[0]["note"]
    assert params[-1] == {"torch": None, "ms": "keep_prob", "kind": "added", "torch_default": None,
                          "ms_default": "0.5", "transform": None, "note": None}


def test_required_mindspore_only_param_and_variadic_mismatch():
    relation, params = compare_params(api("torch", ("x", REQ)), api("ms", ("x", REQ), ("axis", REQ)))
    assert relation == "param_names_differ" and params[-1]["note"] == "required in MindSpore"
    relation, params = compare_params(
        api("torch", ("size", REQ, "VAR_POSITIONAL")), api("ms", ("size", REQ))
    )
    assert "variadic" in params[0]["note"]


def test_missing_signature_compares_nothing():
    assert compare_params(api("torch", signature=False), api("ms", ("x", REQ))) == ("consistent", [])


# ------------------------------------------------------------ derive
TORCH = snap("torch", "2.13.0", {
    "torch.add": api("torch", ("input", REQ), ("other", REQ)),
    "torch.float32": api("torch", kind="dtype", signature=False),
    "torch.frobnicate": api("torch", ("input", REQ)),
    "torch.load": api("torch", ("f", REQ)),
    "torch.nn.functional.gelu": api("torch.nn.functional", ("input", REQ)),
    "torch.Tensor.size": api("torch.Tensor", ("dim", "None"), kind="method", signature=False),
    "torch.Tensor.shape": api("torch.Tensor", kind="attribute", signature=False),
})
MS_OLD = snap("mindspore", "2.7.0", {
    "mindspore.ops.add": api("mindspore.ops", ("input", REQ), ("other", REQ)),
    "mindspore.float32": api("mindspore", kind="dtype", signature=False),
    "mindspore.ops.gelu": api("mindspore.ops", ("x", REQ)),
})
MS_NEW = snap("mindspore", "2.10.0", {
    **MS_OLD["apis"],
    "mindspore.mint.add": api("mindspore.mint", ("input", REQ), ("other", REQ)),
    "mindspore.load": api("mindspore", ("file_name", REQ)),
    "mindspore.Tensor.size": api("mindspore.Tensor", kind="attribute", signature=False),
    "mindspore.Tensor.shape": api("mindspore.Tensor", kind="attribute", signature=False),
})


@pytest.fixture(scope="module")
def derived() -> dict[str, dict]:
    out = derive(TORCH, [MS_NEW, MS_OLD])  # order of snapshots must not matter
    return {m["torch"]: m for rows in out.values() for m in rows}


def test_every_mapping_validates_and_names_its_bucket(derived):
    assert set(derived) == set(TORCH["apis"])
    for name, mapping in derived.items():
        DerivedMapping.model_validate(mapping)
        assert mapping["namespace"] == TORCH["apis"][name]["namespace"]
        assert mapping["kind"] == TORCH["apis"][name]["kind"]
        assert sorted(t["family"] for t in mapping["targets"]) == ["classic", "mint"]
        for target in mapping["targets"]:
            assert target["provenance"] == [
                {"kind": "introspection", "ref": "mindspore 2.10.0; torch 2.13.0", "note": None}]


def test_candidates_follow_the_correspondence_table(derived):
    add = by_family(derived["torch.add"])
    assert add["classic"]["api"] == "mindspore.ops.add" and add["classic"]["relation"] == "consistent"
    assert add["mint"]["api"] == "mindspore.mint.add" and add["mint"]["auto"] is True
    gelu = by_family(derived["torch.nn.functional.gelu"])
    assert gelu["classic"]["api"] == "mindspore.ops.gelu"
    assert gelu["classic"]["relation"] == "param_names_differ"
    dtype = by_family(derived["torch.float32"])
    assert dtype["mint"]["api"] == dtype["classic"]["api"] == "mindspore.float32"
    assert derived["torch.float32"]["advice"] is None


def test_version_range_comes_from_snapshot_differences(derived):
    add = by_family(derived["torch.add"])
    assert add["classic"]["ms_versions"] == {"since": None, "until": None}  # in the oldest snapshot
    assert add["mint"]["ms_versions"] == {"since": "2.10.0", "until": None}


def test_no_equivalent_gets_one_target_per_family_and_advice(derived):
    mapping = derived["torch.frobnicate"]
    assert [t["relation"] for t in mapping["targets"]] == ["no_equivalent", "no_equivalent"]
    assert all(t["api"] is None and t["auto"] is False for t in mapping["targets"])
    assert "msmap search frobnicate" in mapping["advice"]
    gelu = by_family(derived["torch.nn.functional.gelu"])
    assert gelu["mint"]["relation"] == "no_equivalent"
    assert "mindspore.ops.gelu" in gelu["mint"]["note"]  # points at the other family


def test_false_friends_and_kind_mismatches_are_not_candidates(derived):
    assert all(t["api"] is None for t in derived["torch.load"]["targets"])
    # torch.Tensor.size is a method; MindSpore's Tensor.size is an attribute
    assert all(t["api"] is None for t in derived["torch.Tensor.size"]["targets"])
    shape = by_family(derived["torch.Tensor.shape"])["classic"]
    assert shape["api"] == "mindspore.Tensor.shape" and shape["auto"] is True


def test_unknown_signature_is_consistent_with_a_note():
    torch = snap("torch", "2.13.0", {"torch.cat": api("torch", signature=False)})
    ms = snap("mindspore", "2.10.0", {"mindspore.ops.cat": api("mindspore.ops", ("tensors", REQ))})
    target = by_family(derive(torch, [ms])["torch"][0])["classic"]
    assert target["relation"] == "consistent" and target["auto"] is False
    assert "could not be compared" in target["note"]


def test_output_is_deterministic_and_stale_files_go(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    (second).mkdir()
    (second / "torch.gone.jsonl").write_text("{}\n")
    write_derived(derive(TORCH, [MS_OLD, MS_NEW]), first)
    write_derived(derive(TORCH, [MS_NEW, MS_OLD]), second)
    names = sorted(p.name for p in first.iterdir())
    assert names == sorted(p.name for p in second.iterdir())
    assert names == ["torch.Tensor.jsonl", "torch.jsonl", "torch.nn.functional.jsonl"]
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes()
    lines = (first / "torch.jsonl").read_text().splitlines()
    assert [json.loads(line)["torch"] for line in lines] == sorted(json.loads(line)["torch"] for line in lines)


# ------------------------------------------------------------ committed data
def test_committed_derived_files_cover_the_torch_snapshot_exactly():
    torch_snap = load(find(DATA / "snapshots", "torch")[-1])
    seen: dict[str, str] = {}
    for path in sorted((DATA / "derived").glob("*.jsonl")):
        names = []
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            assert row["torch"] not in seen, f"{row['torch']} in {path.name} and {seen.get(row['torch'])}"
            seen[row["torch"]] = path.name
            assert path.name == f"{row['namespace']}.jsonl"
            names.append(row["torch"])
        assert names == sorted(names), path.name
    assert set(seen) == set(torch_snap["apis"])


def test_committed_derived_files_are_what_derive_writes_now(tmp_path):
    snaps = DATA / "snapshots"
    derived = derive(load(find(snaps, "torch")[-1]), [load(p) for p in find(snaps, "mindspore")])
    write_derived(derived, tmp_path)
    committed = sorted(p.name for p in (DATA / "derived").glob("*.jsonl"))
    assert committed == sorted(p.name for p in tmp_path.iterdir())
    for name in committed:
        assert (DATA / "derived" / name).read_bytes() == (tmp_path / name).read_bytes(), name


def test_other_files_in_the_out_dir_are_kept(tmp_path):
    (tmp_path / "notes.jsonl").write_text('{"mine": true}\n')
    write_derived(derive(TORCH, [MS_OLD, MS_NEW]), tmp_path)
    assert (tmp_path / "notes.jsonl").read_text() == '{"mine": true}\n'
