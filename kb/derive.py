"""Derived candidate mappings: a pure function of the signature snapshots.

``derive(torch_snapshot, mindspore_snapshots)`` gives every torch API in the
torch snapshot exactly one mapping (plain dicts shaped like
``kb.model.DerivedMapping``), grouped by the torch namespace bucket.

Candidates come from ``CORRESPONDENCE``: a torch namespace maps, per target
family, to MindSpore namespaces tried in order; the first one holding the same
name with a compatible kind (callable for callable, dtype for dtype,
attribute for attribute) in the newest MindSpore snapshot becomes the target.
``FALSE_FRIENDS`` lists same-named pairs that mean something else; they are
never emitted (curated data covers them).  A family without a candidate gets
one ``no_equivalent`` target.

``compare_params`` turns two snapshot entries into a relation and a parameter
table (documented on the function); the build step reuses it for curated
targets.  Dtypes and attributes have no signature: they map by name alone
(``consistent``, ``auto`` true).  Callables lacking a signature on either side
get ``consistent`` with a note saying nothing was compared, and ``auto`` false.

``ms_versions.since`` is the first snapshotted MindSpore version of the run
of snapshots, ending at the newest, that contains the target (``None`` when
the oldest snapshot has it already); ``until`` stays ``None`` because only
APIs present in the newest snapshot are emitted.
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from kb.versions import version_key

FAMILIES = ("classic", "mint")

# torch namespace -> family -> MindSpore namespaces, most preferred first.
CORRESPONDENCE: dict[str, dict[str, tuple[str, ...]]] = {
    "torch": {"classic": ("mindspore.ops", "mindspore"), "mint": ("mindspore.mint", "mindspore")},
    "torch.Tensor": {"classic": ("mindspore.Tensor",), "mint": ("mindspore.Tensor",)},
    "torch.nn": {"classic": ("mindspore.nn",), "mint": ("mindspore.mint.nn",)},
    "torch.nn.functional": {"classic": ("mindspore.ops",), "mint": ("mindspore.mint.nn.functional",)},
    "torch.nn.init": {"classic": (), "mint": ("mindspore.mint.nn.init",)},
    "torch.nn.Module": {"classic": ("mindspore.nn.Cell",), "mint": ("mindspore.nn.Cell",)},
    "torch.optim": {"classic": ("mindspore.nn",),
                    "mint": ("mindspore.mint.optim", "mindspore.experimental.optim")},
    "torch.optim.Optimizer": {"classic": ("mindspore.experimental.optim.Optimizer",),
                              "mint": ("mindspore.experimental.optim.Optimizer",)},
    "torch.optim.lr_scheduler": {"classic": ("mindspore.experimental.optim.lr_scheduler",),
                                 "mint": ("mindspore.experimental.optim.lr_scheduler",)},
    "torch.autograd.functional": {"classic": ("mindspore",), "mint": ("mindspore",)},
    "torch.utils.data": {"classic": ("mindspore.dataset",), "mint": ("mindspore.dataset",)},
    "torch.distributed": {"classic": ("mindspore.communication", "mindspore.communication.management"),
                          "mint": ("mindspore.mint.distributed",)},
    "torch.linalg": {"classic": ("mindspore.ops",), "mint": ("mindspore.mint.linalg",)},
    "torch.fft": {"classic": ("mindspore.ops",), "mint": ("mindspore.mint.fft",)},
    "torch.special": {"classic": ("mindspore.ops",), "mint": ("mindspore.mint.special",)},
    "torch.cuda": {"classic": ("mindspore.runtime", "mindspore.hal"),
                   "mint": ("mindspore.runtime", "mindspore.hal")},
    "torch.accelerator": {"classic": ("mindspore.runtime", "mindspore.hal"),
                          "mint": ("mindspore.runtime", "mindspore.hal")},
    "torch.amp": {"classic": ("mindspore.amp",), "mint": ("mindspore.amp",)},
}

# Same name, different job: never derived, left to curated data.  torch.load
# unpickles tensors and modules; mindspore.load reads an exported MindIR graph.
FALSE_FRIENDS = {
    ("torch.load", "mindspore.load"),
    ("torch.dtype", "mindspore.ops.dtype"),  # the class of dtypes vs "dtype of this tensor"
}

# Where to look when nothing of the same name exists.
HINTS = {
    "torch.nn.init": "MindSpore initialises weights with the classes in mindspore.common.initializer "
                     "(e.g. XavierUniform) passed as weight_init, or with Parameter.set_data.",
    "torch.nn.utils": "Gradient clipping is mindspore.ops.clip_by_global_norm / clip_by_value; "
                      "MindSpore has no packed sequences.",
    "torch.autograd": "MindSpore differentiates functions: see mindspore.grad and mindspore.value_and_grad.",
    "torch.cuda": "Device control lives in mindspore.runtime (and mindspore.set_device).",
}

# torch-only parameters with a known meaning (kind, note); others are "unsupported".
TORCH_ONLY_PARAMS = {
    "out": ("unsupported", "MindSpore returns a new tensor: assign the result instead of passing out="),
    "inplace": ("unsupported", "no in-place switch here: use the returned tensor"),
    "device": ("dropped", "MindSpore places tensors on the device set for the process"),
    "pin_memory": ("dropped", "MindSpore has no pinned-memory request"),
    "memory_format": ("dropped", "MindSpore does not expose memory formats; values are unaffected"),
    "non_blocking": ("dropped", "MindSpore schedules copies itself"),
}

# Optional torch parameters dropped even where MindSpore has one of the same name: torch's values
# ('cuda:0', torch.device(...), x.device of another framework) are not MindSpore's ('CPU', 'Ascend'),
# and MindSpore places every tensor on the process's device anyway.
CONTEXT_PLACED = {
    "device": "MindSpore places tensors on the device set for the process; its own device= takes only "
              "MindSpore device names ('CPU', 'Ascend', 'meta'), not torch's ('cuda:0', torch.device)",
}

CALLABLE_KINDS = {"function", "class", "method"}
POSITIONAL = {"POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD"}
VARIADIC = {"VAR_POSITIONAL", "VAR_KEYWORD"}
NAMED_CONSTANT = re.compile(r"^(?:torch|mindspore|ms|mstype)\.(\w+)$")
DTYPE_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64",
                 "int": "int32", "short": "int16", "bool_": "bool", "cfloat": "complex64",
                 "cdouble": "complex128"}


# ---------------------------------------------------------------- parameters
def normalise_default(text: str | None) -> str | None:
    """Canonical text for comparing defaults: ``1`` == ``1.0``, ``[1, 1]`` == ``(1, 1)``,
    ``torch.float`` == ``mindspore.float32``."""
    if text is None:
        return None
    text = " ".join(text.split())
    named = NAMED_CONSTANT.match(text)
    if named:
        return "name:" + DTYPE_ALIASES.get(named.group(1), named.group(1))
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text
    return repr(_canon(value))


def _canon(value):
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, (list, tuple)):
        return tuple(_canon(v) for v in value)
    return value


def compare_params(torch_api: dict, ms_api: dict) -> tuple[str, list[dict]]:
    """Relation and ParamMap dicts for two snapshot entries.

    Parameters match by name; left-over torch and MindSpore parameters at the
    same position are ``renamed`` while the positional lists still line up
    (see ``_aligned_prefix``); other torch-only ones are
    ``unsupported`` (or as ``TORCH_ONLY_PARAMS`` says); MindSpore-only ones are
    ``added``.  A same-named parameter at another position, or positional in
    torch but keyword-only in MindSpore, counts as re-ordered.  Relation:
    ``param_names_differ`` (renames, re-orders, a required MindSpore-only
    parameter) > ``torch_more_params`` > ``defaults_differ`` > ``consistent``.
    Without both signatures: ``("consistent", [])``.
    """
    if torch_api.get("signature") is None or ms_api.get("signature") is None:
        return "consistent", []
    t_params, m_params = torch_api.get("params") or [], ms_api.get("params") or []
    m_index = {p[0]: i for i, p in enumerate(m_params)}
    used: set[int] = set()
    maps: list[dict] = []
    flags = {"names": False, "more": False, "defaults": False}
    unmatched: list[tuple[int, list, dict]] = []
    aligned = _aligned_prefix(t_params, m_params)
    for ti, (name, _kind, default) in enumerate(t_params):
        entry = _param(name, None, "same", default, None)
        maps.append(entry)
        mi = m_index.get(name)
        if mi is None:
            unmatched.append((ti, t_params[ti], entry))
            continue
        used.add(mi)
        if name in CONTEXT_PLACED and default is not None:  # MindSpore's device= takes its own names only
            entry.update(kind=TORCH_ONLY_PARAMS[name][0], note=CONTEXT_PLACED[name])
            continue
        _fill_match(entry, t_params[ti], m_params[mi], ti, mi, t_params, m_params, flags)
    for ti, (name, kind, _default), entry in unmatched:
        partner = _positional_partner(ti, kind, m_params, used, aligned)
        if partner is not None:
            used.add(partner)
            entry.update(ms=m_params[partner][0], kind="renamed", ms_default=m_params[partner][2])
            flags["names"] = True
            continue
        kind_name, note = TORCH_ONLY_PARAMS.get(name, ("unsupported", None))
        if kind in VARIADIC:
            note = "variadic in torch; MindSpore has no counterpart"
        entry.update(kind=kind_name, note=note)
        flags["more"] |= kind_name == "unsupported"
    for mi, (name, kind, default) in enumerate(m_params):
        if mi in used or kind in VARIADIC:
            continue
        note = None if default is not None else "required in MindSpore"
        flags["names"] |= default is None
        maps.append(_param(None, name, "added", None, default, note))
    relation = ("param_names_differ" if flags["names"] else "torch_more_params" if flags["more"]
                else "defaults_differ" if flags["defaults"] else "consistent")
    return relation, maps


def _param(torch, ms, kind, torch_default, ms_default, note=None) -> dict:
    return {"torch": torch, "ms": ms, "kind": kind, "torch_default": torch_default,
            "ms_default": ms_default, "transform": None, "note": note}


def _fill_match(entry, t, m, ti, mi, t_params, m_params, flags) -> None:
    entry.update(ms=m[0], ms_default=m[2])
    notes = []
    if t[1] in POSITIONAL and (m[1] not in POSITIONAL or _pos(t_params, ti) != _pos(m_params, mi)):
        notes.append("keyword-only in MindSpore" if m[1] not in POSITIONAL and m[1] not in VARIADIC
                     else "at another position in MindSpore")
        flags["names"] = True
    if (t[1] == "VAR_POSITIONAL") != (m[1] == "VAR_POSITIONAL"):
        notes.append("variadic on one side only: pass a tuple")
        flags["names"] = True
    if t[2] is not None and t[1] not in VARIADIC:
        if m[2] is None:
            notes.append("required in MindSpore")
            flags["defaults"] = True
        elif normalise_default(t[2]) != normalise_default(m[2]):
            notes.append("default differs")
            flags["defaults"] = True
    entry["note"] = "; ".join(notes) or None


def _pos(params: list, index: int) -> int:
    """Position among the positional parameters (what a positional call binds to)."""
    return sum(1 for p in params[:index] if p[1] in POSITIONAL)


def _aligned_prefix(t_params: list, m_params: list) -> int:
    """How many leading positional parameters line up (same name, or a plausible rename).

    Renames are only read inside this prefix: once the two lists diverge (one
    side inserted a parameter), pairing by position would join unrelated
    parameters, e.g. torch Conv2d ``bias`` with MindSpore ``group``.
    """
    t_names, m_names = {p[0] for p in t_params}, {p[0] for p in m_params}
    count = 0
    for t, m in zip(t_params, m_params, strict=False):
        if t[1] not in POSITIONAL or m[1] not in POSITIONAL:
            break
        renamable = t[0] not in m_names and m[0] not in t_names and t[0] not in TORCH_ONLY_PARAMS
        if t[0] != m[0] and not renamable:
            break
        count += 1
    return count


def _positional_partner(ti: int, kind: str, m_params: list, used: set[int], aligned: int) -> int | None:
    if kind in VARIADIC:
        for mi, m in enumerate(m_params):
            if mi not in used and m[1] == kind:
                return mi
        return None
    return ti if ti < aligned and ti not in used else None


# ---------------------------------------------------------------- candidates
def torch_row(name: str) -> tuple[str | None, str]:
    """(CORRESPONDENCE key, short name) for a torch API; key None if no row applies."""
    prefix, _, short = name.rpartition(".")
    return (prefix if prefix in CORRESPONDENCE else None), short


def kinds_compatible(torch_kind: str, ms_kind: str) -> bool:
    if torch_kind in CALLABLE_KINDS:
        return ms_kind in CALLABLE_KINDS
    return torch_kind == ms_kind


def same_named(name: str, family: str, ms_apis: dict) -> list[str]:
    """MindSpore APIs named like ``name`` in the family's namespaces, preferred first."""
    key, short = torch_row(name)
    spaces = CORRESPONDENCE.get(key, {}).get(family, ()) if key else ()
    return [f"{ns}.{short}" for ns in spaces if f"{ns}.{short}" in ms_apis]


def candidate(name: str, entry: dict, family: str, ms_apis: dict) -> str | None:
    for api in same_named(name, family, ms_apis):
        if kinds_compatible(entry["kind"], ms_apis[api]["kind"]) and (name, api) not in FALSE_FRIENDS:
            return api
    return None


def since(api: str, ms_snapshots: list[dict]) -> str | None:
    """First version of the run of snapshots (ending at the newest) holding ``api``."""
    first = None
    for snap in reversed(ms_snapshots):
        if api not in snap["apis"]:
            break
        first = snap["version"]
    return None if first == ms_snapshots[0]["version"] else first


# ---------------------------------------------------------------- mappings
def derive(torch_snapshot: dict, mindspore_snapshots: list[dict]) -> dict[str, list[dict]]:
    """Mapping dicts per torch namespace bucket, each list sorted by torch name."""
    if not mindspore_snapshots:
        raise ValueError("derive needs at least one MindSpore snapshot")
    ms_snaps = sorted(mindspore_snapshots, key=lambda s: version_key(s["version"]))
    ref = f"mindspore {ms_snaps[-1]['version']}; torch {torch_snapshot['version']}"
    out: dict[str, list[dict]] = {}
    for name in sorted(torch_snapshot["apis"]):
        entry = torch_snapshot["apis"][name]
        mapping = mapping_for(name, entry, ms_snaps, ref)
        mapping["provenance"] = [_prov(f"torch {torch_snapshot['version']}")]
        out.setdefault(entry["namespace"], []).append(mapping)
    return out


def mapping_for(name: str, entry: dict, ms_snaps: list[dict], ref: str) -> dict:
    newest = ms_snaps[-1]
    found = {family: candidate(name, entry, family, newest["apis"]) for family in FAMILIES}
    targets = [
        _target(family, api, entry, newest["apis"][api], ms_snaps, ref) if (api := found[family])
        else _no_equivalent(name, entry, family, found, newest, ref)
        for family in FAMILIES
    ]
    return {
        "torch": name, "kind": entry["kind"], "namespace": entry["namespace"], "targets": targets,
        "advice": None if any(found.values()) else _advice(name, entry, newest["version"]),
        "caveats": [], "provenance": [],
    }


def _prov(ref: str) -> dict:
    return {"kind": "introspection", "ref": ref, "note": None}


def _target(family: str, api: str, t_entry: dict, m_entry: dict, ms_snaps: list[dict], ref: str) -> dict:
    params: list[dict]
    if t_entry["kind"] not in CALLABLE_KINDS:
        relation, params, auto, note = "consistent", [], True, None
    elif t_entry.get("signature") is None or m_entry.get("signature") is None:
        missing = [side for side, e in (("torch", t_entry), ("MindSpore", m_entry)) if e.get("signature") is None]
        relation, params, auto = "consistent", [], False
        note = (f"Signature could not be compared ({' and '.join(missing)} recorded none); "
                "check the parameters by hand.")
    else:
        relation, params = compare_params(t_entry, m_entry)
        blocked = any(p["note"] and ("required" in p["note"] or "variadic" in p["note"]) for p in params)
        # Whether a call is rewritten is decided per call (kb/analysis/arguments.py): a torch-only
        # parameter blocks only a call that passes it with a value other than torch's default, and a
        # default that differs is written out. So these relations are automatic too.
        auto = relation in ("consistent", "param_names_differ", "torch_more_params", "defaults_differ") \
            and not blocked
        note = summary(params)
    return {
        "family": family, "api": api, "relation": relation, "params": params, "note": note,
        "ms_versions": {"since": since(api, ms_snaps), "until": None},
        "provenance": [_prov(ref)], "example": None, "auto": auto,
    }


def summary(params: list[dict]) -> str | None:
    """One sentence listing what the parameter table says differs."""
    def noted(*words):
        return [p["torch"] for p in params if p["kind"] == "same" and p["note"]
                and any(w in p["note"] for w in words)]

    groups = [
        ("renamed", [f"{p['torch']}->{p['ms']}" for p in params if p["kind"] == "renamed"]),
        ("torch-only", [p["torch"] for p in params if p["kind"] == "unsupported"]),
        ("dropped", [p["torch"] for p in params if p["kind"] == "dropped"]),
        ("defaults differ", noted("default", "required")),
        ("moved", noted("position", "keyword-only", "variadic")),
        ("MindSpore-only", [p["ms"] for p in params if p["kind"] == "added"]),
    ]
    parts = [f"{label}: {', '.join(names)}" for label, names in groups if names]
    return ("Signature comparison: " + "; ".join(parts) + ".") if parts else None


def _no_equivalent(name: str, entry: dict, family: str, found: dict, newest: dict, ref: str) -> dict:
    key, short = torch_row(name)
    spaces = CORRESPONDENCE.get(key, {}).get(family, ()) if key else ()
    if spaces:
        note = f"No usable `{short}` in {' / '.join(spaces)} (MindSpore {newest['version']})."
    else:
        note = f"No {family} MindSpore namespace mirrors {name.rpartition('.')[0]}."
    for api in same_named(name, family, newest["apis"])[:1]:  # why a same-named API was passed over
        ms_kind = newest["apis"][api]["kind"]
        note += (f" `{api}` shares the name but does something else." if (name, api) in FALSE_FRIENDS
                 else f" `{api}` exists but is {_a(ms_kind)}, not {_a(entry['kind'])}.")
    others = [f"{f} family has `{found[f]}`" for f in FAMILIES if f != family and found[f]]
    if others:
        note += " The " + others[0] + "."
    return {
        "family": family, "api": None, "relation": "no_equivalent", "params": [], "note": note,
        "ms_versions": {"since": None, "until": None}, "provenance": [_prov(ref)],
        "example": None, "auto": False,
    }


def _a(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


def _advice(name: str, entry: dict, version: str) -> str:
    key, short = torch_row(name)
    spaces = sorted({ns for fam in CORRESPONDENCE.get(key, {}).values() for ns in fam}) if key else []
    where = f"in {', '.join(spaces)}" if spaces else "in a MindSpore namespace mirroring this one"
    text = f"No usable `{short}` {where} (MindSpore {version}). Try `msmap search {short}`"
    composable = entry["kind"] == "function" or entry["namespace"] == "torch.Tensor"
    text += ", or compose it from mindspore.ops." if composable else "."
    hint = HINTS.get(entry["namespace"])
    return f"{text} {hint}" if hint else text


# ---------------------------------------------------------------- files
def dump_lines(mappings: list[dict]) -> str:
    """JSON Lines text, each mapping validated by ``kb.model.DerivedMapping``."""
    from kb.model import DerivedMapping

    lines = []
    for mapping in mappings:
        model = DerivedMapping.model_validate(mapping)
        lines.append(json.dumps(_lean(model.model_dump(mode="json")), sort_keys=True, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


def write_derived(derived: dict[str, list[dict]], out_dir: Path) -> list[Path]:
    """Write ``<namespace>.jsonl`` files (through ``kb.safepaths``); remove derived files of vanished
    namespaces - ``torch*.jsonl`` only: another ``.jsonl`` in ``--out-dir`` is not msmap's."""
    from kb.errors import MsmapError
    from kb.safepaths import write_file

    out_dir = Path(out_dir)
    written = []
    for namespace in sorted(derived):
        path = out_dir / f"{namespace}.jsonl"
        problem = write_file(path, dump_lines(derived[namespace]).encode("utf-8"))
        if problem:
            raise MsmapError(f"{path}: {problem}", exit_code=1)
        written.append(path)
    for stale in set(out_dir.glob("torch*.jsonl")) - set(written):
        if stale.is_file() and not stale.is_symlink():
            stale.unlink()
    return written


def _lean(record: dict) -> dict:
    """Leave out the curation-only fields derivation never fills (templates, helpers, symbolic transforms,
    a mapping's torch version range and requirement)."""
    if record.get("torch_versions") == {"since": None, "until": None}:
        record.pop("torch_versions")
    if record.get("torch_requires") is None:
        record.pop("torch_requires", None)
    for target in record.get("targets") or []:
        if not target.get("template"):
            target.pop("template", None)
        if target.get("helper") is None:
            target.pop("helper", None)
        for param in target.get("params") or []:
            if param.get("symbolic") is None:
                param.pop("symbolic", None)
    return record
