"""The benchmark issue's reference method, measured beside Eywa's scorers on the same sessions: SQLite
FTS5 BM25 (porter tokenizer) over the conversation text only (what the user and Claude wrote, as the
index's full-text columns hold it), the query an OR of all its words.

Measuring it here pins down which measure the issue's reference points use (hit@k, not recall@k: the
figures are in bench/RESULTS.md, "Retrieval quality").
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from pathlib import Path

NAME = "fts5 reference"
_WORD_RE = re.compile(r"\w+")


class Reference:
    """An in-memory FTS5 table of (session id, conversation text) to rank queries against."""

    def __init__(self, sessions: Iterable[tuple[str, str]]) -> None:
        self._conn = sqlite3.connect(":memory:")
        self._conn.execute("CREATE VIRTUAL TABLE conversation USING fts5(session UNINDEXED, text, tokenize='porter')")
        self._conn.executemany("INSERT INTO conversation(session, text) VALUES (?, ?)", sessions)

    @classmethod
    def of_index(cls, db_path: Path) -> Reference:
        """The conversations of every session in an Eywa index."""
        with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as index:
            rows = index.execute("SELECT h.session_uuid, f.prompts || char(10) || f.replies FROM fulltext AS f"
                                 " JOIN handoffs AS h ON h.rowid = f.id").fetchall()
        return cls(rows)

    def rank(self, query: str, limit: int = 10) -> list[str]:
        """Session ids, best BM25 first; none when the query has no word."""
        words = dict.fromkeys(_WORD_RE.findall(query.lower()))
        if not words:
            return []
        match = " OR ".join('"' + word.replace('"', '""') + '"' for word in words)
        return [session for (session,) in self._conn.execute(
            "SELECT session FROM conversation WHERE conversation MATCH ? ORDER BY bm25(conversation), session"
            " LIMIT ?", (match, limit))]
