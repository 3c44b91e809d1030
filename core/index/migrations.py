"""The one way Eywa's SQLite files change shape: each file's owner declares an ordered list of small named
migrations (SQL text or a function of the connection), and `migrate` applies those not yet recorded in the
file's `migrations` table, all pending ones in one transaction. A file that needs none costs one read and no lock."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

Step = str | Callable[[sqlite3.Connection], None]
Migration = tuple[str, Step]

# Names only, no time: two files built from the same inputs stay equal row for row (tests compare them).
_LEDGER = "CREATE TABLE IF NOT EXISTS migrations(name TEXT PRIMARY KEY)"


def applied(conn: sqlite3.Connection) -> set[str]:
    """The names recorded in this file (none in a new file, or one written before migrations)."""
    try:
        return {name for (name,) in conn.execute("SELECT name FROM migrations")}
    except sqlite3.OperationalError:
        return set()


def migrate(conn: sqlite3.Connection, migrations: Sequence[Migration]) -> list[str]:
    """Apply, in order, the migrations this file has not recorded; the names applied. `conn` is in
    autocommit mode (isolation_level=None). Each step also brings a file whose older release already made
    part of the change (a column added when opened) to the same shape, so it checks before it alters."""
    done = applied(conn)
    pending = [(name, step) for name, step in migrations if name not in done]
    if not pending:
        return []
    ran: list[str] = []
    # All pending steps in one transaction: a process killed mid-way leaves the file as it was, never half-made.
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(_LEDGER)
        for name, step in pending:
            # another process may have applied it while this one waited for the lock
            if conn.execute("SELECT 1 FROM migrations WHERE name = ?", (name,)).fetchone() is None:
                if isinstance(step, str):
                    for statement in split_statements(step):
                        conn.execute(statement)
                else:
                    step(conn)
                conn.execute("INSERT INTO migrations(name) VALUES(?)", (name,))
                ran.append(name)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # SQLite may have rolled back already (a full disk, say)
            conn.execute("ROLLBACK")
        raise
    return ran


def split_statements(script: str) -> list[str]:
    """The statements of `script`, one per `;` at a line end, except inside a trigger's BEGIN ... END
    (executescript would commit the migration's transaction)."""
    statements: list[str] = []
    pending = ""
    for part in script.strip().removesuffix(";").split(";\n"):
        pending += part + ";\n"
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip())
            pending = ""
    return [statement for statement in statements if statement.strip(";\n ")]
