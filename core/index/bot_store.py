"""The bot's own small state under data_dir (`bot.sqlite3`): button pages, digest schedules, last runs, and
the Claude Code sessions started from here that are still watched.

Button callback data is limited to 64 bytes, so a button carries only a short token; what it refers to
(the query, the offset, the sessions shown) lives here, and survives a restart. Used from the event
loop's thread only. What SQLite raises (a full disk, a read-only folder) comes out as a StoreError.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import secrets
import sqlite3
from pathlib import Path
from typing import Literal, NamedTuple

from pydantic import BaseModel

from eywa.core.config.private_files import open_data_dir
from eywa.core.index.migrations import Migration, migrate
from eywa.core.index.storage_faults import storage_faults

PAGE_TTL = dt.timedelta(days=30)  # buttons older than this answer "expired"

# bot.sqlite3's migrations (core/index/migrations.py), in order; a new one goes at the end. IF NOT EXISTS:
# files of the releases before migrations hold some of these tables already.
MIGRATIONS: tuple[Migration, ...] = (
    ("bot-tables", """
CREATE TABLE IF NOT EXISTS pages(token TEXT PRIMARY KEY, created TEXT NOT NULL, payload TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS pages_created ON pages(created);
-- time: HH:MM, '' for off, NULL for the configured default
CREATE TABLE IF NOT EXISTS digests(chat_id INTEGER PRIMARY KEY, time TEXT, last_sent TEXT);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""),
    # Claude Code background sessions started by Start, until the owner was told their turn is over
    ("bot-watched-sessions",
     "CREATE TABLE IF NOT EXISTS watched_sessions(id TEXT PRIMARY KEY, chat_id INTEGER NOT NULL);"),
)


class Page(BaseModel):
    """What a message's buttons point at: the sessions shown and how to get the next ones, or the other
    readings of a voice note ("heard: ..." buttons)."""

    kind: Literal["recall", "list", "readings"]
    query: str | None = None
    asked_on: dt.date | None = None  # a recall's day: its next pages count time words ("7d") from it
    offset: int = 0
    session_ids: list[str]
    readings: list[str] = []


class WatchedSession(NamedTuple):
    short_id: str  # the background session's id (`claude agents`)
    chat_id: int  # the chat to tell when its turn is over


class BotState:
    def __init__(self, path: Path) -> None:
        self.path = path
        with self._faults():
            open_data_dir(path.parent)
            # Autocommit: each write stands alone. Opened where the bot is built, used on the loop's thread.
            self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self.conn.execute("PRAGMA journal_mode=WAL")
            migrate(self.conn, MIGRATIONS)

    def close(self) -> None:
        self.conn.close()

    def _faults(self) -> contextlib.AbstractContextManager[None]:
        return storage_faults(self.path.parent, otherwise="cannot use {data_dir}: {exc}")

    def _rows(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple]:
        """The rows of one statement (each statement commits alone); what SQLite raises is a StoreError."""
        with self._faults():
            return self.conn.execute(sql, params).fetchall()

    # -- pages --------------------------------------------------------------------------------------
    def save_page(self, page: Page, now: dt.datetime) -> str:
        token = secrets.token_urlsafe(6)  # 8 characters; 48 random bits
        self._rows("DELETE FROM pages WHERE created < ?", ((now - PAGE_TTL).isoformat(),))
        self._rows("INSERT OR REPLACE INTO pages VALUES (?, ?, ?)", (token, now.isoformat(), page.model_dump_json()))
        return token

    def load_page(self, token: str) -> Page | None:
        rows = self._rows("SELECT payload FROM pages WHERE token = ?", (token,))
        return Page.model_validate_json(rows[0][0]) if rows else None

    # -- digests ------------------------------------------------------------------------------------
    def set_digest(self, chat_id: int, time: str) -> None:
        """`time` is HH:MM, or "" for off (kept, so the configured default does not come back)."""
        self._rows("INSERT INTO digests(chat_id, time) VALUES (?, ?) ON CONFLICT(chat_id) DO UPDATE SET time = ?",
                   (chat_id, time, time))

    def digest_times(self) -> dict[int, str | None]:
        return dict(self._rows("SELECT chat_id, time FROM digests"))

    def last_digest(self, chat_id: int) -> dt.datetime | None:
        rows = self._rows("SELECT last_sent FROM digests WHERE chat_id = ?", (chat_id,))
        return dt.datetime.fromisoformat(rows[0][0]) if rows and rows[0][0] else None

    def mark_digest_sent(self, chat_id: int, when: dt.datetime) -> None:
        self._rows("INSERT INTO digests(chat_id, time, last_sent) VALUES (?, NULL, ?)"
                   " ON CONFLICT(chat_id) DO UPDATE SET last_sent = excluded.last_sent", (chat_id, when.isoformat()))

    # -- watched sessions -----------------------------------------------------------------------------
    def watch_session(self, short_id: str, chat_id: int) -> None:
        self._rows("INSERT OR REPLACE INTO watched_sessions VALUES (?, ?)", (short_id, chat_id))

    def unwatch_session(self, short_id: str) -> None:
        self._rows("DELETE FROM watched_sessions WHERE id = ?", (short_id,))

    def watched_sessions(self) -> list[WatchedSession]:
        return [WatchedSession._make(row) for row in self._rows("SELECT id, chat_id FROM watched_sessions ORDER BY id")]

    # -- spoken answers ---------------------------------------------------------------------------------
    def set_spoken_answers(self, chat_id: int, on: bool) -> None:
        self.put(f"spoken_answers:{chat_id}", "on" if on else "off")

    def spoken_answers(self, chat_id: int) -> bool | None:
        """This chat's `/voice on|off`, None when it never said (the configured default applies)."""
        value = self.get(f"spoken_answers:{chat_id}")
        return None if value is None else value == "on"

    # -- meta ---------------------------------------------------------------------------------------
    def get(self, key: str) -> str | None:
        rows = self._rows("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def put(self, key: str, value: str) -> None:
        self._rows("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
