"""Stored text follows today's redaction rules: what an older eywa stored (or stored under other configured
patterns) is redacted again by ingest, once, resumably.

The rules that wrote the index are in its meta (`redaction_rules`, `Redactor.rules`). When they are not
today's, every indexed session is queued in `redaction_pending`, and each leaves the queue in the transaction
that re-redacts it: a run killed half-way goes on where it stopped. A deterministic handoff whose transcript
is still there is drafted again from it by the ingest itself (everything recomputed). Any other session
(Claude's handoff, an imported one, or a transcript the agent's cleanup deleted) is redacted where it lies:
its handoff file field by field, its archive, its index row and full text, and the words that vanished from
them leave its term statistics. The LLM state's stored answers and errors, and the copies spokes pushed to
this hub, are redacted in place too. While the queue is worked through, what SQLite frees is overwritten;
after it, its log is truncated and the full-text index rebuilt, so no old text stays in a file.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson

from eywa.core.config.clock import now
from eywa.core.extract.terms import words_of
from eywa.core.handoffs.model import Handoff, atomic_write, parse_handoff
from eywa.core.index.store import Store
from eywa.core.index.term_stats import TermStats
from eywa.core.redaction.copies import redact_in_place, redact_json
from eywa.core.redaction.scrubber import Redactor

RULES_META = "redaction_rules"
COPIES_META = "spoke_copies_rules"  # the rules the spokes' copies on this hub were last redacted under
LAST_META = "last_reredaction"  # what the last re-redaction did, for `eywa stats`
_BATCH_SECONDS = 1.0
Progress = Callable[[int, int, str], None]


@dataclass
class ReRedaction:
    rules_from: str
    rules_to: str
    queued: int = 0
    redrafted: int = 0  # from the transcript, by the ingest
    in_place: int = 0
    copies: int = 0  # spoke copies on this hub that held something to redact
    seconds: float = 0.0


def begin(store: Store, redactor: Redactor) -> ReRedaction | None:
    """Queue every session when the index was written under other rules than `redactor`'s (recording its
    rules); the re-redaction in progress, or None when there is none. A new, empty index is today's."""
    stored = store.get_meta(RULES_META)
    if stored != redactor.rules and not store.has_handoffs():  # a new index: written under today's rules
        with store.transaction():
            store.set_meta(RULES_META, redactor.rules)
        return None
    pending = store.conn.execute("SELECT COUNT(*) FROM redaction_pending").fetchone()[0]
    if stored == redactor.rules and not pending:
        return None
    if stored != redactor.rules:
        with store.transaction():
            store.conn.execute("INSERT OR IGNORE INTO redaction_pending(session_uuid)"
                               " SELECT session_uuid FROM handoffs")
            pending = store.conn.execute("SELECT COUNT(*) FROM redaction_pending").fetchone()[0]
            store.set_meta("redaction_rules_before", stored or "1")
            store.set_meta(RULES_META, redactor.rules)
            _redact_llm_state(store, redactor)
    if not pending and not store.get_meta("redaction_rules_before"):
        return None
    return ReRedaction(store.get_meta("redaction_rules_before") or "1", redactor.rules, queued=pending)


def pending(store: Store) -> set[str]:
    return {uid for (uid,) in store.conn.execute("SELECT session_uuid FROM redaction_pending")}


def done(store: Store, session_id: str) -> None:
    """The session's stored text is today's (inside the caller's transaction)."""
    store.conn.execute("DELETE FROM redaction_pending WHERE session_uuid = ?", (session_id,))


def _redact_llm_state(store: Store, redactor: Redactor) -> None:
    if store.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'llm_state'").fetchone() is None:
        return
    rows = store.conn.execute("SELECT session_uuid, result, last_error FROM llm_state").fetchall()
    for uid, result, error in rows:
        new_result = redact_json(result, redactor) if result else result
        new_error = redactor.redact(error)
        if new_result != result or new_error != error:
            store.conn.execute("UPDATE llm_state SET result = ?, last_error = ? WHERE session_uuid = ?",
                               (new_result, new_error, uid))


def redact_copies(store: Store, spokes_dir: Path | None, redactor: Redactor, progress: Progress | None,
                  run: ReRedaction | None) -> int:
    """Redact the copies spokes pushed to this hub where they lie, once per rules (a hub upgraded from the
    releases that received raw transcripts, or new rules); files rewritten keep their size and time in the
    index's sources when they matched, so ingest does not read them again for that. How many changed."""
    if spokes_dir is None or store.get_meta(COPIES_META) == redactor.rules:
        return 0
    files = sorted(path for path in spokes_dir.rglob("*") if path.is_file() and not path.is_symlink()) \
        if spokes_dir.is_dir() else []
    changed = 0
    for number, path in enumerate(files, 1):
        before = path.stat()
        if redact_in_place(path, redactor):
            changed += 1
            after = path.stat()
            with store.transaction():
                store.conn.execute("UPDATE sources SET size = ?, mtime_ns = ? WHERE path = ? AND size = ?"
                                   " AND mtime_ns = ?", (after.st_size, after.st_mtime_ns, str(path),
                                                          before.st_size, before.st_mtime_ns))
        if progress is not None:
            progress(number, len(files), "redacting spoke copies")
    with store.transaction():
        store.set_meta(COPIES_META, redactor.rules)
    if run is not None:
        run.copies += changed
    return changed


def redact_stored(store: Store, session_ids: list[str], handoffs_dir: Path, archive_dir: Path,
                  redactor: Redactor, run: ReRedaction, progress: Progress | None) -> None:
    """Redact these sessions' stored text where it lies, in transactions of about a second."""
    if not session_ids:
        return
    at = 0
    while at < len(session_ids):
        began = time.perf_counter()
        written: list[tuple[Path, str]] = []
        with store.transaction():
            terms = TermStats(store.conn)
            while True:
                uid = session_ids[at]
                at += 1
                written += _redact_session(store, terms, uid, handoffs_dir, archive_dir, redactor)
                done(store, uid)
                run.in_place += 1
                if progress is not None:
                    progress(at, len(session_ids), uid)
                if at == len(session_ids) or time.perf_counter() - began >= _BATCH_SECONDS:
                    break
            terms.flush()
        for path, text in written:  # the row first, then its files: a crash in between redacts them again
            atomic_write(path, text)


def _redact_session(store: Store, terms: TermStats, uid: str, handoffs_dir: Path, archive_dir: Path,
                    redactor: Redactor) -> list[tuple[Path, str]]:
    row = store.conn.execute("SELECT path, archive_path, origin, extractor, ended_at FROM handoffs"
                             " WHERE session_uuid = ?", (uid,)).fetchone()
    if row is None:
        return []
    path, archive_path, origin, extractor, ended_at = row
    handoff_file, archive_file = handoffs_dir / path, archive_dir / archive_path if archive_path else None
    try:
        handoff = parse_handoff(handoff_file.read_text(encoding="utf-8"), fallback_id=handoff_file.stem)
    except (OSError, UnicodeDecodeError, ValueError):
        handoff = None
    if handoff is None:  # the file is gone or unreadable: the row is what is left
        handoff = _from_row(store, uid)
    old_archive = _read(archive_file)
    new_handoff, new_archive = redact_handoff(handoff, redactor), redactor.redact(old_archive)
    # What the rules took out, word by word: terms and keywords made of those words go with them.
    vanished = words_of(f"{handoff.headline}\n{handoff.body}\n{old_archive}") \
        - words_of(f"{new_handoff.headline}\n{new_handoff.body}\n{new_archive}")
    keywords = [k for k in new_handoff.keywords if not vanished.intersection(k.split("-"))]
    if keywords != new_handoff.keywords:
        new_handoff = new_handoff.model_copy(update={"keywords": keywords})
    if new_handoff is handoff and new_archive == old_archive and not _row_differs(store, uid, handoff, redactor):
        return []
    store.put_handoff(new_handoff, path=path, archive_path=archive_path, transcript=new_archive,
                      ended_at=ended_at, origin=origin, extractor=extractor)
    recorded = store.conn.execute("SELECT terms FROM session_terms WHERE session_uuid = ?", (uid,)).fetchone()
    if vanished and recorded is not None:
        terms.record(uid, [term for term in orjson.loads(recorded[0]) if not vanished.intersection(term.split("-"))])
    written = [(handoff_file, new_handoff.to_markdown())]
    if archive_file is not None and new_archive != old_archive:
        written.append((archive_file, new_archive))
    return written


def _read(path: Path | None) -> str:
    try:
        return path.read_text(encoding="utf-8") if path is not None else ""
    except (OSError, UnicodeDecodeError):
        return ""


def _row_differs(store: Store, uid: str, handoff: Handoff, redactor: Redactor) -> bool:
    """The index row or full text holds something the file does not show redacted (an older eywa's row)."""
    row = store.conn.execute("SELECT h.headline, h.body, f.prompts, f.replies, f.actions, f.context FROM handoffs h"
                             " LEFT JOIN fulltext f ON f.id = h.rowid WHERE h.session_uuid = ?", (uid,)).fetchone()
    return row is not None and any(text and redactor.redact(text) != text for text in row)


def _from_row(store: Store, uid: str) -> Handoff:
    (short_id, date, duration, model, headline, projects, keywords, substance, body, agent, machine) = \
        store.conn.execute("SELECT short_id, date, duration_min, model, headline, projects, keywords, substance,"
                           " body, agent, machine FROM handoffs WHERE session_uuid = ?", (uid,)).fetchone()
    return Handoff(short_id=short_id, session_id=uid, date=date, duration=f"{duration}m", model=model,
                   headline=headline, projects=orjson.loads(projects), keywords=orjson.loads(keywords),
                   substance=substance, agent=agent, machine=machine, raw_body=body)


def redact_handoff(handoff: Handoff, redactor: Redactor) -> Handoff:
    """The handoff with every text field redacted; the same object when nothing changed."""
    redact = redactor.redact
    changes: dict[str, object] = {}
    for name in ("headline", "model", "raw_body"):
        value = getattr(handoff, name)
        if value and (new := redact(value)) != value:
            changes[name] = new
    for name in ("projects", "keywords", "what_happened", "insights", "key_files", "open_threads"):
        values = getattr(handoff, name)
        new_values = [redact(value) for value in values]
        if new_values != values:
            changes[name] = new_values
    return handoff.model_copy(update=changes) if changes else handoff


def finish(store: Store, run: ReRedaction, started: float) -> None:
    """The queue is empty: what was done recorded for `eywa stats` (the caller's `Store.scrubbing` then makes
    the old text unreadable in the files)."""
    run.seconds = time.perf_counter() - started
    with store.transaction():
        store.conn.execute("DELETE FROM meta WHERE key = 'redaction_rules_before'")
        store.set_meta(LAST_META, orjson.dumps({**run.__dict__, "at": now().isoformat(timespec="seconds")}).decode())
