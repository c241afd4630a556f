"""The read path: plain ``sqlite3`` queries returning plain dicts ("records").

Kept lean on purpose: no pydantic, no sqlite-utils, no mindspore/torch.  The CLI,
the language server, the docs generator and the scan/convert engine all read the
knowledge base through this module.  Record shapes are documented in DESIGN.md.
"""
from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from kb import names, paths
from kb.dbfile import read_only_uri
from kb.errors import DatabaseError, MsmapError
from kb.probes.values import not_call_probed
from kb.spellings import Spellings
from kb.versions import version_key

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


# (data folder, DB path) -> the DB file's (size, mtime, inode) when this process found it fresh and intact
_FRESH: dict[tuple[str, str], tuple[int, int, int]] = {}


def _file_key(db: Path) -> tuple[int, int, int] | None:
    try:
        info = db.stat()
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ino


def ensure_db(data: Path | None = None, db: Path | None = None, quiet: bool = True) -> Path:
    """Return a fresh, intact DB path, building it when missing, stale or damaged.

    Freshness is checked once per process: a DB found fresh (or built) here is returned at once by
    every later call for the same data folder and path, unless the file itself changed since (a
    command opens the knowledge base once; the reads inside it never check or build again).
    A file msmap did not build is never replaced here (``kb.dbfile``): only the default cache
    location, which is msmap's own, or a file carrying msmap's mark."""
    explicit = db is not None or bool(os.environ.get("MSMAP_DB"))
    data = data or paths.data_dir()
    db = db or paths.db_path(data)
    key = (os.path.abspath(data), os.path.abspath(db))
    known = _FRESH.get(key)
    if known is not None and known == _file_key(db):
        return db
    found = _checked_db(data, db, explicit, quiet)
    stamp = _file_key(found)
    if stamp is not None:
        _FRESH[key] = stamp
    return found


def _checked_db(data: Path, db: Path, explicit: bool, quiet: bool) -> Path:
    from kb import dbfile

    if db.is_dir():
        raise MsmapError(f"{db} is a directory, not a knowledge base file (check --db or MSMAP_DB)")
    dbfile.check_usable(db)
    fp = paths.fingerprint(data) if (data / "curated").is_dir() else None
    why = "building knowledge base"
    if db.exists() and db.stat().st_size:
        damaged = dbfile.damage(db) if not explicit or dbfile.is_msmap(db) else None
        if damaged is None:
            try:
                with sqlite3.connect(read_only_uri(db), uri=True) as conn:
                    row = conn.execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone()
                if fp is None or (row and row[0] == fp):
                    probe = KB(db, results=False)
                    damaged = probe.unreadable()
                    probe.conn.close()
                    if damaged is None or fp is None:
                        return db  # fresh (or no sources to rebuild from: use what is there)
            except sqlite3.DatabaseError as exc:
                damaged = str(exc)
        if damaged is not None:
            if fp is None:
                raise DatabaseError(f"{db}: the knowledge base is damaged ({damaged}) and there is no data/ "
                                    f"to rebuild it from ({data}); reinstall msmap or set MSMAP_DATA")
            why = f"the knowledge base {db} is damaged or out of date ({damaged}); rebuilding it"
    if fp is None:
        raise DatabaseError(f"no knowledge base at {db} and no data/ to build it from ({data})")
    dbfile.check_replaceable(db, explicit=explicit)
    if _adopt_bundled(data, db, fp):
        dbfile.remember_intact(db)
        return db
    from kb.build import build  # build-time libraries only when needed

    build(data, db, force=True, progress=_progress(f"{why} from {data}", quiet))  # checked above
    dbfile.remember_intact(db)
    return db


def _progress(what: str, quiet: bool) -> Callable[[str], None]:
    """A build's progress on stderr: ``what`` at once, then each stage with the seconds so far
    (a build takes about 20 s)."""
    import sys
    import time

    if quiet:
        return lambda _stage: None
    started = time.perf_counter()
    sys.stderr.write(f"msmap: {what} (once) ...\n")

    def stage(text: str) -> None:
        sys.stderr.write(f"msmap:   {time.perf_counter() - started:4.1f} s  {text}\n")
        sys.stderr.flush()

    return stage


def _adopt_bundled(data: Path, db: Path, fingerprint: str) -> bool:
    """Copy the DB built into the installed package (``paths.bundled_db``) to ``db`` when it was
    built from exactly these data files (same names and bytes), instead of building it again."""
    bundled = paths.bundled_db()
    if not bundled.is_file() or bundled.resolve() == db.resolve():
        return False
    try:
        conn = sqlite3.connect(read_only_uri(bundled), uri=True)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key='content'").fetchone()
        finally:
            conn.close()
        if not row or row[0] != paths.content_fingerprint(data):
            return False
        paths.write_atomically(db, bundled)
        conn = sqlite3.connect(db)
        try:  # fresh for this data folder from now on
            with conn:
                conn.execute("UPDATE meta SET value=? WHERE key='fingerprint'", (fingerprint,))
        finally:
            conn.close()
    except (sqlite3.Error, OSError):
        return False
    return True


def like_escape(text: str) -> str:
    """``text`` matched literally by ``LIKE ... ESCAPE '\\'`` (its % and _ are not wildcards)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class KB:
    """A read-only view of the knowledge base."""

    def __init__(self, db_path: Path, results: bool = True) -> None:
        """``results=False``: targets in records leave out their ``checks`` and ``probes`` (recorded
        verification results).  The analysis engine never reads them and loading them is most of
        the cost of a record, so scan and convert workers open the KB this way."""
        self.path = db_path
        self.results = results
        try:
            self.conn = sqlite3.connect(read_only_uri(db_path), uri=True, check_same_thread=False)
            self.conn.row_factory = sqlite3.Row
            self.meta = {r["key"]: r["value"] for r in self.conn.execute("SELECT key, value FROM meta")}
        except sqlite3.DatabaseError as exc:
            raise DatabaseError(f"{db_path}: not a usable msmap database ({exc}); run 'msmap build'") from None
        self.mapping = lru_cache(maxsize=4096)(self._mapping)

    def unreadable(self) -> str | None:
        """None when a whole record can be read, else why not: a damaged file, or one built by
        an msmap whose tables differ from what this one reads (the data did not change, the code did)."""
        try:
            first = self.conn.execute("SELECT torch FROM mappings ORDER BY torch LIMIT 1").fetchone()
            if first is not None:
                self._mapping(first[0])
        except (sqlite3.Error, IndexError, KeyError, ValueError) as exc:
            return f"{type(exc).__name__}: {exc}"
        return None

    @classmethod
    def open(cls, db: Path | None = None, data: Path | None = None, quiet: bool = True) -> KB:
        return cls(ensure_db(data, db, quiet=quiet))

    # --- names -----------------------------------------------------------
    @property
    def torch_names(self) -> frozenset[str]:
        if not hasattr(self, "_torch_names"):
            self._torch_names = frozenset(r[0] for r in self.conn.execute("SELECT torch FROM mappings"))
        return self._torch_names

    @property
    def by_short(self) -> dict[str, list[str]]:
        """Torch names by their last component, each list sorted (the engine asks this per unknown name)."""
        if not hasattr(self, "_by_short"):
            found: dict[str, list[str]] = {}
            for name in sorted(self.torch_names):
                found.setdefault(name.rsplit(".", 1)[-1], []).append(name)
            self._by_short = found
        return self._by_short

    def is_torch_api(self, name: str) -> bool:
        return name in self.torch_names

    def tensor_method(self, method: str) -> str | None:
        full = f"torch.Tensor.{method}"
        return full if full in self.torch_names else None

    def ms_exists(self, name: str) -> bool:
        return self.conn.execute("SELECT 1 FROM apis WHERE name=? LIMIT 1", (name,)).fetchone() is not None

    def resolve(self, name: str) -> str | None:
        """Canonical torch or MindSpore name for a user-typed name, or None."""
        return self.resolve_all(name)[0]

    @property
    def spellings(self) -> Spellings:
        """Other spellings of torch's objects and the members of its classes (kb/spellings.py)."""
        if not hasattr(self, "_spellings"):
            self._spellings = Spellings(self.conn)
        return self._spellings

    def spelling(self, name: str) -> str | None:
        """The record an implementation path or re-export of its object stands for
        (``torch.nn.modules.linear.Linear`` -> ``torch.nn.Linear``), else None."""
        return self.spellings.canonical(name)

    def explain(self, name: str) -> str | None:
        """Why ``name`` answers with another record: the spelling or class member it is (lookup's note)."""
        for cand in names.candidates(name):
            if cand in self.torch_names:
                return None
            if self.spelling(cand):
                return f"{cand} is {self.spelling(cand)} (the same object in torch)"
            member = self.spellings.member(cand, self.torch_names)
            if member:
                return member[1]
        return None

    def resolve_all(self, name: str) -> tuple[str | None, list[str]]:
        """(canonical name or None, other candidates when the name is ambiguous)."""
        for cand in names.candidates(name):
            if cand in self.torch_names:
                return cand, []
            if names.is_mindspore(cand) and (self.ms_exists(cand) or self._reverse_rows(cand)):
                return cand, []
        for cand in names.candidates(name):  # another spelling of a known object, or a member of a known class
            found = self.spelling(cand) or (self.spellings.member(cand, self.torch_names) or (None, ""))[0]
            if found:
                return found, []
        method = names.method_name(name)
        if method and self.tensor_method(method):
            return f"torch.Tensor.{method}", []
        rows = self.by_short.get(names.normalize(name).rsplit(".", 1)[-1], [])
        if len(rows) == 1:
            return rows[0], []
        return None, list(rows)

    def suggest(self, name: str, n: int = 5) -> list[str]:
        """Names close to an unknown ``name``: by the edit distance of the last segment, then the
        more common API in real code (``torch.nn.Dropuot`` -> ``torch.nn.Dropout`` before the
        quantized Dropouts), then the closer full name."""
        import difflib

        from kb.search import closeness, usage

        name = names.normalize(name)
        short = name.rsplit(".", 1)[-1].lower()
        all_names = sorted(self.torch_names)
        by_short: dict[str, list[str]] = {}
        for full in all_names:
            by_short.setdefault(full.rsplit(".", 1)[-1].lower(), []).append(full)
        found: list[str] = []
        for s in difflib.get_close_matches(short, list(by_short), n=max(n, 10), cutoff=0.6):
            found.extend(by_short[s])
        found.extend(difflib.get_close_matches(name, all_names, n=n, cutoff=0.75))
        sites = usage(self.conn)
        ranked = sorted(dict.fromkeys(found), key=lambda full: (
            *closeness(name, full, sites), -difflib.SequenceMatcher(None, name, full).ratio(), full))
        return ranked[:n]

    # --- records ---------------------------------------------------------
    def _mapping(self, torch_name: str) -> dict[str, Any] | None:
        m = self.conn.execute("SELECT * FROM mappings WHERE torch=?", (torch_name,)).fetchone()
        if m is None:
            return None
        targets = [self._target(t) for t in self.conn.execute(
            "SELECT * FROM targets WHERE torch=? ORDER BY seq", (torch_name,))]
        caveats = [self._caveat(c) for c in self.conn.execute(
            "SELECT c.* FROM caveats c JOIN mapping_caveats l ON l.caveat_id=c.id WHERE l.torch=? ORDER BY l.seq",
            (torch_name,))]
        caveats.sort(key=lambda c: SEVERITY_ORDER.get(c["severity"], 9))
        return {
            "torch": m["torch"], "kind": m["kind"], "namespace": m["namespace"], "source": m["source"],
            "torch_signature": m["torch_signature"], "advice": m["advice"],
            "provenance": json.loads(m["provenance"] or "[]"), "summary": m["summary"],
            "targets": targets, "caveats": caveats,
            **({"timings": self.timings_for(torch_name)} if self.results else {}),
        }

    def _target(self, t: sqlite3.Row) -> dict[str, Any]:
        return {
            "family": t["family"], "api": t["api"], "relation": t["relation"], "auto": bool(t["auto"]),
            "ms_versions": {"since": t["since"], "until": t["until"]}, "ms_signature": t["ms_signature"],
            "note": t["note"], "example": json.loads(t["example"]) if t["example"] else None,
            "params": json.loads(t["params"] or "[]"), "provenance": json.loads(t["provenance"] or "[]"),
            "source": t["source"], "no_kernel": json.loads(t["no_kernel"] or "[]"),
            "template": json.loads(t["template"] or "[]"), "helper": t["helper"],
            "proof": json.loads(t["proof"]) if "proof" in t.keys() and t["proof"] else None,
            **({"checks": self.checks_for(t["api"]) if t["api"] else [],
                "probes": self.probes_for(t["torch"], t["api"]) if t["api"] else []} if self.results else {}),
        }

    @staticmethod
    def _caveat(c: sqlite3.Row) -> dict[str, Any]:
        return {
            "id": c["id"], "title": c["title"], "body": c["body"], "severity": c["severity"], "topic": c["topic"],
            "applies_to": json.loads(c["applies_to"]),
            "ms_versions": {"since": c["ms_since"], "until": c["ms_until"]},
            "torch_versions": {"since": c["torch_since"], "until": c["torch_until"]},
            "provenance": json.loads(c["provenance"]), "claims": json.loads(c["claims"]),
        }

    def checks_for(self, subject: str) -> list[dict[str, Any]]:
        """Recorded check/probe results about an API (filled once `msmap check` results exist)."""
        if not self._has_table("checks"):
            return []
        try:
            rows = self.conn.execute("SELECT * FROM checks WHERE subject=?", (subject,)).fetchall()
        except sqlite3.OperationalError:
            return []
        return [dict(r) for r in rows]

    def probes_for(self, torch_name: str, ms_api: str) -> list[dict[str, Any]]:
        """Recorded executable-probe results for a (torch API, MindSpore API) pair."""
        if not self._has_table("probes"):
            return []
        try:
            rows = self.conn.execute(
                "SELECT * FROM probes WHERE torch=? AND ms_api=? ORDER BY ms_version, device", (torch_name, ms_api)
            ).fetchall()
        except sqlite3.OperationalError:
            return []
        return [dict(r) for r in rows]

    def timings_for(self, torch_name: str) -> list[dict[str, Any]]:
        """Recorded op timings (``msmap probe --timing``) of the ops measured for a torch API."""
        if not self._has_table("timing_names"):
            return []
        rows = self.conn.execute(
            "SELECT t.* FROM timings t JOIN timing_names n ON n.op=t.op WHERE n.torch=? "
            "ORDER BY t.op, t.family, t.device, t.ms_version, t.shape", (torch_name,)).fetchall()
        return [dict(r) for r in rows]

    def timings(self) -> list[dict[str, Any]]:
        """Every recorded op timing, by op, family, device, MindSpore version and shape."""
        if not self._has_table("timings"):
            return []
        rows = self.conn.execute("SELECT * FROM timings ORDER BY op, family, device, ms_version, shape").fetchall()
        return [dict(r) for r in rows]

    def _has_table(self, table: str) -> bool:
        if not hasattr(self, "_tables"):
            self._tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        return table in self._tables

    def caveats(self) -> list[dict[str, Any]]:
        """Every caveat, sorted by topic then id."""
        rows = self.conn.execute("SELECT * FROM caveats ORDER BY topic, id").fetchall()
        return [self._caveat(r) for r in rows]

    def caveat(self, cid: str) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT * FROM caveats WHERE id=?", (cid,)).fetchone()
        return self._caveat(row) if row else None

    def _reverse_rows(self, ms_name: str) -> list[sqlite3.Row]:
        return self.conn.execute(
            "SELECT torch, family, relation FROM targets WHERE api=? ORDER BY torch", (ms_name,)).fetchall()

    def reverse(self, ms_name: str) -> dict[str, Any] | None:
        """Which torch APIs map to a MindSpore API, and the caveats that mention either."""
        rows = self._reverse_rows(ms_name)
        api = self.conn.execute(
            "SELECT signature, version FROM apis WHERE name=? ORDER BY version DESC", (ms_name,)).fetchall()
        if not rows and not api:
            return None
        cav_rows = self.conn.execute(
            "SELECT DISTINCT c.* FROM caveats c JOIN mapping_caveats l ON l.caveat_id=c.id "
            "JOIN targets t ON t.torch=l.torch WHERE t.api=?", (ms_name,)).fetchall()
        caveats = {r["id"]: self._caveat(r) for r in cav_rows}
        for r in self.conn.execute("SELECT * FROM caveats WHERE applies_to LIKE ? ESCAPE '\\'",
                                   (f'%"{like_escape(ms_name)}"%',)):
            caveats.setdefault(r["id"], self._caveat(r))
        return {
            "mindspore": ms_name,
            "ms_signature": api[0]["signature"] if api else None,
            "ms_versions_present": sorted({r["version"] for r in api}, key=version_key),
            "torch": [{"torch": r["torch"], "family": r["family"], "relation": r["relation"]} for r in rows],
            "caveats": sorted(caveats.values(), key=lambda c: SEVERITY_ORDER.get(c["severity"], 9)),
            "checks": self.checks_for(ms_name),
        }

    def namespace(self, prefix: str) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT torch, summary FROM mappings WHERE torch LIKE ? ESCAPE '\\' ORDER BY torch",
            (like_escape(prefix) + ".%",)).fetchall()
        return [{"torch": r["torch"], "summary": r["summary"]} for r in rows]

    # --- search ----------------------------------------------------------
    def search(self, query: str, limit: int = 20) -> list[dict[str, Any]]:
        from kb.search import search

        return search(self.conn, query, limit)

    # --- stats -----------------------------------------------------------
    def weight_rules(self) -> list[dict[str, Any]]:
        """The state_dict key rules (data/curated/weights.yaml), in file order, each with its origin."""
        if not self._has_table("weight_rules"):
            return []
        rows = self.conn.execute("SELECT rule, origin FROM weight_rules ORDER BY seq")
        return [{**json.loads(r["rule"]), "origin": r["origin"]} for r in rows]

    def stats(self) -> dict[str, Any]:
        rows = self.conn.execute(
            "SELECT m.namespace AS ns, m.torch AS torch, t.family AS family, t.relation AS relation "
            "FROM mappings m LEFT JOIN targets t ON t.torch=m.torch").fetchall()
        per: dict[str, dict[str, Any]] = {}
        seen: dict[str, set] = {}
        for r in rows:
            ns = per.setdefault(r["ns"], {"entries": 0, "classic": 0, "mint": 0, "no_equivalent": 0, "relations": {}})
            s = seen.setdefault(r["ns"], set())
            if r["torch"] not in s:
                s.add(r["torch"])
                ns["entries"] += 1
            if r["family"] and r["relation"] != "no_equivalent":
                key = (r["torch"], r["family"])
                if key not in s:
                    s.add(key)
                    ns[r["family"]] += 1
            if r["relation"]:
                ns["relations"][r["relation"]] = ns["relations"].get(r["relation"], 0) + 1
        for name, d in per.items():
            mapped = {t for t in seen[name] if isinstance(t, tuple)}
            d["no_equivalent"] = d["entries"] - len({t for t, _ in mapped})
        total = {k: sum(d[k] for d in per.values()) for k in ("entries", "classic", "mint", "no_equivalent")}
        curated = self.conn.execute("SELECT count(*) FROM mappings WHERE source LIKE 'curated%'").fetchone()[0]
        caveats = self.conn.execute("SELECT count(*) FROM caveats").fetchone()[0]
        return {"namespaces": dict(sorted(per.items())), "total": total, "curated": curated, "caveats": caveats,
                "rewrites": self.rewrite_proofs(),
                "ms_versions": json.loads(self.meta.get("ms_versions", "[]")),
                "torch_version": self.meta.get("torch_version")}

    def rewrite_proofs(self) -> dict[str, dict[str, int]]:
        """Per family, from the executed rewrite probes (``msmap probe --rewrites``): ``auto`` targets;
        ``proven`` (an emitted rewrite ran and matched torch); ``not_call_probed`` (automatic without a
        call probe: not tensor computations, names that are not calls); ``unprobed`` = auto targets that
        are neither (0 once every automatic rewrite is gated by its proof); ``unproven_off``: targets
        the gate turned off (no proof); ``failed``: a rewrite probe found other results than torch.
        ``values_targets``: auto targets whose proof records parameter values; ``values_proven`` /
        ``values_failed``: (parameter, value class) pairs proven / found different, over those."""
        columns = {r[1] for r in self.conn.execute("PRAGMA table_info(targets)")}
        proof = "proof" if "proof" in columns else "NULL"
        keys = ("auto", "proven", "not_call_probed", "unprobed", "unproven_off", "failed", "values_targets",
                "values_proven", "values_failed")
        out: dict[str, dict[str, int]] = {}
        for family, auto, note, text in self.conn.execute(
                f"SELECT family, auto, note, {proof} FROM targets WHERE api IS NOT NULL"):
            d = out.setdefault(family, dict.fromkeys(keys, 0))
            record = json.loads(text) if text else {}
            result = record.get("result")
            if auto:
                d["auto"] += 1
                if result == "proven":
                    d["proven"] += 1
                elif not_call_probed(record):
                    d["not_call_probed"] += 1
                else:
                    d["unprobed"] += 1
                values = record.get("values") or {}
                if values:
                    d["values_targets"] += 1
                    d["values_proven"] += sum(len(v.get("proven") or []) for v in values.values())
                    d["values_failed"] += sum(len(v.get("failed") or []) for v in values.values())
            elif result == "failed":
                d["failed"] += 1
            elif str(note or "").startswith("Unproven rewrite:"):
                d["unproven_off"] += 1
        return dict(sorted(out.items()))
