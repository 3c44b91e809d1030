"""The SQLite index under the data directory: sources seen, handoffs, the two inverted indexes,
full text, and the term statistics the extractor needs (read and written by core/index/term_stats.py). WAL
mode with a busy timeout, so the bot's scheduled ingest and readers (CLI, MCP, hooks) work on one file
at once.

Every change goes through `transaction()`: a crash leaves the store as it was before or after it.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import orjson

from eywa.core.archive.columns import FulltextColumns, fulltext_columns
from eywa.core.config.private_files import open_data_dir
from eywa.core.errors import StoreError
from eywa.core.handoffs.model import Handoff
from eywa.core.index import text_index
from eywa.core.index.connection import open_writer
from eywa.core.index.migrations import Migration, migrate
from eywa.core.index.readonly import columns, index_path, open_index
from eywa.core.index.schema_version import LATEST_MIGRATION, SCHEMA_VERSION, needs_migrating
from eywa.core.index.storage_faults import describe
from eywa.core.index.term_blocks import BLOCKS_SCHEMA, IndexBounds, fill_blocks

_FULLTEXT_COLUMNS = """
    id INTEGER PRIMARY KEY, session_uuid TEXT NOT NULL, handoff TEXT NOT NULL DEFAULT '',
    prompts TEXT NOT NULL DEFAULT '', replies TEXT NOT NULL DEFAULT '', actions TEXT NOT NULL DEFAULT '',
    context TEXT NOT NULL DEFAULT ''
"""


def _counted(column: str) -> str:
    """The table `<column>_df` of each term's number of handoffs in `<column>_index`, counted afresh, and the
    triggers that keep it."""
    table, source = f"{column}_df", f"{column}_index"
    return f"""CREATE TABLE IF NOT EXISTS {table}({column} TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID;
DELETE FROM {table};
INSERT INTO {table}({column}, df) SELECT {column}, COUNT(*) FROM {source} GROUP BY {column};
CREATE TRIGGER IF NOT EXISTS {table}_insert AFTER INSERT ON {source} BEGIN
    INSERT INTO {table}({column}, df) VALUES(new.{column}, 1) ON CONFLICT({column}) DO UPDATE SET df = df + 1;
END;
CREATE TRIGGER IF NOT EXISTS {table}_delete AFTER DELETE ON {source} BEGIN
    UPDATE {table} SET df = df - 1 WHERE {column} = old.{column};
    DELETE FROM {table} WHERE {column} = old.{column} AND df <= 0;
END;
"""


_KEYWORD_DF = _counted("keyword")
_SCHEMA = f"""
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
-- What the transcript reader did not know in each source file (kind 'type' or 'field'; one 'file' row a
-- file), by the file's Claude Code version: `eywa stats` and the bot's /status show the sums. Files read
-- before it existed have no rows until they change.
CREATE TABLE IF NOT EXISTS source_drift(
    path TEXT NOT NULL, version TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY(path, kind, name)
) WITHOUT ROWID;
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
    extractor TEXT NOT NULL DEFAULT '',
    agent TEXT NOT NULL DEFAULT 'claude-code',
    machine TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS handoffs_short ON handoffs(short_id);
CREATE INDEX IF NOT EXISTS handoffs_date ON handoffs(date);
CREATE INDEX IF NOT EXISTS handoffs_agent ON handoffs(agent);
CREATE TABLE IF NOT EXISTS project_index(
    project TEXT NOT NULL, session_uuid TEXT NOT NULL,
    date TEXT NOT NULL DEFAULT '', duration_min INTEGER NOT NULL DEFAULT 0, substance INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY(project, session_uuid)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS keyword_index(
    keyword TEXT NOT NULL, session_uuid TEXT NOT NULL,
    date TEXT NOT NULL DEFAULT '', duration_min INTEGER NOT NULL DEFAULT 0, substance INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY(keyword, session_uuid)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS project_index_session ON project_index(session_uuid);
CREATE INDEX IF NOT EXISTS keyword_index_session ON keyword_index(session_uuid);
-- Each term's postings by week of the handoff's date (core/index/term_blocks.py), what
-- core/retrieval/keyword_topk.py scores (it read these indexes before schema 5).
DROP INDEX IF EXISTS project_index_date;
DROP INDEX IF EXISTS keyword_index_date;
{BLOCKS_SCHEMA}-- Each keyword's number of handoffs, kept by triggers: the scorer reads it at every start, where a
-- GROUP BY over keyword_index takes ~0.25 s at 100k handoffs. Counted afresh when this migration runs.
{_KEYWORD_DF}-- Each handoff's text by kind (core/archive/columns.py), under the handoff's rowid; searched through
-- the index core/index/text_index.py derives from it. The triggers queue every change for that index.
CREATE TABLE IF NOT EXISTS fulltext({_FULLTEXT_COLUMNS});
CREATE TABLE IF NOT EXISTS text_index_queue(seq INTEGER PRIMARY KEY AUTOINCREMENT, id INTEGER NOT NULL);
CREATE TRIGGER IF NOT EXISTS fulltext_queue_insert AFTER INSERT ON fulltext BEGIN
    INSERT INTO text_index_queue(id) VALUES(new.id);
END;
CREATE TRIGGER IF NOT EXISTS fulltext_queue_update AFTER UPDATE ON fulltext BEGIN
    INSERT INTO text_index_queue(id) VALUES(old.id);
    INSERT INTO text_index_queue(id) VALUES(new.id);
END;
CREATE TRIGGER IF NOT EXISTS fulltext_queue_delete AFTER DELETE ON fulltext BEGIN
    INSERT INTO text_index_queue(id) VALUES(old.id);
END;
CREATE TABLE IF NOT EXISTS term_df(term TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS session_terms(session_uuid TEXT PRIMARY KEY, terms TEXT NOT NULL);
"""


# Each project's number of handoffs, and the number of handoffs, kept by triggers as keyword_df is: `eywa get`
# reads them at every start, where counting them is a pass over every handoff.
_COUNTS_SCHEMA = _counted("project") + """
CREATE TABLE IF NOT EXISTS handoff_counts(substantial INTEGER PRIMARY KEY, n INTEGER NOT NULL);
DELETE FROM handoff_counts;
INSERT INTO handoff_counts(substantial, n) SELECT substance > 0, COUNT(*) FROM handoffs GROUP BY substance > 0;
CREATE TRIGGER IF NOT EXISTS handoff_counts_insert AFTER INSERT ON handoffs BEGIN
    INSERT INTO handoff_counts(substantial, n) VALUES(new.substance > 0, 1)
        ON CONFLICT(substantial) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS handoff_counts_delete AFTER DELETE ON handoffs BEGIN
    UPDATE handoff_counts SET n = n - 1 WHERE substantial = (old.substance > 0);
END;
-- Each keyword under a rowid, and its trigrams (FTS5), kept as keyword_df gains and loses keywords: the
-- keywords holding a query word are found through the trigrams, not by reading every keyword.
CREATE TABLE IF NOT EXISTS keyword_vocab(id INTEGER PRIMARY KEY, keyword TEXT NOT NULL UNIQUE);
CREATE VIRTUAL TABLE IF NOT EXISTS keyword_trigrams USING fts5(keyword, content='keyword_vocab', content_rowid='id',
    tokenize='trigram', detail='none');
DELETE FROM keyword_vocab;
INSERT INTO keyword_vocab(keyword) SELECT keyword FROM keyword_df ORDER BY keyword;
INSERT INTO keyword_trigrams(keyword_trigrams) VALUES('rebuild');
CREATE TRIGGER IF NOT EXISTS keyword_vocab_insert AFTER INSERT ON keyword_df BEGIN
    INSERT INTO keyword_vocab(keyword) VALUES(new.keyword);
    INSERT INTO keyword_trigrams(rowid, keyword) SELECT id, keyword FROM keyword_vocab WHERE keyword = new.keyword;
END;
CREATE TRIGGER IF NOT EXISTS keyword_vocab_delete AFTER DELETE ON keyword_df BEGIN
    INSERT INTO keyword_trigrams(keyword_trigrams, rowid, keyword)
        SELECT 'delete', id, keyword FROM keyword_vocab WHERE keyword = old.keyword;
    DELETE FROM keyword_vocab WHERE keyword = old.keyword;
END;
"""
# The tables whose rows `Store.rebuilding` replaces, and those derived from them (by triggers, or filled at its end).
_REBUILT = ("handoffs", "project_index", "keyword_index", "fulltext")
_DERIVED = ("term_blocks", "keyword_df", "project_df", "handoff_counts", "text_index_queue", "keyword_vocab")


class SourceState(NamedTuple):
    size: int
    mtime_ns: int
    session_id: str | None  # the session it was read into
    kind: str  # main, subagent, skipped, orphan, ... (core/ingest/run.py)


class Archived(NamedTuple):
    rowid: int  # the handoff's, and its full-text row's
    archive_path: str  # relative to the archive folder


class Store:
    """One connection to the index. Not shared between threads: open one per thread."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        """`read_only`: the readers' store in a data directory nobody may write: no migration, no full-text
        update, and any write fails as the directory's fault (core/index/storage_faults.py)."""
        self.path = path
        self._staging: text_index.Writer | None = None
        if read_only:
            self._open_read_only()
            return
        try:
            open_data_dir(path.parent)
            self.conn = open_writer(path)
            migrate(self.conn, MIGRATIONS)
            self._update_text_index()
        except sqlite3.DatabaseError as exc:
            raise StoreError(describe(exc, path.parent) or f"cannot open the index at {path}: {exc}") from exc
        except OSError as exc:
            raise StoreError(f"cannot create the data directory {path.parent}: {exc.strerror}") from exc

    def _open_read_only(self) -> None:
        try:
            conn = open_index(self.path)
            if conn is None:
                raise StoreError(f"no index in {self.path.parent}: run `eywa ingest` first")
            if needs_migrating(conn):
                conn.close()
                raise StoreError(f"the index in {self.path.parent} was written by an older eywa and must be upgraded "
                                 "where it can be written: run `eywa ingest` once with the data directory writable")
        except sqlite3.DatabaseError as exc:
            raise StoreError(describe(exc, self.path.parent) or f"cannot read the index at {self.path}: {exc}") from exc
        self.conn = conn

    @property
    def text_index_folder(self) -> Path:
        return text_index.folder_of(self.path)

    def close(self) -> None:
        self.conn.close()

    @contextlib.contextmanager
    def transaction(self, *, update_text_index: bool = True) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT; rolled back on any exception. Then the full-text changes it queued
        go to the full-text index (`text_index.ensure`), unless `update_text_index` is False: then they wait
        for the next `ensure`, as after a crash."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self._rollback()
            raise
        try:
            self.conn.execute("COMMIT")
        except sqlite3.Error:
            self._rollback()
            raise
        if update_text_index:
            self._update_text_index()

    def _rollback(self) -> None:
        if self.conn.in_transaction:  # SQLite may have rolled back already (a full disk, say)
            self.conn.execute("ROLLBACK")

    @contextlib.contextmanager
    def scrubbing(self) -> Iterator[None]:
        """Within it, what SQLite deletes is overwritten with zeros; after it, the write-ahead log (which still
        holds pages as they were) is checkpointed and truncated, and the full-text index rebuilt from the rows
        (tantivy keeps deleted documents in its segments until it merges them): removed text stays in no file.
        For forgetting sessions and re-redacting stored text."""
        self.conn.execute("PRAGMA secure_delete = ON")
        try:
            yield
        finally:
            self.conn.execute("PRAGMA secure_delete = OFF")
        text_index.reset(self.conn)
        self._update_text_index()
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    @contextlib.contextmanager
    def staged_text_index(self, *, paging_out: bool = False) -> Iterator[None]:
        """Within it, each transaction's full-text changes are handed to the full-text index once it commits,
        and indexed on tantivy's thread while the caller goes on; they become searchable at the end, or
        every STAGE_SECONDS (one index commit instead of one per ingest batch). `paging_out`: as `Writer`'s."""
        self._staging = text_index.Writer(self.text_index_folder, paging_out=paging_out)
        try:
            yield
        finally:
            writer, self._staging = self._staging, None
            self._text_index_step(lambda: writer.commit(self.conn))

    def _update_text_index(self) -> None:
        """Apply queued full-text changes (rebuilding the folder if it is missing or stale)."""
        if self._staging is not None:
            writer = self._staging
            self._text_index_step(lambda: writer.stage(self.conn))
        else:
            self._text_index_step(lambda: text_index.ensure(self.conn, self.text_index_folder))

    def _text_index_step(self, step: Callable[[], object]) -> None:
        with text_index.faults(self.text_index_folder):
            step()

    # -- meta -------------------------------------------------------------------------------------
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", (key, value))

    # -- sources ----------------------------------------------------------------------------------
    def source_states(self) -> Iterator[tuple[str, SourceState]]:
        """(path, its state) of every source file seen before, in the order of the paths' code points, read as
        they are used: a large disk's states are never all in memory at once."""
        rows = self.conn.execute(f"SELECT path, {columns(SourceState._fields)} FROM sources ORDER BY path")
        return ((path, SourceState(*state)) for path, *state in rows)

    def put_source(self, path: str, size: int, mtime_ns: int, session_id: str | None, kind: str,
                   bad_lines: int, *, version: str = "", unknown: dict[tuple[str, str], int] | None = None) -> None:
        """`unknown`: (kind 'type' or 'field', name) -> count, what the reader did not know in the file."""
        self.conn.execute(
            "INSERT OR REPLACE INTO sources(path, size, mtime_ns, session_uuid, kind, bad_lines)"
            " VALUES(?, ?, ?, ?, ?, ?)",
            (path, size, mtime_ns, session_id, kind, bad_lines),
        )
        self.conn.execute("DELETE FROM source_drift WHERE path = ?", (path,))
        self.conn.executemany("INSERT INTO source_drift(path, version, kind, name, count) VALUES(?, ?, ?, ?, ?)",
                              [(path, version, k, name, n) for (k, name), n in
                               {("file", ""): 1, **(unknown or {})}.items()])

    def drift(self) -> dict[str, dict[str, int]]:
        """CLI version (another agent's after its name: `codex <version>`) -> {"files": files read, "type NAME" |
        "field TYPE.NAME": records} over every source file."""
        found: dict[str, dict[str, int]] = {}
        rows = self.conn.execute("SELECT version, kind, name, SUM(count) FROM source_drift"
                                 " GROUP BY version, kind, name ORDER BY version, kind, name")
        for version, kind, name, count in rows:
            found.setdefault(version or "no version", {})["files" if kind == "file" else f"{kind} {name}"] = count
        return found

    # -- handoffs ---------------------------------------------------------------------------------
    def put_handoff(self, handoff: Handoff, *, path: str, archive_path: str = "", transcript: str = "",
                    ended_at: str = "", origin: str = "extracted", extractor: str = "",
                    columns: FulltextColumns | None = None) -> None:
        """Insert or replace a handoff with its index rows and full text. Call inside a transaction.

        `transcript` is the session's rendered markdown (empty for imported handoffs); `columns`, if
        given, are its `fulltext_columns` already split (ingest splits them in its worker processes).
        """
        uid = handoff.session_id
        self.delete_handoff(uid)
        rowid = _insert_handoff(self.conn, handoff, path, archive_path, ended_at, origin, extractor)
        posting = (handoff.date.isoformat(), handoff.duration_minutes, handoff.substance)
        projects, keywords = text_index.index_terms(handoff.projects), text_index.index_terms(handoff.keywords)
        self.conn.executemany(
            "INSERT OR IGNORE INTO project_index(project, session_uuid, date, duration_min, substance)"
            " VALUES(?, ?, ?, ?, ?)",
            [(p, uid, *posting) for p in projects],
        )
        self.conn.executemany(
            "INSERT OR IGNORE INTO keyword_index(keyword, session_uuid, date, duration_min, substance)"
            " VALUES(?, ?, ?, ?, ?)",
            [(k, uid, *posting) for k in keywords],
        )
        IndexBounds(max_duration=handoff.duration_minutes, max_keywords=len(keywords),
                    max_projects=len(projects)).record(self.conn)
        _insert_fulltext(self.conn, rowid, handoff, columns or fulltext_columns(transcript))

    def handoff_count(self) -> int:
        return self.conn.execute("SELECT COALESCE(SUM(n), 0) FROM handoff_counts").fetchone()[0]

    def has_handoffs(self) -> bool:
        return self.conn.execute("SELECT 1 FROM handoffs LIMIT 1").fetchone() is not None

    def handoff_path(self, session_id: str) -> str | None:
        """The handoff's file, relative to the handoffs folder (None: no such handoff)."""
        row = self.conn.execute("SELECT path FROM handoffs WHERE session_uuid = ?", (session_id,)).fetchone()
        return row[0] if row else None

    def handoff_ids(self, extractor: str, *, without_substance: bool = False) -> list[str]:
        """The sessions whose handoff `extractor` wrote (only those it found of no substance)."""
        where = " AND substance = 0" if without_substance else ""
        return [uid for (uid,) in self.conn.execute(
            f"SELECT session_uuid FROM handoffs WHERE extractor = ?{where}", (extractor,))]

    def archived_handoffs(self) -> list[Archived]:
        """Every handoff with an archived rendering."""
        return [Archived._make(row) for row in self.conn.execute(
            "SELECT rowid, archive_path FROM handoffs WHERE archive_path != ''")]

    def put_columns(self, rowid: int, columns: FulltextColumns) -> None:
        """A handoff's session text split afresh (the handoff's own column stays). Call inside a transaction."""
        self.conn.execute("UPDATE fulltext SET prompts = ?, replies = ?, actions = ?, context = ? WHERE rowid = ?",
                          (*columns, rowid))

    def delete_handoff(self, session_id: str) -> None:
        row = self.conn.execute("SELECT rowid FROM handoffs WHERE session_uuid = ?", (session_id,)).fetchone()
        if row is None:
            return
        self.conn.execute("DELETE FROM fulltext WHERE id = ?", (row[0],))
        # The postings first: their triggers find the handoff's rowid through its row.
        for table in ("project_index", "keyword_index", "handoffs"):
            self.conn.execute(f"DELETE FROM {table} WHERE session_uuid = ?", (session_id,))

    # -- forgetting -------------------------------------------------------------------------------
    def forgotten(self) -> dict[str, str]:
        """session_uuid -> short id, of every session forgotten (`eywa forget`)."""
        return dict(self.conn.execute("SELECT session_uuid, short_id FROM forgotten"))

    def add_tombstone(self, session_id: str, short_id: str, at: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO forgotten(session_uuid, short_id, forgotten_at) VALUES(?, ?, ?)",
                          (session_id, short_id, at))

    def remove_tombstone(self, session_id: str) -> None:
        """Lift it; the session's files are read anew by the next ingest (their states go)."""
        self.conn.execute("DELETE FROM forgotten WHERE session_uuid = ?", (session_id,))
        self.conn.execute("DELETE FROM source_drift WHERE path IN (SELECT path FROM sources WHERE session_uuid = ?)",
                          (session_id,))
        self.conn.execute("DELETE FROM sources WHERE session_uuid = ?", (session_id,))

    def source_paths(self, session_id: str) -> list[str]:
        """The transcript files read into the session."""
        return [path for (path,) in self.conn.execute("SELECT path FROM sources WHERE session_uuid = ?",
                                                      (session_id,))]

    def clear_index(self) -> None:
        """Drop every handoff and index row (sources and term statistics stay). Call inside a transaction."""
        for table in ("term_blocks", "handoffs", "project_index", "keyword_index", "fulltext"):
            self.conn.execute(f"DELETE FROM {table}")

    @contextlib.contextmanager
    def rebuilding(self, *, build_text_index: bool = True) -> Iterator[Rebuild]:
        """One transaction that replaces every handoff and index row with those added to the `Rebuild` it
        yields (sources and term statistics stay): all or nothing, in memory bounded whatever the number of
        handoffs. The full-text index is rebuilt from the new rows once it commits; with `build_text_index`
        False, by the next `text_index.ensure` (`text_index.ensure_at` in another process, or the next store
        opened), and no search finds anything until then."""
        with self.transaction(update_text_index=build_text_index):
            rebuild = Rebuild(self.conn)
            yield rebuild
            rebuild.finish()


def _insert_handoff(conn: sqlite3.Connection, handoff: Handoff, path: str, archive_path: str, ended_at: str,
                    origin: str, extractor: str) -> int:
    """The handoff's row; its rowid."""
    cursor = conn.execute(
        "INSERT INTO handoffs(session_uuid, short_id, date, ended_at, duration_min, model, headline,"
        " projects, keywords, substance, path, archive_path, body, origin, extractor, agent, machine)"
        " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            handoff.session_id, handoff.short_id, handoff.date.isoformat(), ended_at, handoff.duration_minutes,
            handoff.model, handoff.headline, orjson.dumps(handoff.projects).decode(),
            orjson.dumps(handoff.keywords).decode(), handoff.substance, path, archive_path,
            handoff.body, origin, extractor, handoff.agent, handoff.machine,
        ),
    )
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def _insert_fulltext(conn: sqlite3.Connection, rowid: int, handoff: Handoff, columns: FulltextColumns) -> None:
    # The full-text row shares the handoff's rowid: search hits join handoffs by it.
    conn.execute("INSERT INTO fulltext(id, session_uuid, handoff, prompts, replies, actions, context)"
                 " VALUES(?, ?, ?, ?, ?, ?, ?)", (rowid, handoff.session_id, handoff.body, *columns))


class Rebuild:
    """Handoffs added in bulk inside `Store.rebuilding`'s transaction. Inserting a million rows one by one into
    indexes bigger than the page cache, with triggers keeping the derived tables, costs a random page per row;
    so the triggers and secondary indexes are set aside, the inverted indexes' postings are staged in a
    temporary table in the order they come, and at `finish` each index and derived table is written from a
    sort, which SQLite does in bounded memory, before the triggers come back (all inside the transaction)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.bounds = IndexBounds(0, 0, 0)
        tables = ",".join(f"'{table}'" for table in (*_REBUILT, "term_blocks", "keyword_df"))
        # The derived schema, as the file holds it: put back as it was (autoindexes have no SQL and stay).
        self._schema = conn.execute(
            f"SELECT type, name, sql FROM sqlite_master WHERE type IN ('trigger', 'index') AND sql IS NOT NULL"
            f" AND tbl_name IN ({tables}) ORDER BY type, name").fetchall()
        for kind, name, _ in self._schema:
            conn.execute(f"DROP {kind.upper()} {name}")
        for table in (*_REBUILT, *_DERIVED):
            conn.execute(f"DELETE FROM {table}")
        conn.execute("DELETE FROM meta WHERE key = 'text_index_key'")  # the full-text index is made anew
        conn.execute("PRAGMA temp_store = FILE")  # sorts and the staged postings on disk, not in memory
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS rebuild_postings(hid INTEGER NOT NULL, kind TEXT NOT NULL,"
                     " term TEXT NOT NULL, date TEXT NOT NULL, duration_min INTEGER NOT NULL,"
                     " substance INTEGER NOT NULL)")
        conn.execute("DELETE FROM temp.rebuild_postings")
        conn.execute("CREATE INDEX IF NOT EXISTS temp.rebuild_postings_hid ON rebuild_postings(hid)")

    def date_of(self, session_id: str) -> str | None:
        """The date of the handoff added for this session, if one was."""
        row = self.conn.execute("SELECT date FROM handoffs WHERE session_uuid = ?", (session_id,)).fetchone()
        return row[0] if row else None

    def add(self, handoff: Handoff, *, path: str, archive_path: str = "", transcript: str = "",
            origin: str = "extracted", extractor: str = "") -> None:
        """Add a handoff (replacing one added for the same session), as `Store.put_handoff` stores it."""
        old = self.conn.execute("SELECT rowid FROM handoffs WHERE session_uuid = ?",
                                (handoff.session_id,)).fetchone()
        if old is not None:
            for sql in ("DELETE FROM handoffs WHERE rowid = ?", "DELETE FROM fulltext WHERE id = ?",
                        "DELETE FROM temp.rebuild_postings WHERE hid = ?"):
                self.conn.execute(sql, old)
        rowid = _insert_handoff(self.conn, handoff, path, archive_path, "", origin, extractor)
        _insert_fulltext(self.conn, rowid, handoff, fulltext_columns(transcript))
        projects, keywords = text_index.index_terms(handoff.projects), text_index.index_terms(handoff.keywords)
        posting = (handoff.date.isoformat(), handoff.duration_minutes, handoff.substance)
        self.conn.executemany("INSERT INTO temp.rebuild_postings VALUES(?, ?, ?, ?, ?, ?)",
                              [(rowid, "p", term, *posting) for term in projects]
                              + [(rowid, "k", term, *posting) for term in keywords])
        self.bounds = IndexBounds(max(self.bounds.max_duration, handoff.duration_minutes),
                                  max(self.bounds.max_keywords, len(keywords)),
                                  max(self.bounds.max_projects, len(projects)))

    def finish(self) -> None:
        conn = self.conn
        for kind, table, column in (("p", "project_index", "project"), ("k", "keyword_index", "keyword")):
            conn.execute(
                f"INSERT OR IGNORE INTO {table}({column}, session_uuid, date, duration_min, substance)"
                " SELECT p.term, h.session_uuid, p.date, p.duration_min, p.substance FROM temp.rebuild_postings AS p"
                " JOIN handoffs AS h ON h.rowid = p.hid WHERE p.kind = ? ORDER BY p.term, h.session_uuid", (kind,))
        conn.execute("DROP TABLE temp.rebuild_postings")
        for kind, _, sql in self._schema:
            if kind == "index":
                conn.execute(sql)
        fill_blocks(conn)
        conn.execute("INSERT INTO keyword_df(keyword, df) SELECT keyword, COUNT(*) FROM keyword_index GROUP BY keyword")
        conn.execute("INSERT INTO keyword_vocab(keyword) SELECT keyword FROM keyword_df ORDER BY keyword")
        conn.execute("INSERT INTO keyword_trigrams(keyword_trigrams) VALUES('rebuild')")
        conn.execute("INSERT INTO project_df(project, df) SELECT project, COUNT(*) FROM project_index GROUP BY project")
        conn.execute("INSERT INTO handoff_counts(substantial, n) SELECT substance > 0, COUNT(*) FROM handoffs"
                     " GROUP BY substance > 0")
        self.bounds.replace(conn)
        for kind, _, sql in self._schema:
            if kind == "trigger":
                conn.execute(sql)


def _schema_version(conn: sqlite3.Connection) -> str | None:
    """The schema number releases before migrations kept in `meta` (None in a new file)."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone():
        return None
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return row[0] if row else None


def _migrate_postings(conn: sqlite3.Connection) -> None:
    """Schema 2 -> 3: the inverted indexes' rows gain their handoff's date, duration and substance."""
    if _schema_version(conn) != "2":
        return  # a new file, or one migrated already
    for table in ("project_index", "keyword_index"):
        for column, kind in (("date", "TEXT NOT NULL DEFAULT ''"), ("duration_min", "INTEGER NOT NULL DEFAULT 0"),
                             ("substance", "INTEGER NOT NULL DEFAULT 0")):
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
        conn.execute(
            f"UPDATE {table} SET (date, duration_min, substance) = (SELECT h.date, h.duration_min, h.substance"
            f" FROM handoffs AS h WHERE h.session_uuid = {table}.session_uuid)"
            f" WHERE EXISTS (SELECT 1 FROM handoffs AS h WHERE h.session_uuid = {table}.session_uuid)"
        )
    IndexBounds(0, 0, 0).record(conn)  # the maxima kept from now on start from a scan
    conn.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")


def _migrate_fulltext(conn: sqlite3.Connection) -> None:
    """Schema 3 -> 4: the text moves from an FTS5 table to a plain one that core/index/text_index.py indexes."""
    if _schema_version(conn) != "3":
        return  # a new file, or one migrated already
    conn.execute(f"CREATE TABLE fulltext_plain({_FULLTEXT_COLUMNS})")
    conn.execute("INSERT INTO fulltext_plain(id, session_uuid, handoff, prompts, replies, actions, context)"
                 " SELECT rowid, coalesce(session_uuid, ''), coalesce(handoff, ''), coalesce(prompts, ''),"
                 " coalesce(replies, ''), coalesce(actions, ''), coalesce(context, '') FROM fulltext")
    conn.execute("DROP TABLE fulltext")
    conn.execute("ALTER TABLE fulltext_plain RENAME TO fulltext")
    conn.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")


def _migrate_agent(conn: sqlite3.Connection) -> None:
    """Schema 5 -> 6 (the version is moved by `_settle_version`): each handoff names its agent
    (core/sources); an older index holds Claude Code's sessions only."""
    columns = {name for (name,) in conn.execute("SELECT name FROM pragma_table_info('handoffs')")}
    if columns and "agent" not in columns:
        conn.execute("ALTER TABLE handoffs ADD COLUMN agent TEXT NOT NULL DEFAULT 'claude-code'")


def _migrate_blocks(conn: sqlite3.Connection) -> None:
    """Schema 4 -> 5: the inverted indexes' postings also kept in weekly blocks (core/index/term_blocks.py)."""
    if _schema_version(conn) != "4":
        return  # a new file, or one migrated already
    fill_blocks(conn)
    conn.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")


def _migrate_machine(conn: sqlite3.Connection) -> None:
    """Schema 6 -> 7 (the version is moved by `_settle_version`): each handoff names the machine its
    session ran on (core/machines/spokes.py); '' in an older index, whose sessions are this machine's."""
    columns = {name for (name,) in conn.execute("SELECT name FROM pragma_table_info('handoffs')")}
    if columns and "machine" not in columns:
        conn.execute("ALTER TABLE handoffs ADD COLUMN machine TEXT NOT NULL DEFAULT ''")


# Sessions forgotten (`eywa forget`): ingest never brings them back while the tombstone stands; only their
# ids are kept. And the sessions whose stored text was written under older redaction rules, re-redacted
# one by one (core/redaction/upgrade.py): a row goes in the transaction that re-redacts its session.
_PRIVACY_SCHEMA = """
CREATE TABLE IF NOT EXISTS forgotten(session_uuid TEXT PRIMARY KEY, short_id TEXT NOT NULL, forgotten_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS redaction_pending(session_uuid TEXT PRIMARY KEY);
"""


def _refuse_unknown(conn: sqlite3.Connection) -> None:
    """An index older than any step here (schema 1) is refused before any step changes it."""
    found = _schema_version(conn)
    if found not in (None, "2", "3", "4", "5", "6", SCHEMA_VERSION):
        path = index_path(conn)
        raise StoreError(
            f"the index {path} has schema {found}, this eywa needs {SCHEMA_VERSION}: delete the file "
            f"and run `eywa reindex` (handoff files are kept) or `eywa ingest`"
        )


def _settle_version(conn: sqlite3.Connection) -> None:
    """The last schema number, 7, for a new file or one the steps above brought up to it."""
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES('schema_version', ?)", (SCHEMA_VERSION,))


# The index's migrations, in order; a new one goes at the end and becomes schema_version.LATEST_MIGRATION.
# The first eight bring any index the releases before migrations wrote (schema 2 to 7) to schema 7; each
# checks the file before it changes it, so one whose columns an older release already added passes.
MIGRATIONS: tuple[Migration, ...] = (
    ("index-known-schema", _refuse_unknown),
    ("index-postings-carry-date", _migrate_postings),
    ("index-fulltext-plain", _migrate_fulltext),
    ("index-handoffs-agent", _migrate_agent),
    ("index-handoffs-machine", _migrate_machine),
    ("index-tables", _SCHEMA),
    ("index-term-blocks", _migrate_blocks),
    ("index-schema-7", _settle_version),
    ("index-forgotten-and-redaction-pending", _PRIVACY_SCHEMA),
    # `eywa get` names a session's machine when the index holds several: two probes of this index, where a
    # scan of the handoffs is slow at scale (bench/RESULTS.md).
    ("index-handoffs-machine-index", "CREATE INDEX IF NOT EXISTS handoffs_machine ON handoffs(machine)"),
    ("index-counts", _COUNTS_SCHEMA),
)
assert MIGRATIONS[-1][0] == LATEST_MIGRATION, "schema_version.LATEST_MIGRATION names the last migration"
