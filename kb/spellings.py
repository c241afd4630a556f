"""Every spelling of a torch name, and the members of known classes (issue 26, item 6).

``msmap snapshot`` records, from the installed torch's object identities, which names are bound
to one object (``spellings``: ``torch.nn.modules.linear.Linear`` is ``torch.nn.Linear``) and each
class's own members by kind, with its bases (``members``; kb/introspect/spellings.py).  Build
time (``tables``) turns them into two tables: ``spellings`` (name -> the knowledge-base record of
its object, and the object's identity) and ``classes`` (identity -> members, bases).  Run time
(``Spellings``), without torch: the record a spelling stands for, and the answer for a member of
a known class: the member's own record when the knowledge base has one (``FSDP.state_dict`` is
``torch.nn.Module.state_dict``), else the class's record with a note for the member
(``SDPBackend.MATH``: an enum member; ``record_function.__enter__``: a special method).
"""
from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Any

OBJECT = "builtins.object"  # every class's last base: its special methods (dir(object))


def _rank(name: str) -> tuple[bool, int, str]:
    """Public first, then the shortest path: the name a group's other spellings answer with."""
    return any(part.startswith("_") for part in name.split(".")), name.count("."), name


def tables(snapshots: Iterable[dict[str, Any]], records: set[str]) -> tuple[list[dict], list[dict]]:
    """(spelling rows, class rows) from the newest torch snapshot that has spellings."""
    found = [s for s in snapshots if s.get("framework") == "torch" and s.get("spellings")]
    if not found:
        return [], []
    snap = found[-1]
    spelled: list[dict] = []
    named: set[str] = set()
    for identity, others in snap["spellings"].items():
        group = [identity, *others]
        known = sorted((n for n in group if n in records), key=_rank)
        if not known:
            continue
        for name in group:
            spelled.append({"name": name, "canonical": name if name in records else known[0], "identity": identity})
            named.add(name)
    for identity in snap.get("members") or {}:  # a class with one spelling: its members still resolve
        if identity in records and identity not in named:
            spelled.append({"name": identity, "canonical": identity, "identity": identity})
    classes = [{"identity": identity, "members": json.dumps(_by_member(entry), sort_keys=True),
                "mro": json.dumps(entry.get("mro") or [])}
               for identity, entry in (snap.get("members") or {}).items()]
    classes.append({"identity": OBJECT, "mro": "[]", "members": json.dumps(
        {name: "special method" for name in snap.get("object_members") or ()}, sort_keys=True)})
    return spelled, classes


def _by_member(entry: dict[str, Any]) -> dict[str, str]:
    return {name: kind for kind, names in entry.items() if kind != "mro" for name in names}


def write(db: Any, snapshots: Iterable[dict[str, Any]], records: set[str]) -> None:
    """The two tables into a sqlite_utils database being built (kb/build.py)."""
    spelled, classes = tables(snapshots, records)
    db.execute("CREATE TABLE spellings (name TEXT PRIMARY KEY, canonical TEXT NOT NULL, identity TEXT NOT NULL)")
    db.execute("CREATE TABLE classes (identity TEXT PRIMARY KEY, members TEXT NOT NULL, mro TEXT NOT NULL)")
    db.conn.executemany("INSERT OR IGNORE INTO spellings VALUES (:name, :canonical, :identity)", spelled)
    db.conn.executemany("INSERT OR IGNORE INTO classes VALUES (:identity, :members, :mro)", classes)


class Spellings:
    """The tables of one knowledge base; empty for a database built before they existed."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        try:
            rows = conn.execute("SELECT name, canonical, identity FROM spellings").fetchall()
        except sqlite3.Error:
            rows = []
        self.names: dict[str, tuple[str, str]] = {name: (canonical, identity) for name, canonical, identity in rows}
        self._classes: dict[str, tuple[dict[str, str], list[str]] | None] = {}

    def canonical(self, name: str) -> str | None:
        """The record ``name`` stands for when it is another spelling of its object, else None."""
        found = self.names.get(name)
        return found[0] if found is not None and found[0] != name else None

    def _class(self, identity: str) -> tuple[dict[str, str], list[str]] | None:
        if identity not in self._classes:
            try:
                row = self.conn.execute("SELECT members, mro FROM classes WHERE identity=?", (identity,)).fetchone()
            except sqlite3.Error:
                row = None
            self._classes[identity] = (json.loads(row[0]), json.loads(row[1])) if row else None
        return self._classes[identity]

    def member(self, name: str, records: frozenset[str] | set[str]) -> tuple[str, str] | None:
        """(record to answer with, note) for ``name`` = a known class (any spelling) + one of its
        members, own or inherited; None when ``name`` is no such member."""
        prefix, _, member = name.rpartition(".")
        found = self.names.get(prefix) if prefix and member else None
        if found is None or self._class(found[1]) is None:
            return None
        canonical, identity = found
        own = self._class(identity)
        chain = [identity, *(own[1] if own else []), OBJECT]
        for owner in chain:
            known = self._class(owner)
            if known is not None and member in known[0]:
                kind = known[0][member]
                break
        else:
            return None
        owner_name = self.names.get(owner, (owner,))[0] if owner != OBJECT else "object"
        if owner != identity and f"{owner_name}.{member}" in records:  # inherited, with its own record
            return f"{owner_name}.{member}", f"{member}: {kind} {canonical} inherits from {owner_name}"
        where = "" if owner == identity else f" (inherited from {owner_name})"
        return canonical, f"{member}: {kind} of {canonical}{where}; the class's record follows"
