"""What the readers on the fast path (`eywa get`, the hooks) need to tell an index that needs migrating,
apart from core/index/store.py so that they import neither the store nor the handoff model."""

from __future__ import annotations

import sqlite3

SCHEMA_VERSION = "7"  # in meta, for releases before migrations; 6: each handoff names its agent; 7: its machine
LATEST_MIGRATION = "index-counts"  # the last of core/index/store.py's MIGRATIONS


def needs_migrating(conn: sqlite3.Connection) -> bool:
    """The index lacks its newest migration (migrations apply in order): one indexed lookup."""
    try:
        return conn.execute("SELECT 1 FROM migrations WHERE name = ?", (LATEST_MIGRATION,)).fetchone() is None
    except sqlite3.OperationalError:
        return True  # no migrations table: written before migrations
