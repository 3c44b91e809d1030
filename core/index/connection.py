"""How a writer opens the SQLite index: WAL with a busy timeout, so the bot's scheduled ingest and the readers
(CLI, MCP, hooks) work on one file at once. Imports nothing of eywa's: `eywa reindex`'s lean last step opens
the index with it too (core/index/text_index.py, `ensure_at`)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

LOCK_WAIT_SECONDS = 30  # how long a writer waits for another's lock before it gives up


def open_writer(path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are begun explicitly), waiting `LOCK_WAIT_SECONDS` for a lock."""
    conn = sqlite3.connect(path, timeout=LOCK_WAIT_SECONDS, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout={LOCK_WAIT_SECONDS * 1000}")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn
