"""The term statistics the extractor's keywords need: each session's distinct terms (`session_terms`)
and, per term, how many sessions have it (`term_df`), both in the store (core/index/store.py's tables).

Ingest records hundreds of terms per session; writing each count as it changes cost more than the
rest of storing a session. `TermStats` holds the counts of one transaction in memory (read from the
store once, when first needed) and writes each changed count once, in `flush`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

import orjson

_CHUNK = 500  # bound parameters per lookup query


class TermStats:
    """Document frequencies within one transaction: create it after BEGIN and `flush` it before COMMIT
    (another writer may change the counts between transactions)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._df: dict[str, int | None] = {}  # every term looked up so far; None: it has no row
        self._changed: set[str] = set()
        self._documents: int | None = None

    def document_count(self) -> int:
        if self._documents is None:
            self._documents = self.conn.execute("SELECT COUNT(*) FROM session_terms").fetchone()[0]
        return self._documents

    def df(self, terms: Iterable[str]) -> dict[str, int]:
        """term -> the number of recorded sessions that have it, for the terms that have a count."""
        terms = list(terms)
        self._load(terms)
        return {term: count for term in terms if (count := self._df[term]) is not None}

    def record(self, session_id: str, terms: Iterable[str]) -> None:
        """Record a session's distinct terms, replacing what it had, and keep the counts right."""
        row = self.conn.execute("SELECT terms FROM session_terms WHERE session_uuid = ?", (session_id,)).fetchone()
        old = orjson.loads(row[0]) if row else []
        new = sorted(set(terms))
        self._load(old + new)
        for term in old:
            count = self._df[term]
            if count is not None:
                self._df[term] = count - 1
                self._changed.add(term)
        for term in new:
            self._df[term] = (self._df[term] or 0) + 1
        self._changed.update(new)
        self.conn.execute(
            "INSERT OR REPLACE INTO session_terms(session_uuid, terms) VALUES(?, ?)",
            (session_id, orjson.dumps(new).decode()),
        )
        if row is None and self._documents is not None:
            self._documents += 1

    def forget(self, session_id: str) -> None:
        """Remove a session's terms from the counts (it was folded into another session)."""
        self.record(session_id, [])
        self.conn.execute("DELETE FROM session_terms WHERE session_uuid = ?", (session_id,))
        if self._documents is not None:
            self._documents -= 1

    def flush(self, *, drop_unused: bool = False) -> None:
        """Write the changed counts (a term seen once keeps its row, at 0, like before; with `drop_unused`, a
        term no session has any more loses its row, as if never seen: a forgotten session leaves no word)."""
        self.conn.executemany(
            "INSERT INTO term_df(term, df) VALUES(?, ?) ON CONFLICT(term) DO UPDATE SET df = excluded.df",
            [(term, self._df[term]) for term in sorted(self._changed)],
        )
        if drop_unused:
            self.conn.executemany("DELETE FROM term_df WHERE term = ? AND df <= 0",
                                  [(term,) for term in sorted(self._changed) if not self._df[term]])
        self._changed.clear()

    def _load(self, terms: list[str]) -> None:
        missing = list(set(terms).difference(self._df))
        found: dict[str, int] = {}
        for start in range(0, len(missing), _CHUNK):
            chunk = missing[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            found.update(self.conn.execute(f"SELECT term, df FROM term_df WHERE term IN ({marks})", chunk))
        self._df.update(dict.fromkeys(missing))  # None: no row
        self._df.update(found)
