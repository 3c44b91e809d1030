"""The LLM pass's tables in the index file, and every query of them: `llm_state` (one row per session: its
status and the stored answer), `llm_usage` (one row per API call), `llm_batches` (the Message Batches not
collected yet); with the handoff rows the pass reads. Queries return named records; the status rules are
core/extract/llm/lifecycle.py's."""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass, fields
from typing import Any

import orjson

from eywa.core.index.migrations import Migration, migrate
from eywa.core.index.readonly import columns

_SCHEMA = """
CREATE TABLE IF NOT EXISTS llm_state(
    session_uuid TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    content_hash TEXT NOT NULL DEFAULT '',
    done_hash TEXT NOT NULL DEFAULT '',
    result TEXT NOT NULL DEFAULT '',
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at REAL NOT NULL DEFAULT 0,
    batch_id TEXT NOT NULL DEFAULT '',
    last_error TEXT NOT NULL DEFAULT '',
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS llm_state_status ON llm_state(status);
CREATE TABLE IF NOT EXISTS llm_usage(
    id INTEGER PRIMARY KEY,
    session_uuid TEXT NOT NULL,
    at TEXT NOT NULL,
    day TEXT NOT NULL,
    model TEXT NOT NULL,
    mode TEXT NOT NULL,
    outcome TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cache_creation_input_tokens INTEGER NOT NULL,
    cache_read_input_tokens INTEGER NOT NULL,
    cost_usd REAL
);
CREATE INDEX IF NOT EXISTS llm_usage_day ON llm_usage(day);
CREATE TABLE IF NOT EXISTS llm_batches(
    batch_id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    model TEXT NOT NULL,
    items TEXT NOT NULL
);
"""


def _add_cost_column(conn: sqlite3.Connection) -> None:
    """Tables from before the claude-code backend lack the column (their rows are priced from the model)."""
    if "cost_usd" not in {name for (name,) in conn.execute("SELECT name FROM pragma_table_info('llm_usage')")}:
        conn.execute("ALTER TABLE llm_usage ADD COLUMN cost_usd REAL")


# The LLM state's migrations, in the index file (core/index/migrations.py); a new one goes at the end.
MIGRATIONS: tuple[Migration, ...] = (
    ("llm-tables", _SCHEMA),
    ("llm-usage-cost", _add_cost_column),
)


def ensure_tables(conn: sqlite3.Connection) -> None:
    migrate(conn, MIGRATIONS)


@dataclass
class Usage:
    """Tokens of one API call or a sum of them: the llm_usage row's counts (the index stores them, the LLM
    pass adds them up)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_creation_input_tokens += other.cache_creation_input_tokens
        self.cache_read_input_tokens += other.cache_read_input_tokens

    @classmethod
    def of(cls, usage: Any) -> Usage:
        return cls(
            input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
            cache_creation_input_tokens=int(getattr(usage, "cache_creation_input_tokens", 0) or 0),
            cache_read_input_tokens=int(getattr(usage, "cache_read_input_tokens", 0) or 0),
        )


def _columns(record: type) -> str:
    return columns(f.name for f in fields(record))


# -- llm_state ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LLMState:
    session_id: str
    status: str  # pending | done | retry | failed | batched
    content_hash: str
    done_hash: str
    result: str  # the validated answer (HandoffFields JSON) for done_hash
    attempts: int
    next_attempt_at: float
    batch_id: str


@dataclass(frozen=True)
class StateChange:
    """What to set on a session's state row; None keeps the column as it is (or its default, for a new row)."""

    status: str
    content_hash: str | None = None
    done_hash: str | None = None
    result: str | None = None
    attempts: int | None = None
    last_error: str | None = None
    next_attempt_at: float | None = None
    batch_id: str | None = None


def states(conn: sqlite3.Connection, ids: Iterable[str] | None = None) -> dict[str, LLMState]:
    """session_uuid -> state, of every session or of those of `ids` that have one."""
    sql = f"SELECT {_columns(LLMState)} FROM llm_state"
    if ids is None:
        rows = conn.execute(sql).fetchall()
    else:
        rows = [row for uid in dict.fromkeys(ids)
                if (row := conn.execute(sql + " WHERE session_uuid = ?", (uid,)).fetchone())]
    return {row[0]: LLMState(*row) for row in rows}


def put_state(conn: sqlite3.Connection, session_id: str, change: StateChange, updated_at: str) -> None:
    given = {f.name: value for f in fields(StateChange) if (value := getattr(change, f.name)) is not None}
    columns = ["session_uuid", "updated_at", *given]
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns[1:])
    conn.execute(f"INSERT INTO llm_state({', '.join(columns)}) VALUES({', '.join('?' * len(columns))})"
                 f" ON CONFLICT(session_uuid) DO UPDATE SET {updates}", (session_id, updated_at, *given.values()))


def mark_done(conn: sqlite3.Connection, session_id: str, updated_at: str) -> None:
    conn.execute("UPDATE llm_state SET status = 'done', batch_id = '', last_error = '', updated_at = ?"
                 " WHERE session_uuid = ?", (updated_at, session_id))


def status_counts(conn: sqlite3.Connection) -> dict[str, int]:
    return dict(conn.execute("SELECT status, COUNT(*) FROM llm_state GROUP BY status").fetchall())


# -- the handoff rows the pass reads -----------------------------------------------------------------------

@dataclass(frozen=True)
class ExtractedSession:
    """A session whose handoff ingest drafted from a kept transcript: what the LLM pass sends and writes."""

    session_id: str
    short_id: str
    date: dt.date
    duration_min: int
    model: str
    projects: list[str]
    keywords: list[str]
    substance: int
    extractor: str
    archive_path: str
    ended_at: str
    newest_mtime_ns: int  # of its transcript files: how long it has been idle
    machine: str
    agent: str
    body: str  # the handoff's sections as stored: the facts ingest found are among its open threads


_SESSION_SQL = (
    "SELECT h.session_uuid, h.short_id, h.date, h.duration_min, h.model, h.projects, h.keywords, h.substance,"
    " h.extractor, h.archive_path, h.ended_at,"
    " (SELECT MAX(mtime_ns) FROM sources s WHERE s.session_uuid = h.session_uuid), h.machine, h.agent, h.body"
    " FROM handoffs h WHERE h.origin = 'extracted' AND h.archive_path != ''"
)


def _session(row: tuple) -> ExtractedSession:
    (uid, short_id, date, duration, model, projects, keywords, substance, extractor, archive, ended, mtime,
     machine, agent, body) = row
    return ExtractedSession(uid, short_id, dt.date.fromisoformat(date), duration, model, orjson.loads(projects),
                            orjson.loads(keywords), substance, extractor, archive, ended, mtime or 0, machine, agent,
                            body)


def extracted_sessions(conn: sqlite3.Connection, ids: Iterable[str] | None = None) -> list[ExtractedSession]:
    """Every such session by end time, or those of `ids` in their order."""
    if ids is None:
        return [_session(row) for row in conn.execute(_SESSION_SQL + " ORDER BY h.ended_at, h.session_uuid")]
    rows = (conn.execute(_SESSION_SQL + " AND h.session_uuid = ?", (uid,)).fetchone() for uid in ids)
    return [_session(row) for row in rows if row is not None]


def overwritten(conn: sqlite3.Connection) -> list[str]:
    """Sessions done by the LLM whose handoff ingest has since redrafted deterministically."""
    return [uid for (uid,) in conn.execute(
        "SELECT s.session_uuid FROM llm_state s JOIN handoffs h USING(session_uuid)"
        " WHERE s.status = 'done' AND h.extractor NOT LIKE 'llm:%'")]


def llm_handoff_count(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT COUNT(*) FROM handoffs WHERE extractor LIKE 'llm:%'").fetchone()[0]


# -- llm_usage ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class UsageRow:
    """One API call."""

    session_id: str
    model: str
    mode: str  # sync | batch
    outcome: str  # ok | invalid | refused
    usage: Usage
    cost_usd: float | None  # None: priced from the model's list price when read


@dataclass(frozen=True)
class UnpricedUsage:
    model: str
    mode: str
    usage: Usage


_TOKEN_SUMS = ", ".join(f"COALESCE(SUM({f.name}), 0)" for f in fields(Usage))


def has_usage(conn: sqlite3.Connection) -> bool:
    """The LLM tables exist (some pass ran on this index)."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'llm_usage'").fetchone() is not None


def add_usage(conn: sqlite3.Connection, rows: Sequence[UsageRow], at: dt.datetime) -> None:
    conn.executemany(
        f"INSERT INTO llm_usage(session_uuid, at, day, model, mode, outcome, {_columns(Usage)}, cost_usd)"
        " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(r.session_id, at.isoformat(timespec="seconds"), at.date().isoformat(), r.model, r.mode, r.outcome,
          *astuple(r.usage), r.cost_usd) for r in rows])


def tokens_on(conn: sqlite3.Connection, day: dt.date) -> int:
    """All tokens of the calls made on that UTC day, cache included."""
    return sum(conn.execute(f"SELECT {_TOKEN_SUMS} FROM llm_usage WHERE day = ?", (day.isoformat(),)).fetchone())


def usage_total(conn: sqlite3.Connection) -> tuple[int, Usage]:
    """How many calls were made, and their tokens."""
    count, *tokens = conn.execute(f"SELECT COUNT(*), {_TOKEN_SUMS} FROM llm_usage").fetchone()
    return count, Usage(*tokens)


def recorded_cost(conn: sqlite3.Connection) -> float:
    """The cost of the calls whose backend reported one."""
    return conn.execute("SELECT COALESCE(SUM(cost_usd), 0) FROM llm_usage").fetchone()[0]


def unpriced_usage(conn: sqlite3.Connection) -> list[UnpricedUsage]:
    """The tokens of the calls with no reported cost, by model and mode."""
    return [UnpricedUsage(model, mode, Usage(*tokens)) for model, mode, *tokens in conn.execute(
        f"SELECT model, mode, {_TOKEN_SUMS} FROM llm_usage WHERE cost_usd IS NULL GROUP BY model, mode")]


# -- llm_batches -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BatchItem:
    """One request of a batch: the session and the content hash it was sent with."""

    session_id: str
    content_hash: str


def add_batch(conn: sqlite3.Connection, batch_id: str, created_at: str, model: str,
              items: dict[str, BatchItem]) -> None:
    """`items` by custom_id, stored as [session_uuid, content_hash] (batches an earlier release left read too)."""
    conn.execute("INSERT INTO llm_batches(batch_id, created_at, model, items) VALUES(?, ?, ?, ?)",
                 (batch_id, created_at, model, orjson.dumps({k: astuple(v) for k, v in items.items()}).decode()))


def batch_ids(conn: sqlite3.Connection) -> list[str]:
    """The batches not collected yet, oldest first."""
    return [batch_id for (batch_id,) in conn.execute("SELECT batch_id FROM llm_batches ORDER BY created_at")]


def batch_items(conn: sqlite3.Connection, batch_id: str) -> dict[str, BatchItem]:
    row = conn.execute("SELECT items FROM llm_batches WHERE batch_id = ?", (batch_id,)).fetchone()
    return {custom_id: BatchItem(*item) for custom_id, item in orjson.loads(row[0]).items()} if row else {}


def close_batch(conn: sqlite3.Connection, batch_id: str) -> None:
    """Forget a collected batch; a session its results did not mention goes back to pending."""
    conn.execute("DELETE FROM llm_batches WHERE batch_id = ?", (batch_id,))
    conn.execute("UPDATE llm_state SET status = 'pending', batch_id = '' WHERE status = 'batched' AND batch_id = ?",
                 (batch_id,))
