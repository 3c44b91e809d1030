"""`eywa forget`: a session gone from everything Eywa keeps, and kept out while its transcript exists.

Forgetting removes the session's handoff and archive files, its index rows (postings, full text, term
statistics, LLM state) and the copies of its transcripts a spoke pushed here, and records a tombstone (its
id alone) that ingest honours. What SQLite frees is overwritten (`secure_delete`), its log truncated, and
the full-text index rebuilt without the session: nothing of it stays in a file. `unforget` lifts the
tombstone; the next ingest reads the transcript again if it is still there.
"""

from __future__ import annotations

from pathlib import Path

from eywa.core.config.clock import now
from eywa.core.index.store import Store
from eywa.core.index.term_stats import TermStats
from eywa.core.ingest.run import IngestPaths


def forget(store: Store, session_ids: list[str], files: IngestPaths) -> int:
    """Forget these sessions (full ids, indexed or not); how many had a handoff."""
    removed: list[Path] = []
    found = 0
    at = now().isoformat(timespec="seconds")
    with store.scrubbing():
        with store.transaction():
            terms = TermStats(store.conn)
            for uid in dict.fromkeys(session_ids):
                row = store.conn.execute("SELECT short_id, path, archive_path FROM handoffs WHERE session_uuid = ?",
                                         (uid,)).fetchone()
                short_id = row[0] if row else uid[:8]
                if row is not None:
                    found += 1
                    removed += [files.handoffs_dir / row[1]] + ([files.archive_dir / row[2]] if row[2] else [])
                removed += [copy for path in store.source_paths(uid) if (copy := files.spoke_copy(path))]
                store.delete_handoff(uid)
                terms.forget(uid)
                if _has_table(store, "llm_state"):  # the LLM pass's tables exist once it ran
                    store.conn.execute("DELETE FROM llm_state WHERE session_uuid = ?", (uid,))
                store.conn.execute("DELETE FROM redaction_pending WHERE session_uuid = ?", (uid,))
                store.add_tombstone(uid, short_id, at)
            terms.flush(drop_unused=True)
        for path in removed:
            path.unlink(missing_ok=True)
    return found


def unforget(store: Store, id_or_prefix: str) -> str | None:
    """Lift the tombstone of the forgotten session with this id or unique prefix (of its full or short id);
    its full id, or None when no forgotten session has it. Raises ValueError when several do."""
    matches = sorted(uid for uid, short_id in store.forgotten().items()
                     if uid.startswith(id_or_prefix) or short_id.startswith(id_or_prefix))
    if not matches:
        return None
    if len(matches) > 1:
        raise ValueError(f"'{id_or_prefix}' matches {len(matches)} forgotten sessions ({', '.join(matches[:5])});"
                         " give more characters")
    with store.transaction():
        store.remove_tombstone(matches[0])
    return matches[0]


def _has_table(store: Store, name: str) -> bool:
    return store.conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None
