"""Build the SQLite knowledge base from data/ (curated over derived, plus snapshots).

Merge rule: for each torch API, curated targets replace derived targets of the
same family; families the curator did not touch keep their derived targets.
Parameter tables of curated targets start from a signature comparison of the
snapshots and are overlaid with the curated ParamMaps.
"""
from __future__ import annotations

import json
import os
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import sqlite_utils

from kb import paths, spellings
from kb.dbfile import APPLICATION_ID, check_replaceable
from kb.derive import compare_params
from kb.errors import MsmapError
from kb.model import Caveat, Mapping, Target
from kb.probes.values import not_call_probed
from kb.sources import Sources, load_sources
from kb.versions import version_key

SCHEMA_VERSION = "4"


def namespace_of(torch_name: str) -> str:
    """The torch namespace bucket an API is counted under (for stats and docs)."""
    buckets = (
        "torch.nn.functional", "torch.nn.init", "torch.nn.utils", "torch.nn.Module", "torch.nn",
        "torch.optim.lr_scheduler", "torch.optim", "torch.autograd", "torch.utils.data",
        "torch.distributed", "torch.linalg", "torch.fft", "torch.special", "torch.cuda",
        "torch.accelerator", "torch.amp", "torch.Tensor",
        # namespaces only curated files cover (no signature snapshot), and torch's ecosystem
        "torch.jit", "torch.fx", "torch.onnx", "torch.export", "torch.compiler", "torch.profiler",
        "torch.backends", "torch.multiprocessing", "torch.distributions", "torch.nested", "torch.hub",
        "torch.library", "torch.utils", "torchvision", "torchaudio", "torchtext", "einops", "timm",
    )
    for b in buckets:
        if torch_name == b or torch_name.startswith(b + "."):
            return b
    return "torch"


def _snapshot_index(snapshots: list[dict]) -> tuple[dict, dict, list[str]]:
    """Newest torch and mindspore snapshot APIs, and every mindspore version seen."""
    torch_snaps = sorted((s for s in snapshots if s["framework"] == "torch"), key=lambda s: version_key(s["version"]))
    ms_snaps = sorted((s for s in snapshots if s["framework"] == "mindspore"), key=lambda s: version_key(s["version"]))
    torch_apis = torch_snaps[-1]["apis"] if torch_snaps else {}
    ms_apis = ms_snaps[-1]["apis"] if ms_snaps else {}
    return torch_apis, ms_apis, [s["version"] for s in ms_snaps]


def _compare(torch_api: dict | None, ms_api: dict | None) -> list[dict]:
    if not torch_api or not ms_api:
        return []
    _, params = compare_params(torch_api, ms_api)
    return [p if isinstance(p, dict) else p.model_dump() for p in params]


def _overlay(auto: list[dict], curated: list[dict]) -> list[dict]:
    """Curated ParamMaps win over auto ones for the same torch (or ms-only) name."""
    if not curated:
        return auto
    keys = {(p.get("torch") or "", p.get("ms") if not p.get("torch") else "") for p in curated}
    torch_names = {p["torch"] for p in curated if p.get("torch")}
    ms_names = {p["ms"] for p in curated if p.get("ms")}
    kept = [
        p for p in auto
        if not (p.get("torch") and p["torch"] in torch_names)
        and not (not p.get("torch") and p.get("ms") in ms_names)
        and (p.get("torch") or "", p.get("ms") if not p.get("torch") else "") not in keys
    ]
    return curated + kept


def _target_row(torch_name: str, seq: int, t: Target, source: str, torch_apis: dict, ms_apis: dict) -> dict:
    curated_params = [p.model_dump() for p in t.params]
    if source == "curated":
        params = _overlay(_compare(torch_apis.get(torch_name), ms_apis.get(t.api or "")), curated_params)
    else:
        params = curated_params
    ms_api = ms_apis.get(t.api or "") or {}
    auto = t.auto
    if auto is None:
        auto = t.relation in ("consistent", "renamed", "param_names_differ", "defaults_differ") and not any(
            p["kind"] == "unsupported" for p in params
        )
    return {
        "torch": torch_name,
        "family": t.family,
        "seq": seq,
        "api": t.api,
        "relation": t.relation,
        "auto": int(bool(auto)),
        "since": t.ms_versions.since,
        "until": t.ms_versions.until,
        "note": t.note,
        "params": json.dumps(params, ensure_ascii=False),
        "provenance": json.dumps([p.model_dump() for p in t.provenance], ensure_ascii=False),
        "example": json.dumps(t.example.model_dump(), ensure_ascii=False) if t.example else None,
        "ms_signature": ms_api.get("signature"),
        "source": source,
        "template": json.dumps(t.template) if t.template else None,
        "helper": t.helper,
        "proof": None,  # filled from recorded rewrite probes (_apply_rewrite_proof)
    }


def merge(src: Sources) -> Iterable[tuple[Mapping, str, list[tuple[Target, str]]]]:
    """Yield (mapping, source label, [(target, target source)]) for every torch API."""
    for name in sorted(set(src.curated) | set(src.derived)):
        cur, der = src.curated.get(name), src.derived.get(name)
        if cur and der:
            fams = {t.family for t in cur.targets}
            targets = [(t, "curated") for t in cur.targets] + [(_point_to(t, cur.targets), "derived")
                                                               for t in der.targets if t.family not in fams]
            # derived advice explains a missing same-name API: keep it only while nothing maps
            # (a curated target of either family that maps makes "no usable X" untrue)
            der_advice = der.advice if all(t.relation == "no_equivalent" for t, _ in targets) else None
            merged = cur.model_copy(update={"kind": cur.kind or der.kind, "advice": cur.advice or der_advice})
            yield merged, "curated+derived", targets
        elif cur:
            yield cur, "curated", [(t, "curated") for t in cur.targets]
        elif der is not None:
            advice = _inplace_advice(name, src) if all(t.relation == "no_equivalent" for t in der.targets) else None
            yield (der.model_copy(update={"advice": advice}) if advice else der), "derived", [
                (t, "derived") for t in der.targets]


def _inplace_advice(name: str, src: Sources) -> str | None:
    """The recipe for an in-place torch API (``torch.Tensor.abs_``, ``torch.relu_``) that MindSpore lacks while
    its out-of-place twin maps: rebind the result. None for any other name."""
    head, _, leaf = name.rpartition(".")
    if not leaf.endswith("_") or leaf.endswith("__") or len(leaf) < 2:
        return None
    twin = f"{head}.{leaf[:-1]}"
    mapped: dict[str, str] = {}
    for m in (src.curated.get(twin), src.derived.get(twin)):
        for t in m.targets if m else []:
            if t.relation != "no_equivalent" and t.api:
                mapped.setdefault(t.family, t.api)
    if not mapped:
        return None
    apis = ", ".join(f"{family}: `{api}`" for family, api in sorted(mapped.items()))
    first = mapped.get("classic") or next(iter(mapped.values()))
    call = f"x = x.{leaf[:-1]}(...)" if head == "torch.Tensor" else f"x = {first}(x, ...)"
    return (f"MindSpore has no in-place `{leaf}`: rebind the out-of-place result, `{call}` ({apis}; see `{twin}`). "
            f"A `Parameter` that must stay the same object takes `p.set_data(...)` of that result instead.")


def _point_to(derived: Target, curated: list[Target]) -> Target:
    """A derived no-equivalent target names the other family's curated API when one maps."""
    found = [t for t in curated if t.relation != "no_equivalent" and t.family != derived.family]
    if derived.relation != "no_equivalent" or not found:
        return derived
    note = f"{derived.note or ''} The {found[0].family} family has `{found[0].api}` (see there).".strip()
    return derived.model_copy(update={"note": note})


def _summary(targets: list[dict]) -> str:
    parts = []
    for fam in ("classic", "mint"):
        ts = [t for t in targets if t["family"] == fam]
        if ts:
            t = ts[-1]
            parts.append(f"{fam}: {t['api'] or '(none)'} [{t['relation']}]")
    return "; ".join(parts)


def _caveat_row(c: Caveat, origin: str) -> dict:
    return {
        "id": c.id, "title": c.title, "body": c.body, "severity": c.severity, "topic": c.topic,
        "applies_to": json.dumps(c.applies_to), "ms_since": c.ms_versions.since, "ms_until": c.ms_versions.until,
        "torch_since": c.torch_versions.since, "torch_until": c.torch_versions.until,
        "provenance": json.dumps([p.model_dump() for p in c.provenance], ensure_ascii=False),
        "claims": json.dumps([cl.model_dump() for cl in c.claims], ensure_ascii=False),
        "origin": origin,
    }


Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def write_db(src: Sources, out: Path, fingerprint: str, verdicts: bool = True, content: str = "",
             progress: Progress = _quiet) -> dict[str, int]:
    """``verdicts=False``: targets keep the ``auto`` their relation and parameters give, without
    recorded probe verdicts (``msmap probe --rewrites`` probes what the engine would emit then).

    The DB is written to a temporary file beside ``out`` and renamed over it; whatever fails on
    the way, the temporary file is removed."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".kb-", suffix=".sqlite", dir=out.parent)
    except OSError as exc:
        raise MsmapError(f"cannot write the knowledge base in {out.parent}: {exc.strerror or exc} "
                         "(set MSMAP_DB, or --db, to a file in a writable folder)") from None
    os.close(fd)
    try:
        counts = _write_db(src, tmp, fingerprint, verdicts, content, progress)
        os.replace(tmp, out)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise MsmapError(f"cannot write the knowledge base {out}: {exc.strerror or exc}") from None
        raise
    return counts


def _write_db(src: Sources, tmp: str, fingerprint: str, verdicts: bool, content: str = "",
              progress: Progress = _quiet) -> dict[str, int]:
    torch_apis, ms_apis, ms_versions = _snapshot_index(src.snapshots)
    conn = sqlite3.connect(tmp)
    db = sqlite_utils.Database(conn)
    db.execute(f"PRAGMA application_id={APPLICATION_ID}")  # msmap's mark (kb.dbfile)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")

    _create_tables(db)
    api_rows = []
    for snap in src.snapshots:
        for name, a in snap["apis"].items():
            api_rows.append({
                "name": name, "framework": snap["framework"], "version": snap["version"],
                "kind": a.get("kind"), "signature": a.get("signature"),
                "params": json.dumps(a.get("params") or []), "namespace": a.get("namespace"),
            })
    db.table("apis").insert_all(api_rows, pk=("name", "version"), batch_size=5000)

    progress(f"{len(api_rows):,} snapshot signatures written; merging mappings")
    mapping_rows: list[dict[str, Any]] = []
    target_rows: list[dict[str, Any]] = []
    link_rows: list[dict[str, Any]] = []
    newest = ms_versions[-1] if ms_versions else None
    probes = [p for p in src.extra.get("probes") or [] if isinstance(p, dict) and p.get("kind") != "rewrite"]
    differs = _probe_differences(probes, newest) if verdicts else {}
    proofs = rewrite_proofs(src.extra.get("probes") or [], newest) if verdicts else {}
    no_kernel = _no_cpu_kernel(probes, newest)
    applies: dict[str, list[str]] = {}
    for cid, c in src.caveats.items():
        for name in c.applies_to:
            applies.setdefault(name, []).append(cid)
    for m, source, targets in merge(src):
        rows = [_target_row(m.torch, i, t, s, torch_apis, ms_apis) for i, (t, s) in enumerate(targets)]
        for r, (t, s) in zip(rows, targets, strict=True):
            # A curator's explicit ``auto: true`` stands on the rewrite's own parameter map; an
            # equivalence probe that called MindSpore with other arguments is no evidence against it.
            proof = proofs.get((m.torch, r["family"], r["api"]))
            if proof is not None:
                _apply_rewrite_proof(r, proof)
            if verdicts and proofs and r["api"] and _outside_calls(m.torch, proof):
                # what the rewrite probes would record for it, so stats count it as not call-probed
                r["proof"] = json.dumps({"result": "unprobed", "detail": f"not a tensor computation "
                                         f"({m.torch.rsplit('.', 1)[0]}): no generated call"})
            elif verdicts and proofs and r["api"]:
                _gate_unproven(r, proof)  # not proven is not automatic (data with rewrite-probe records)
            if proof is not None and proof.get("result") in ("proven", "failed"):
                pass  # the executed rewrite outranks an equivalence probe that called other code
            elif not (s == "curated" and t.auto is True):
                _apply_probe_verdict(r, differs.get((m.torch, r["api"])))
            r["no_kernel"] = json.dumps(["CPU"]) if r["api"] in no_kernel else None
        target_rows.extend(rows)
        cids = list(dict.fromkeys(
            m.caveats + applies.get(m.torch, []) + [c for r in rows if r["api"] for c in applies.get(r["api"], [])]
        ))
        link_rows.extend({"torch": m.torch, "caveat_id": c, "seq": i} for i, c in enumerate(cids))
        ta = torch_apis.get(m.torch) or {}
        mapping_rows.append({
            "torch": m.torch, "short": m.torch.rsplit(".", 1)[-1], "kind": m.kind or ta.get("kind"),
            "namespace": ta.get("namespace") or m.namespace or namespace_of(m.torch), "source": source,
            "advice": m.advice, "torch_signature": m.torch_signature or ta.get("signature"),
            "provenance": json.dumps([p.model_dump() for p in m.provenance], ensure_ascii=False),
            "summary": _summary(rows), "torch_since": m.torch_versions.since,
            "torch_until": m.torch_versions.until, "torch_requires": m.torch_requires,
        })
    progress(f"writing {len(mapping_rows):,} mappings and {len(target_rows):,} targets")
    db.table("mappings").insert_all(mapping_rows, pk="torch", batch_size=5000)
    db.table("targets").insert_all(target_rows, pk=("torch", "seq"), batch_size=5000)
    db.table("caveats").insert_all(
        [_caveat_row(c, src.origin.get("caveat:" + c.id, "")) for c in src.caveats.values()], pk="id"
    )
    db.table("mapping_caveats").insert_all(link_rows, pk=("torch", "caveat_id"), batch_size=5000)
    for table in ("checks", "probes"):  # recorded verification results (data/checks, data/probes)
        rows = [r for r in src.extra.get(table, []) if isinstance(r, dict) and r.get("kind") != "rewrite"]
        if rows:
            db.table(table).insert_all(rows, alter=True)
    _write_timings(db, [r for r in src.extra.get("timing", []) if isinstance(r, dict)])
    spellings.write(db, src.snapshots, {r["torch"] for r in mapping_rows})  # every spelling of a name (kb/spellings.py)
    db.execute("CREATE TABLE usage (torch TEXT PRIMARY KEY, sites INTEGER NOT NULL)")  # data/usage
    db.conn.executemany("INSERT INTO usage VALUES (:torch, :sites)", src.extra.get("usage", []))

    db.execute("CREATE INDEX idx_targets_api ON targets(api)")
    db.execute("CREATE INDEX idx_mappings_short ON mappings(short)")
    db.execute("CREATE INDEX idx_mappings_ns ON mappings(namespace)")
    db.execute("CREATE INDEX idx_links_caveat ON mapping_caveats(caveat_id)")
    progress("search index")
    _build_search(db, mapping_rows, target_rows, src.caveats)
    _write_origins(db, src)
    _write_weight_rules(db, src)
    _index_verification(db)
    meta = {
        "schema": SCHEMA_VERSION, "fingerprint": fingerprint, "content": content,
        "ms_versions": json.dumps(ms_versions),
        "torch_version": next((s["version"] for s in src.snapshots if s["framework"] == "torch"), ""),
    }
    db.table("meta").insert_all([{"key": k, "value": v} for k, v in meta.items()], pk="key")
    conn.commit()
    conn.close()
    return {"mappings": len(mapping_rows), "targets": len(target_rows), "caveats": len(src.caveats),
            "apis": len(api_rows)}


def _probe_differences(probes: list, ms_version: str | None) -> dict[tuple[str | None, str | None], list[dict]]:
    """Equivalence probes that found different outputs on the newest snapshotted MindSpore."""
    out: dict[tuple[str | None, str | None], list[dict]] = {}
    for p in probes:
        if (isinstance(p, dict) and p.get("result") == "differs" and p.get("kind") != "caveat"
                and p.get("ms_version") == ms_version):
            out.setdefault((p.get("torch"), p.get("ms_api")), []).append(p)
    return out


def _no_cpu_kernel(probes: list, ms_version: str | None) -> set[str]:
    """MindSpore APIs that a probe found without a CPU kernel on the newest snapshotted version,
    and that no probe of the same version ran on the CPU. A kernel probe (``kernel/...``) whose
    MindSpore side ran but computed something else does not work there either (mint.optim.SGD's
    in-place update leaves the parameter unchanged on CPU). A caveat probe does not count as a run: it checks a
    documented behaviour, often a signature read by introspection (InstanceNorm2d's affine default), not the op."""
    missing, ran = set(), set()
    for p in probes:
        if isinstance(p, dict) and p.get("ms_version") == ms_version and p.get("ms_api"):
            if p.get("result") == "no_cpu_kernel" or (
                    p.get("result") == "differs" and str(p.get("probe", "")).startswith("kernel/")):
                missing.add(p["ms_api"])
            elif p.get("result") in ("holds", "differs") and p.get("kind") != "caveat":
                ran.add(p["ms_api"])
    return missing - ran


def rewrite_proofs(probes: list, ms_version: str | None) -> dict[tuple[str | None, str | None, str | None], dict]:
    """Rewrite probes (``msmap probe --rewrites``) of the newest snapshotted MindSpore, by
    (torch, family, MindSpore API)."""
    return {(p.get("torch"), p.get("family"), p.get("ms_api")): p for p in probes
            if isinstance(p, dict) and p.get("kind") == "rewrite" and p.get("ms_version") == ms_version}


def _apply_rewrite_proof(row: dict, probe: dict) -> None:
    """The engine's own rewrite, executed next to torch, decides: a failure turns ``auto`` off
    with the failure as the reason, the note's first sentence (what a use's marker says; a signature
    comparison after it blocked nothing: a call never passing ``layout`` is not refused for it), as
    ``_gate_unproven`` does for the unproven ones."""
    row["proof"] = json.dumps({k: probe.get(k) for k in ("result", "detail", "passed", "failed", "ms_version",
                                                          "device", "values", "value_failures", "combos")},
                              ensure_ascii=False)
    if probe.get("result") == "failed" and row["auto"]:
        verdict = (f"Rewrite probe (mindspore {probe.get('ms_version')}, {probe.get('device') or 'cpu'}): "
                   f"{probe.get('detail')}. The rewrite msmap would emit gives other results than torch, "
                   "so msmap does not apply it automatically.")
        row["note"] = f"{verdict}\n\n{row['note']}" if row.get("note") else verdict
        row["auto"] = 0


def _outside_calls(torch_name: str, proof: dict | None) -> bool:
    """A name in no namespace the rewrite probes generate calls for (``torch.jit.script``,
    ``torch.distributed.*``): not a tensor computation, so never call-probed, recorded or not
    (``kb.probes.rewrites._unprobed_reason`` records such rows as not call-probed)."""
    from kb.probes.rewrites import NAMESPACES

    if proof is not None:
        return False
    namespace = torch_name.rsplit(".", 1)[0]
    return namespace not in NAMESPACES and not torch_name.startswith("torch.Tensor.")


def _gate_unproven(row: dict, proof: dict | None) -> None:
    """An automatic target whose emitted rewrite no probe ran and matched is not automatic: a use
    gets the marker ``unproven rewrite: <api>`` (the note's first sentence) instead of a rewrite."""
    if not row["auto"] or (proof is not None and proof.get("result") == "proven") or not_call_probed(proof):
        return
    why = str((proof or {}).get("detail") or "no rewrite probe recorded for this target")
    first = f"Unproven rewrite: {row['api']}: no probe ran the rewrite msmap would emit next to torch ({why})."
    row["note"] = f"{first}\n\n{row['note']}" if row.get("note") else first
    row["auto"] = 0
    row["proof"] = json.dumps({**(proof or {"result": "unprobed", "detail": why}), "gated": True}, ensure_ascii=False)


def _apply_probe_verdict(row: dict, found: list[dict] | None) -> None:
    """A recorded probe difference outranks a signature match: no silent automatic rewrite.

    Differences only in integer width (int64 in torch, int32 in MindSpore) keep the
    rewrite but say so; any other difference (values, shapes, structure) turns it off.
    """
    if not found:
        return
    details = "; ".join(sorted({p.get("detail") or "" for p in found}))
    dtype_only = all("values equal but dtype" in (p.get("detail") or "") for p in found)
    verdict = (f"Probe (mindspore {found[0].get('ms_version')}, {found[0].get('device') or 'cpu'}): {details}."
               + ("" if dtype_only
                  else " Outputs differ for the same call, so msmap does not rewrite it automatically."))
    row["note"] = f"{row['note']}\n\n{verdict}" if row.get("note") else verdict
    if not dtype_only:
        row["auto"] = 0


def _write_timings(db: sqlite_utils.Database, rows: list[dict]) -> None:
    """``timings``: recorded op timings (data/timing/, ``msmap probe --timing``), one row per op, family,
    device, MindSpore version and shape; ``timing_names``: the torch APIs each measured op stands for."""
    T, F = str, float
    db.table("timings").create({"op": T, "torch": T, "family": T, "ms_api": T, "device": T, "ms_version": T,
                          "torch_version": T, "shape": T, "result": T, "ms": F, "spread": F, "torch_ms": F,
                          "torch_spread": F, "ratio": F, "ratio_spread": F, "date": T, "machine": T, "detail": T})
    db.table("timing_names").create({"torch": T, "op": T}, pk=("torch", "op"))
    columns = set(db.table("timings").columns_dict)
    db.table("timings").insert_all(({k: v for k, v in r.items() if k in columns} for r in rows), batch_size=5000)
    names = {(name, r["op"]) for r in rows for name in r.get("torch_apis") or [r.get("torch")] if name}
    db.table("timing_names").insert_all(({"torch": t, "op": op} for t, op in sorted(names)), pk=("torch", "op"))
    db.execute("CREATE INDEX idx_timings_op ON timings(op)")


def _write_origins(db: sqlite_utils.Database, src: Sources) -> None:
    """``origins``: "mapping:<torch>" / "caveat:<id>" -> "file:line" of the curated entry (for msmap check)."""
    db.table("origins").create({"ref": str, "origin": str}, pk="ref")
    db.table("origins").insert_all([{"ref": k, "origin": v} for k, v in sorted(src.origin.items())], pk="ref")


def _write_weight_rules(db: sqlite_utils.Database, src: Sources) -> None:
    """``weight_rules``: torch state_dict key -> MindSpore parameter name rules (msmap weights/verify)."""
    T = str
    db.table("weight_rules").create({"seq": int, "layer": T, "family": T, "rule": T, "origin": T}, pk="seq")
    db.table("weight_rules").insert_all(
        {"seq": i, "layer": r.layer, "family": r.family, "rule": r.model_dump_json(), "origin": origin}
        for i, (r, origin) in enumerate(src.weight_rules)
    )


def _index_verification(db: sqlite_utils.Database) -> None:
    """Indexes for kb.query.checks_for / probes_for (one lookup per target; the checks table is large)."""
    if db.table("checks").exists() and "subject" in db.table("checks").columns_dict:
        db.execute("CREATE INDEX idx_checks_subject ON checks(subject)")
    if db.table("probes").exists() and {"torch", "ms_api"} <= set(db.table("probes").columns_dict):
        db.execute("CREATE INDEX idx_probes_pair ON probes(torch, ms_api)")


def _create_tables(db: sqlite_utils.Database) -> None:
    """Explicit schema, so an empty data set still yields a queryable DB."""
    T = str
    db.table("apis").create({"name": T, "framework": T, "version": T, "kind": T, "signature": T, "params": T,
                       "namespace": T}, pk=("name", "version"))
    db.table("mappings").create({"torch": T, "short": T, "kind": T, "namespace": T, "source": T, "advice": T,
                           "torch_signature": T, "provenance": T, "summary": T, "torch_since": T,
                           "torch_until": T, "torch_requires": T}, pk="torch")
    db.table("targets").create({"torch": T, "family": T, "seq": int, "api": T, "relation": T, "auto": int, "since": T,
                          "until": T, "note": T, "params": T, "provenance": T, "example": T, "ms_signature": T,
                          "source": T, "no_kernel": T, "template": T, "helper": T, "proof": T}, pk=("torch", "seq"))
    db.table("caveats").create({"id": T, "title": T, "body": T, "severity": T, "topic": T, "applies_to": T,
                          "ms_since": T, "ms_until": T, "torch_since": T, "torch_until": T, "provenance": T,
                          "claims": T, "origin": T}, pk="id")
    db.table("mapping_caveats").create({"torch": T, "caveat_id": T, "seq": int}, pk=("torch", "caveat_id"))


def _split_words(name: str) -> str:
    """'torch.nn.functional.max_pool2d' -> 'torch nn functional max pool2d max_pool2d'."""
    parts = name.replace(".", " ").split()
    extra = [w for p in parts if "_" in p for w in p.split("_") if w]
    return " ".join(parts + extra)


def _build_search(db: sqlite_utils.Database, mappings: list[dict], targets: list[dict], caveats: dict) -> None:
    by_torch: dict[str, list[dict]] = {}
    for t in targets:
        by_torch.setdefault(t["torch"], []).append(t)
    rows: list[dict[str, Any]] = []
    for m in mappings:
        ts = by_torch.get(m["torch"], [])
        ms_names = " ".join(_split_words(t["api"]) for t in ts if t["api"])
        notes = " ".join(t["note"] or "" for t in ts) + " " + (m["advice"] or "")
        pnames = {n for t in ts for p in json.loads(t["params"]) for n in (p.get("torch"), p.get("ms")) if n}
        notes += " " + " ".join(sorted(pnames))
        rows.append({"ref": m["torch"], "kind": "mapping", "name": _split_words(m["torch"]) + " " + ms_names,
                     "title": m["torch"], "body": notes})
    for c in caveats.values():
        rows.append({"ref": c.id, "kind": "caveat", "name": " ".join(_split_words(a) for a in c.applies_to),
                     "title": c.title, "body": c.body})
    db.execute(
        "CREATE VIRTUAL TABLE search USING fts5(ref UNINDEXED, kind UNINDEXED, name, title, body, "
        "tokenize = \"unicode61 tokenchars '_'\")"
    )
    db.conn.executemany(
        "INSERT INTO search(ref, kind, name, title, body) VALUES (:ref, :kind, :name, :title, :body)", rows
    )
    db.execute("CREATE VIRTUAL TABLE search_vocab USING fts5vocab(search, row)")


def build(data: Path | None = None, out: Path | None = None, verdicts: bool = True,
          force: bool = False, progress: Progress = _quiet) -> dict[str, Any]:
    """Build the DB from ``data`` into ``out``; a file there that msmap did not build is replaced
    only with ``force``.  ``progress`` is told each stage as it starts (one short line)."""
    if out is not None or os.environ.get("MSMAP_DB"):  # the default cache location is msmap's own
        check_replaceable(out or paths.db_path(), force)
    data = data or paths.data_dir()
    out = out or paths.db_path(data)
    if not (data / "curated").is_dir():
        from kb.errors import DataError

        raise DataError(f"{data}: no curated/ folder: is MSMAP_DATA pointing at msmap's data/?")
    started = time.perf_counter()
    fp = paths.fingerprint(data)
    progress(f"reading {len(paths.source_files(data))} data files")
    sources = load_sources(data)
    counts: dict[str, Any] = write_db(sources, out, fp, verdicts=verdicts, content=paths.content_fingerprint(data),
                                      progress=progress)
    counts["seconds"] = round(time.perf_counter() - started, 2)
    counts["db"] = str(out)
    return counts
