"""Ranked, typo-tolerant full-text search over names, notes and caveats (SQLite FTS5).

Each query word that is not in the index vocabulary is replaced by its closest
vocabulary terms (difflib), so ``dropuot`` still finds Dropout.  Matches in API
names rank above matches in titles, which rank above matches in bodies; an API whose
name ends with the query (``Dropout``, ``nn.Dropout``) comes before all of them.  A query
that is one (dotted) name ranks APIs by the edit distance of their last segment to it, then
by how common they are in real code (data/usage), then caveats.
"""
from __future__ import annotations

import difflib
import re
import sqlite3
from typing import Any

WORD = re.compile(r"[A-Za-z0-9_]+")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")  # one dotted name
WEIGHTS = "bm25(search, 0.0, 0.0, 10.0, 4.0, 1.0)"  # ref, kind, name, title, body


def _vocab(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT term FROM search_vocab")]


def _expand(conn: sqlite3.Connection, words: list[str]) -> tuple[list[list[str]], dict[str, list[str]]]:
    vocab: list[str] | None = None
    groups, corrected = [], {}
    for w in words:
        present = conn.execute("SELECT 1 FROM search_vocab WHERE term=?", (w,)).fetchone()
        if present:
            groups.append([w])
            continue
        vocab = vocab if vocab is not None else _vocab(conn)
        close = difflib.get_close_matches(w, vocab, n=3, cutoff=0.7)
        if close:
            corrected[w] = close
            groups.append(close)
        else:
            groups.append([w + "*"])  # maybe a prefix of a longer word
    return groups, corrected


def _fts_query(groups: list[list[str]]) -> str:
    def term(t: str) -> str:
        return f'"{t[:-1]}"*' if t.endswith("*") else f'"{t}"'

    return " AND ".join("(" + " OR ".join(term(t) for t in g) + ")" for g in groups)


def distance(a: str, b: str) -> int:
    """Edits (insert, delete, replace, swap two neighbours) that turn ``a`` into ``b``: a typo such
    as ``dropuot`` is one swap from ``dropout``."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            cost = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cost = min(cost, previous2[j - 2] + 1)
            current.append(cost)
        previous2, previous = previous, current
    return previous[-1]


def usage(conn: sqlite3.Connection) -> dict[str, int]:
    """Use sites per torch API in real code (data/usage); empty for a DB built without it."""
    try:
        return dict(conn.execute("SELECT torch, sites FROM usage").fetchall())
    except sqlite3.OperationalError:
        return {}


def closeness(query: str, name: str, sites: dict[str, int]) -> tuple[int, int, int, bool]:
    """Sort key of ``name`` as an answer to a one-name ``query``: the edit distance between their
    last dotted segments (any case), then the more common API in real code, then the distance
    with case (``Dropout`` before ``dropout`` for ``Dropuot``), then torch's own API before its
    ecosystem's (``torch.Tensor.repeat`` before ``einops.repeat``)."""
    want, last = query.rsplit(".", 1)[-1], name.rsplit(".", 1)[-1]
    return (distance(want.lower(), last.lower()), -sites.get(name, 0), distance(want, last),
            not name.startswith("torch."))


def exact_name(ref: str, query: str) -> bool:
    """``query`` is the API's name or its last dotted parts: ``Dropout`` or ``nn.Dropout`` for
    ``torch.nn.Dropout`` (any case). Such hits come first, whatever their full-text score."""
    name, wanted = ref.lower(), query.strip().lower()
    return bool(wanted) and (name == wanted or name.endswith("." + wanted))


MAX_WORDS = 32  # a longer query is refused (each unknown word costs a vocabulary scan)
MAX_WORD = 64  # characters kept of each word


def check_query(query: str) -> None:
    """Raise ValueError for a query longer than the search answers."""
    count = len(WORD.findall(query))
    if count > MAX_WORDS:
        raise ValueError(f"the query has {count:,} words; at most {MAX_WORDS}")


def search(conn: sqlite3.Connection, query: str, limit: int = 20) -> list[dict[str, Any]]:
    check_query(query)
    words = [w.lower()[:MAX_WORD] for w in WORD.findall(query)]
    if not words:
        return []
    groups, corrected = _expand(conn, words)
    sql = (
        f"SELECT ref, kind, title, {WEIGHTS} AS rank, snippet(search, 4, '[', ']', '…', 12) AS snip "
        "FROM search WHERE search MATCH ? ORDER BY rank LIMIT ?"
    )
    one_name = len(words) == 1 and bool(NAME.fullmatch(query.strip()))
    wanted = max(limit * 5, 100) if one_name else limit  # candidates to rank by name
    rows = conn.execute(sql, (_fts_query(groups), wanted)).fetchall()
    if not rows and len(groups) > 1:  # fall back to any word
        flat = [[t for g in groups for t in g]]
        rows = conn.execute(sql, (_fts_query(flat), wanted)).fetchall()
    if one_name:  # an API name, maybe misspelt: the closest names first, the common before the rare
        sites = usage(conn)
        far = (1 << 30, 0, 0, True)
        def key(r: sqlite3.Row) -> tuple[bool, tuple[int, int, int, bool]]:
            if exact_name(r[0], query):  # the common first, torch's own next, else in full-text order
                return False, (0, -sites.get(r[0], 0), 0, not r[0].startswith("torch."))
            return True, closeness(query.strip(), r[0], sites) if r[1] == "mapping" else far

        rows = sorted(rows, key=key)
    else:
        rows = sorted(rows, key=lambda r: not exact_name(r[0], query))  # stable: FTS order otherwise
    rows = rows[:limit]
    out = []
    for r in rows:
        item: dict[str, Any] = {"ref": r[0], "kind": r[1], "title": r[2], "score": round(-r[3], 3), "snippet": r[4]}
        if r[1] == "mapping":
            s = conn.execute("SELECT summary FROM mappings WHERE torch=?", (r[0],)).fetchone()
            item["summary"] = s[0] if s else ""
        if corrected:
            item["corrected"] = corrected
        out.append(item)
    return out
