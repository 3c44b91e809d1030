"""The SQLite index under the data directory: sources seen, handoffs, the two inverted indexes,
full text, and the term statistics the extractor needs. WAL mode with a busy timeout, so the bot's
scheduled ingest and readers (CLI, MCP, hooks) work on one file at once.

Every change goes through `transaction()`: a crash leaves the store as it was before or after it.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path

import orjson

from core.fulltext import fulltext_columns
from core.handoff import Handoff

SCHEMA_VERSION = "2"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources(
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    session_uuid TEXT,
    kind TEXT NOT NULL,
    bad_lines INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS sources_session ON sources(session_uuid);
CREATE TABLE IF NOT EXISTS handoffs(
    session_uuid TEXT PRIMARY KEY,
    short_id TEXT NOT NULL,
    date TEXT NOT NULL,
    ended_at TEXT NOT NULL DEFAULT '',
    duration_min INTEGER NOT NULL DEFAULT 0,
    model TEXT NOT NULL DEFAULT '',
    headline TEXT NOT NULL,
    projects TEXT NOT NULL DEFAULT '[]',
    keywords TEXT NOT NULL DEFAULT '[]',
    substance INTEGER NOT NULL,
    path TEXT NOT NULL,
    archive_path TEXT NOT NULL DEFAULT '',
    body TEXT NOT NULL,
    origin TEXT NOT NULL DEFAULT 'extracted',
    extractor TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS handoffs_short ON handoffs(short_id);
CREATE INDEX IF NOT EXISTS handoffs_date ON handoffs(date);
CREATE TABLE IF NOT EXISTS project_index(
    project TEXT NOT NULL, session_uuid TEXT NOT NULL, PRIMARY KEY(project, session_uuid)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS keyword_index(
    keyword TEXT NOT NULL, session_uuid TEXT NOT NULL, PRIMARY KEY(keyword, session_uuid)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS project_index_session ON project_index(session_uuid);
CREATE INDEX IF NOT EXISTS keyword_index_session ON keyword_index(session_uuid);
CREATE VIRTUAL TABLE IF NOT EXISTS fulltext USING fts5(
    session_uuid UNINDEXED, handoff, prompts, replies, actions, context, tokenize = 'porter unicode61'
);
CREATE TABLE IF NOT EXISTS term_df(term TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS session_terms(session_uuid TEXT PRIMARY KEY, terms TEXT NOT NULL);
"""


class StoreError(RuntimeError):
    """The store cannot be opened or used; the message says what to do."""


class Store:
    """One connection to the index. Not shared between threads: open one per thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(path, timeout=30, isolation_level=None)
            self.conn.execute("PRAGMA busy_timeout=30000")
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            with self.transaction():
                for statement in _split_statements(_SCHEMA):
                    self.conn.execute(statement)
                self.conn.execute(
                    "INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', ?)", (SCHEMA_VERSION,)
                )
            found = self.get_meta("schema_version")
            if found != SCHEMA_VERSION:
                raise StoreError(
                    f"the index {path} has schema {found}, this eywa needs {SCHEMA_VERSION}: delete the file "
                    f"and run `eywa reindex` (handoff files are kept) or `eywa ingest`"
                )
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open the index at {path}: {exc}") from exc
        except OSError as exc:
            raise StoreError(f"cannot create the data directory {path.parent}: {exc.strerror}") from exc

    def close(self) -> None:
        self.conn.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT; rolled back on any exception."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # -- meta -------------------------------------------------------------------------------------
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", (key, value))

    # -- sources ----------------------------------------------------------------------------------
    def source_states(self) -> dict[str, tuple[int, int, str | None, str]]:
        """path -> (size, mtime_ns, session_uuid, kind) for every source file seen before."""
        rows = self.conn.execute("SELECT path, size, mtime_ns, session_uuid, kind FROM sources")
        return {row[0]: (row[1], row[2], row[3], row[4]) for row in rows}

    def put_source(self, path: str, size: int, mtime_ns: int, session_uuid: str | None, kind: str,
                   bad_lines: int) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO sources(path, size, mtime_ns, session_uuid, kind, bad_lines)"
            " VALUES(?, ?, ?, ?, ?, ?)",
            (path, size, mtime_ns, session_uuid, kind, bad_lines),
        )

    # -- handoffs ---------------------------------------------------------------------------------
    def put_handoff(self, handoff: Handoff, *, path: str, archive_path: str = "", transcript: str = "",
                    ended_at: str = "", origin: str = "extracted", extractor: str = "") -> None:
        """Insert or replace a handoff with its index rows and full text. Call inside a transaction.

        `transcript` is the session's rendered markdown (empty for imported handoffs).
        """
        uid = handoff.session_uuid
        self.delete_handoff(uid)
        cursor = self.conn.execute(
            "INSERT INTO handoffs(session_uuid, short_id, date, ended_at, duration_min, model, headline,"
            " projects, keywords, substance, path, archive_path, body, origin, extractor)"
            " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                uid, handoff.session_id, handoff.date.isoformat(), ended_at, handoff.duration_minutes,
                handoff.model, handoff.headline, orjson.dumps(handoff.projects).decode(),
                orjson.dumps(handoff.keywords).decode(), handoff.substance, path, archive_path,
                handoff.body, origin, extractor,
            ),
        )
        self.conn.executemany(
            "INSERT OR IGNORE INTO project_index(project, session_uuid) VALUES(?, ?)",
            [(p.lower(), uid) for p in handoff.projects],
        )
        self.conn.executemany(
            "INSERT OR IGNORE INTO keyword_index(keyword, session_uuid) VALUES(?, ?)",
            [(k.lower(), uid) for k in handoff.keywords],
        )
        # The full-text row shares the handoff's rowid: deleting it then needs no scan of the FTS table.
        self.conn.execute(
            "INSERT INTO fulltext(rowid, session_uuid, handoff, prompts, replies, actions, context)"
            " VALUES(?, ?, ?, ?, ?, ?, ?)",
            (cursor.lastrowid, uid, handoff.body, *fulltext_columns(transcript)),
        )

    def delete_handoff(self, session_uuid: str) -> None:
        row = self.conn.execute("SELECT rowid FROM handoffs WHERE session_uuid = ?", (session_uuid,)).fetchone()
        if row is None:
            return
        self.conn.execute("DELETE FROM fulltext WHERE rowid = ?", (row[0],))
        for table in ("handoffs", "project_index", "keyword_index"):
            self.conn.execute(f"DELETE FROM {table} WHERE session_uuid = ?", (session_uuid,))

    def clear_index(self) -> None:
        """Drop every handoff and index row (sources and term statistics stay). Call inside a transaction."""
        for table in ("handoffs", "project_index", "keyword_index", "fulltext"):
            self.conn.execute(f"DELETE FROM {table}")

    # -- term statistics for the extractor ------------------------------------------------------------
    def document_count(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM session_terms").fetchone()[0]

    def term_df(self, terms: Iterable[str]) -> dict[str, int]:
        terms = list(terms)
        result: dict[str, int] = {}
        for start in range(0, len(terms), 500):
            chunk = terms[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self.conn.execute(f"SELECT term, df FROM term_df WHERE term IN ({marks})", chunk)
            result.update(dict(rows.fetchall()))
        return result

    def set_session_terms(self, session_uuid: str, terms: Iterable[str]) -> None:
        """Record a session's distinct terms, replacing what it had, and keep document frequencies right."""
        row = self.conn.execute("SELECT terms FROM session_terms WHERE session_uuid = ?", (session_uuid,)).fetchone()
        if row:
            self.conn.executemany(
                "UPDATE term_df SET df = df - 1 WHERE term = ?", [(t,) for t in orjson.loads(row[0])]
            )
        terms = sorted(set(terms))
        self.conn.executemany(
            "INSERT INTO term_df(term, df) VALUES(?, 1) ON CONFLICT(term) DO UPDATE SET df = df + 1",
            [(t,) for t in terms],
        )
        self.conn.execute(
            "INSERT OR REPLACE INTO session_terms(session_uuid, terms) VALUES(?, ?)",
            (session_uuid, orjson.dumps(terms).decode()),
        )


def _split_statements(script: str) -> list[str]:
    return [part.strip() for part in script.split(";\n") if part.strip()]
