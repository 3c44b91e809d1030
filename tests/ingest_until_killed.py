"""`eywa ingest` that SIGKILLs itself at a chosen point, for tests/test_crash_recovery.py.

    python -m tests.ingest_until_killed NOTE count        # run to the end; NOTE gets the counts of both points
    python -m tests.ingest_until_killed NOTE write N      # die halfway through writing the Nth handoff/archive file
    python -m tests.ingest_until_killed NOTE sql N        # die in SQLite's Nth progress callback (every 100 steps)

Before dying it writes to NOTE where it was, so the test can tell what each kill hit.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
import types
from pathlib import Path
from typing import IO, Any

import eywa.core.handoffs.model
import eywa.core.index.store
from eywa.cli.main import main

SQL_STEPS = 100  # SQLite virtual machine steps between progress callbacks


def run(note: Path, mode: str, target: int) -> int:
    counts = {"write": 0, "sql": 0}
    ingest = os.getpid()

    def die(where: str) -> None:
        note.write_text(where)
        # a point reached in a step ingest forks (its plan) kills the ingest too, as a kill of ingest would
        if os.getpid() != ingest:
            os.kill(ingest, signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)

    def fdopen(fd: int, *args: Any, **kwargs: Any) -> IO[Any]:
        handle = os.fdopen(fd, *args, **kwargs)
        counts["write"] += 1
        if mode == "write" and counts["write"] == target:
            whole = handle.write

            def half_then_die(text: str) -> int:
                whole(text[: len(text) // 2])
                handle.flush()
                die(f"write {os.readlink(f'/proc/self/fd/{handle.fileno()}')}")
                return 0

            handle.write = half_then_die
        return handle

    # Only eywa.core.handoffs.model sees this os: its atomic_write is the one way handoff and archive files are written.
    eywa.core.handoffs.model.os = types.SimpleNamespace(**{**vars(os), "fdopen": fdopen})
    opened = eywa.core.index.store.Store.__init__

    def store_init(self: eywa.core.index.store.Store, *args: Any, **kwargs: Any) -> None:
        opened(self, *args, **kwargs)
        conn: sqlite3.Connection = self.conn

        def progress() -> int:
            counts["sql"] += 1
            if mode == "sql" and counts["sql"] == target:
                die(f"sql {'in a transaction' if conn.in_transaction else 'outside transactions'}")
            return 0

        conn.set_progress_handler(progress, SQL_STEPS)

    eywa.core.index.store.Store.__init__ = store_init
    code = main(["ingest"])
    note.write_text(f"completed write={counts['write']} sql={counts['sql']}")
    return code


if __name__ == "__main__":
    note_path, how = Path(sys.argv[1]), sys.argv[2]
    sys.exit(run(note_path, how, int(sys.argv[3]) if len(sys.argv) > 3 else 0))
