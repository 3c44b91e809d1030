"""The index's reads for the API, retrieval, the hooks and `eywa get`, rows named. sqlite3 and the standard
library only (no pydantic, no store), so the fast paths that import it stay light; `open_index` opens the file
read-only (`mode=ro`). What a write reads stays with the store, the weekly blocks' reads with term_blocks.py,
the full text's with text_index.py."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple


def columns(names: Iterable[str]) -> str:
    """A record's field names as the SQL column list: the full session id's column is `session_uuid`, the
    name the index has had since its first release (renaming it would be a migration of every table)."""
    return ", ".join("session_uuid" if name == "session_id" else name for name in names)


class HandoffRow(NamedTuple):
    """One row of `handoffs` as the readers use it (the lists still JSON text)."""

    session_id: str
    short_id: str
    date: str
    headline: str
    projects: str
    keywords: str
    substance: int
    duration_min: int
    model: str
    body: str
    path: str  # relative to the handoffs folder
    agent: str
    machine: str
    ended_at: str


_HANDOFF = columns(HandoffRow._fields)


class RecentHandoff(NamedTuple):
    """What a SessionStart hook shows of a handoff."""

    session_id: str
    short_id: str
    date: str
    duration_min: int
    body: str


def open_index(path: Path, *, timeout: float = 30.0) -> sqlite3.Connection | None:
    """A read-only connection to the index at `path` (None: no such file); it never creates or migrates
    the file, and a writer holding it only makes it wait up to `timeout` seconds. In a folder nobody can
    write (a read-only mount), where SQLite cannot make the WAL's shared-memory file a reader needs, the file
    is opened as immutable: no writer can change it there."""
    if not path.is_file():
        return None
    conn = sqlite3.connect(path.as_uri() + "?mode=ro", uri=True, timeout=timeout)
    try:
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1")
    except sqlite3.OperationalError:
        conn.close()
        if os.access(path.parent, os.W_OK):
            raise
        conn = sqlite3.connect(path.as_uri() + "?mode=ro&immutable=1", uri=True, timeout=timeout)
    conn.execute("PRAGMA query_only=1")
    return conn


@contextlib.contextmanager
def reading_current(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the index, migrated first, once, through the store when an older eywa
    wrote it (or its full-text folder is of an older version): what `eywa get` reads. What SQLite raises
    inside is a StoreError (core/index/storage_faults.py)."""
    from eywa.core.errors import StoreError
    from eywa.core.index.storage_faults import storage_faults

    with storage_faults(path.parent):
        conn = open_index(path)
        if conn is None:
            raise StoreError(f"no index in {path.parent}: run `eywa ingest` first")
        try:
            if _needs_store(conn, path):
                conn.close()
                from eywa.core.index.store import Store

                Store(path).close()
                reopened = open_index(path)
                assert reopened is not None
                conn = reopened
            yield conn
        finally:
            conn.close()


def _needs_store(conn: sqlite3.Connection, path: Path) -> bool:
    from eywa.core.index import text_index
    from eywa.core.index.schema_version import needs_migrating

    return needs_migrating(conn) or not text_index.is_current(conn, text_index.folder_of(path))


def index_version(conn: sqlite3.Connection) -> tuple[int, int]:
    """Changes whenever the index may have: `PRAGMA data_version` moves on commits by other connections,
    `total_changes` on this connection's own writes. For caches of what is read from it."""
    return conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes


# -- handoffs -------------------------------------------------------------------------------------------
def handoffs_by_id(conn: sqlite3.Connection, ids: list[str]) -> dict[str, HandoffRow]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = conn.execute(f"SELECT {_HANDOFF} FROM handoffs WHERE session_uuid IN ({marks})", ids)
    return {handoff.session_id: handoff for handoff in map(HandoffRow._make, rows)}


def handoff(conn: sqlite3.Connection, session_id: str) -> HandoffRow | None:
    row = conn.execute(f"SELECT {_HANDOFF} FROM handoffs WHERE session_uuid = ?", (session_id,)).fetchone()
    return HandoffRow._make(row) if row else None


def handoffs_by_prefix(conn: sqlite3.Connection, prefix: str, limit: int) -> list[HandoffRow]:
    """Handoffs whose full or short id starts with `prefix` (LIKE's wildcards taken out), newest first."""
    pattern = prefix.replace("%", "").replace("_", "") + "%"
    return [HandoffRow._make(row) for row in conn.execute(
        f"SELECT {_HANDOFF} FROM handoffs WHERE session_uuid LIKE ? OR short_id LIKE ?"
        " ORDER BY date DESC, session_uuid LIMIT ?", (pattern, pattern, limit))]


def latest_handoffs(conn: sqlite3.Connection, count: int, *, project: str | None = None, agent: str | None = None,
                    machine: str | None = None) -> list[HandoffRow]:
    """The newest substantial handoffs, newest first; `project` keeps projects whose name contains it."""
    sql = f"SELECT {_HANDOFF} FROM handoffs WHERE substance > 0"
    params: list[object] = []
    if project:
        sql += " AND session_uuid IN (SELECT session_uuid FROM project_index WHERE project LIKE ?)"
        params.append(f"%{project.lower()}%")
    if agent:
        sql += " AND agent = ?"
        params.append(agent.strip().lower())
    if machine:
        sql += " AND machine = ?"
        params.append(machine.strip().lower())
    sql += " ORDER BY date DESC, ended_at DESC, session_uuid LIMIT ?"
    params.append(max(1, count))
    return [HandoffRow._make(row) for row in conn.execute(sql, params)]


def forgotten_ids(path: Path) -> set[str]:
    """The sessions forgotten in the index at `path` (`eywa forget`); none when it does not exist, or predates
    forgetting."""
    conn = open_index(path)
    if conn is None:
        return set()
    try:
        return {uid for (uid,) in conn.execute("SELECT session_uuid FROM forgotten")}
    except sqlite3.OperationalError:
        return set()
    finally:
        conn.close()


def handoffs_where(conn: sqlite3.Connection, *, project: str | None, before: str | None) -> list[HandoffRow]:
    """Every handoff of project `project` (its exact name, any case) and dated before `before`, oldest first."""
    sql = f"SELECT {_HANDOFF} FROM handoffs WHERE 1"
    params: list[str] = []
    if project is not None:
        sql += " AND session_uuid IN (SELECT session_uuid FROM project_index WHERE project = ?)"
        params.append(project.strip().lower())
    if before is not None:
        sql += " AND date < ?"
        params.append(before)
    return [HandoffRow._make(row) for row in conn.execute(sql + " ORDER BY date, session_uuid", params)]


def handoffs_from(conn: sqlite3.Connection, day: str) -> list[HandoffRow]:
    """The substantial handoffs dated `day` or later, oldest first."""
    return [HandoffRow._make(row) for row in conn.execute(
        f"SELECT {_HANDOFF} FROM handoffs WHERE substance > 0 AND date >= ? ORDER BY date, ended_at, session_uuid",
        (day,))]


def archive_path(conn: sqlite3.Connection, session_id: str) -> str:
    """The handoff's archived rendering, relative to the archive folder ('' for none)."""
    row = conn.execute("SELECT archive_path FROM handoffs WHERE session_uuid = ?", (session_id,)).fetchone()
    return row[0] if row else ""


# The project's rows of project_index (its date and substance beside each id) find the span; only the handoffs in
# it are read (their bodies tell which are done): a project's whole history is never read.
_RECENT_IN_PROJECTS = """
WITH member AS (
  SELECT session_uuid, date FROM project_index
  WHERE project IN ({marks}) AND substance > 0 AND date >= ? AND session_uuid != ?)
SELECT h.session_uuid FROM handoffs AS h
WHERE h.session_uuid IN (SELECT session_uuid FROM member WHERE date >= date((SELECT MAX(date) FROM member), ?))
ORDER BY h.body LIKE '%## Open Threads' || char(10) || 'None.%', h.date DESC, h.ended_at DESC, h.session_uuid
LIMIT ?
"""


def recent_in_projects(conn: sqlite3.Connection, projects: tuple[str, ...], *, cutoff: str, span_days: int,
                       limit: int, exclude: str = "") -> list[RecentHandoff]:
    """The newest substantial handoffs of `projects` dated `cutoff` or later ('': any day), but `exclude`, of
    the last `span_days` days of the newest of them: those with open threads first, each group newest first."""
    marks = ",".join("?" * len(projects))
    ids = [uid for (uid,) in conn.execute(_RECENT_IN_PROJECTS.format(marks=marks),
                                          (*projects, cutoff, exclude, f"-{max(1, span_days) - 1} days", limit))]
    if not ids:
        return []
    rows = conn.execute(f"SELECT {columns(RecentHandoff._fields)} FROM handoffs"
                        f" WHERE session_uuid IN ({','.join('?' * len(ids))})", ids)
    order = {uid: i for i, uid in enumerate(ids)}
    return sorted((RecentHandoff._make(row) for row in rows), key=lambda row: order[row.session_id])


# -- what is indexed --------------------------------------------------------------------------------------
# What `eywa stats` counts, by name (core/api.py's Stats has a field of each).
_COUNTS = {
    "handoffs": "SELECT COUNT(*) FROM handoffs",
    "substantial": "SELECT COUNT(*) FROM handoffs WHERE substance > 0",
    "imported": "SELECT COUNT(*) FROM handoffs WHERE origin = 'imported'",
    "sources": "SELECT COUNT(*) FROM sources",
    # Counted as ingest counts them: sessions whose files gave no handoff (empty, or not a transcript).
    "sessions_skipped": "SELECT COUNT(DISTINCT session_uuid) FROM sources WHERE session_uuid IS NOT NULL"
                        " AND session_uuid NOT IN (SELECT session_uuid FROM handoffs)",
    "bad_lines": "SELECT COALESCE(SUM(bad_lines), 0) FROM sources",
    "first_date": "SELECT MIN(date) FROM handoffs WHERE substance > 0",
    "last_date": "SELECT MAX(date) FROM handoffs WHERE substance > 0",
}


def counts(conn: sqlite3.Connection) -> dict[str, int | str | None]:
    return {name: conn.execute(sql).fetchone()[0] for name, sql in _COUNTS.items()}


def project_counts(conn: sqlite3.Connection, limit: int = -1) -> dict[str, int]:
    """Project -> its handoffs, the most used first (all of them for a negative `limit`)."""
    return dict(conn.execute("SELECT project, COUNT(*) FROM project_index GROUP BY project"
                             " ORDER BY COUNT(*) DESC, project LIMIT ?", (limit,)))


def extractor_counts(conn: sqlite3.Connection) -> dict[str, int]:
    """Extractor name -> the handoffs it wrote."""
    return dict(conn.execute(
        "SELECT extractor, COUNT(*) FROM handoffs WHERE extractor != '' GROUP BY extractor ORDER BY 2 DESC"))


def agent_counts(conn: sqlite3.Connection) -> dict[str, int]:
    """Agent -> its sessions with work."""
    return dict(conn.execute(
        "SELECT agent, COUNT(*) FROM handoffs WHERE substance > 0 GROUP BY agent ORDER BY 2 DESC, 1"))


def agent_bytes(conn: sqlite3.Connection) -> dict[str, int]:
    """Agent -> the bytes of its transcripts read."""
    return dict(conn.execute(
        "SELECT h.agent, SUM(s.size) FROM sources AS s JOIN handoffs AS h ON h.session_uuid = s.session_uuid"
        " GROUP BY h.agent ORDER BY 2 DESC, 1"))


def frequent_words(conn: sqlite3.Connection, min_sessions: int, max_sessions: int) -> list[str]:
    """The single lowercase words (4 letters or more) of the sessions' routing terms and of keywords found
    in `min_sessions` to `max_sessions` sessions, most frequent first."""
    return [word for (word,) in conn.execute(
        "SELECT term FROM (SELECT term, df FROM term_df UNION ALL"
        " SELECT keyword, COUNT(*) FROM keyword_index GROUP BY keyword)"
        " WHERE length(term) >= 4 AND term NOT GLOB '*[^a-z]*'"
        " GROUP BY term HAVING MAX(df) BETWEEN ? AND ? ORDER BY MAX(df) DESC, term",
        (min_sessions, max_sessions))]


# -- what retrieval ranks ---------------------------------------------------------------------------------
class TermCounts(NamedTuple):
    """The distinct terms of one inverted index and the number of handoffs listing each, in two columns."""

    terms: list[str]
    df: list[int]


def _term_counts(rows: list[tuple[str, int]]) -> TermCounts:
    return TermCounts([term for term, _ in rows], [df for _, df in rows])


def _counts(conn: sqlite3.Connection, kept: str, counted: str, params: tuple[object, ...] = ()) -> list[tuple]:
    """Rows of `kept`, a query of the counts the store keeps (core/index/store.py's keyword_df, project_df,
    handoff_counts), or of `counted`, the same counted from the rows, on an index no store of this version has
    opened yet."""
    try:
        return conn.execute(kept, params).fetchall()
    except sqlite3.OperationalError:
        return conn.execute(counted, params).fetchall()


def project_df(conn: sqlite3.Connection) -> TermCounts:
    return _term_counts(_counts(conn, "SELECT project, df FROM project_df",
                                "SELECT project, COUNT(*) FROM project_index GROUP BY project"))


_TRIGRAM = 3  # the shortest word the keywords' trigram index finds; a shorter one is looked for in every keyword


def keywords_containing(conn: sqlite3.Connection, token: str, limit: int = -1) -> list[tuple[str, int]]:
    """(keyword, its number of handoffs) of each keyword equal to or containing `token`, in keyword order: through
    the store's trigram index of the keywords (keyword_trigrams), never the whole vocabulary read in Python (it
    grows with every handoff). With a `limit`, the first that many found (the search stops there), in keyword
    order."""
    scan = ("SELECT keyword, df FROM keyword_df WHERE instr(keyword, ?) > 0 LIMIT ?",
            "SELECT keyword, COUNT(*) FROM keyword_index WHERE instr(keyword, ?) > 0 GROUP BY keyword LIMIT ?")
    if len(token) < _TRIGRAM or "%" in token or "_" in token:
        return _counts(conn, *scan, (token, limit))
    try:
        # The trigrams find the candidates; FTS5 checks LIKE on each keyword itself.
        # Sorted here: an ORDER BY would have SQLite find every match before the first `limit`.
        return sorted(conn.execute("SELECT k.keyword, k.df FROM keyword_trigrams AS t JOIN keyword_vocab AS v"
                                   " ON v.id = t.rowid JOIN keyword_df AS k ON k.keyword = v.keyword"
                                   " WHERE t.keyword LIKE ? LIMIT ?", (f"%{token}%", limit)))
    except sqlite3.OperationalError:  # an index no store of this version has opened yet
        return _counts(conn, *scan, (token, limit))


def keyword_counts(conn: sqlite3.Connection, keywords: list[str]) -> dict[str, int]:
    """Keyword -> its number of handoffs, for those of `keywords` some handoff lists."""
    given = (json.dumps(keywords),)
    return dict(_counts(conn, "SELECT keyword, df FROM keyword_df WHERE keyword IN (SELECT value FROM json_each(?))",
                        "SELECT keyword, COUNT(*) FROM keyword_index WHERE keyword IN (SELECT value FROM json_each(?))"
                        " GROUP BY keyword", given))


def machine_count(conn: sqlite3.Connection) -> int:
    """How many machines the index holds sessions of, counted up to 2 (one, or several): the first and the
    last name of the index on machines."""
    first, last = conn.execute("SELECT (SELECT MIN(machine) FROM handoffs WHERE machine > ''),"
                               " (SELECT MAX(machine) FROM handoffs)").fetchone()
    return 0 if first is None else 1 if first == last else 2


def handoff_count(conn: sqlite3.Connection, *, substantial: bool = False) -> int:
    where = " WHERE substantial = 1" if substantial else ""
    return _counts(conn, "SELECT COALESCE(SUM(n), 0) FROM handoff_counts" + where,
                   "SELECT COUNT(*) FROM handoffs" + (" WHERE substance > 0" if substantial else ""))[0][0]


def index_path(conn: sqlite3.Connection) -> Path:
    """The file this connection reads."""
    return Path(conn.execute("SELECT file FROM pragma_database_list WHERE name = 'main'").fetchone()[0])


_PROJECT_FILTER = """
        AND EXISTS (SELECT 1 FROM project_index AS pf
                    WHERE pf.session_uuid = h.session_uuid AND instr(pf.project, :project) > 0)"""

_AGENT_FILTER = """
        AND h.agent = :agent"""

_MACHINE_FILTER = """
        AND h.machine = :machine"""

_SINCE_FILTER = """
        AND h.date >= :since"""

_UNTIL_FILTER = """
        AND h.date <= :until"""


class Filters(NamedTuple):
    """What a query keeps: projects whose name contains `project`, one agent, one machine, the days from
    `since` to `until` (ISO dates, both included); None keeps all."""

    project: str | None = None
    agent: str | None = None
    machine: str | None = None
    since: str | None = None
    until: str | None = None

    def sql(self) -> tuple[str, dict[str, str]]:
        """The SQL (on `handoffs AS h`) and its parameters."""
        sql, params = "", {}
        for name, condition in (("project", _PROJECT_FILTER), ("agent", _AGENT_FILTER),
                                ("machine", _MACHINE_FILTER), ("since", _SINCE_FILTER), ("until", _UNTIL_FILTER)):
            value = getattr(self, name)
            if value:
                sql, params[name] = sql + condition, value
        return sql, params


def filtered_rowids(conn: sqlite3.Connection, filters: Filters) -> list[int]:
    """The rowids of the handoffs the filters keep."""
    sql, params = filters.sql()
    return [rowid for (rowid,) in conn.execute("SELECT h.rowid FROM handoffs AS h WHERE 1" + sql, params)]


class Listed(NamedTuple):
    """A handoff with its lists, as hybrid scoring reads it."""

    rowid: int
    session_id: str
    date: str
    projects: str  # JSON lists
    keywords: str


def substantial_listed(conn: sqlite3.Connection, rowids: list[int]) -> list[Listed]:
    """Those of these handoffs that have substance."""
    return [Listed._make(row) for row in conn.execute(
        "SELECT rowid, session_uuid, date, projects, keywords FROM handoffs WHERE substance > 0 AND rowid IN"
        " (SELECT value FROM json_each(?))", (json.dumps(rowids),))]


_RECENT = """
SELECT h.rowid, h.session_uuid, h.date FROM handoffs AS h
WHERE h.substance > 0{filters}
ORDER BY h.date DESC, h.session_uuid LIMIT :limit OFFSET :offset
"""


class HandoffDate(NamedTuple):
    rowid: int
    session_id: str
    date: str


def handoff_dates(conn: sqlite3.Connection, rowids: list[int]) -> list[HandoffDate]:
    return [HandoffDate._make(row) for row in conn.execute(
        "SELECT rowid, session_uuid, date FROM handoffs WHERE rowid IN (SELECT value FROM json_each(?))",
        (json.dumps(rowids),))]


def recent(conn: sqlite3.Connection, filters: Filters, *, limit: int, offset: int) -> list[HandoffDate]:
    """The newest substantial handoffs the filters keep."""
    sql, given = filters.sql()
    return [HandoffDate._make(row) for row in conn.execute(
        _RECENT.format(filters=sql), {"limit": limit, "offset": offset, **given})]
