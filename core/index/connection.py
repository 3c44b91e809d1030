"""How a writer opens the SQLite index: WAL with a busy timeout, so the bot's scheduled ingest and the readers
(CLI, MCP, hooks) work on one file at once. Imports nothing of eywa's: `eywa reindex`'s lean last step opens
the index with it too (core/index/text_index.py, `ensure_at`)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def open_writer(path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are begun explicitly), waiting up to 30 s for a lock."""
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    conn.execute("PRAGMA busy_timeout=30000")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn
