"""Incremental ingest: transcripts -> redacted session -> markdown archive + handoff file + index.

An unchanged file costs one stat. A session with any new or grown file is read again whole. Sessions
are stored oldest first, in transactions of about a second's work each written after their files
(core/prepare.py reads them ahead, in parallel for a large ingest): killing ingest at any moment
leaves the store consistent, and the next run ends with exactly the files of an uninterrupted one.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

import orjson

from core.discovery import SessionFiles, SourceFile, group_sessions, scan_files, subagent_parent
from core.extractor import EXTRACTOR_NAME, SUBSTANCE_RULES, with_keywords
from core.handoff import atomic_write, handoff_relpath
from core.pending import clear_mark, expire_marks, read_marks
from core.prepare import PreparedSession, prepared_in_order, worker_count
from core.projects import ProjectNames
from core.reindex import refresh_fulltext
from core.session_builder import parse_time
from core.spokes import CLAUDE_CODE, Source
from core.store import Store
from core.term_stats import TermStats
from core.transcript_reader import peek_fields

Progress = Callable[[int, int, str], None]
# One commit per session made the full-text index write a segment and the term statistics rewrite
# their pages for every session; a batch shares that work, and a second keeps other writers' waits short.
_BATCH_SECONDS = 1.0
_BATCH_MAX_SESSION_BYTES = 4_000_000  # a larger session starts a batch: it is read outside any transaction


class IngestError(RuntimeError):
    """Ingest cannot start; the message says what to do."""


@dataclass
class IngestReport:
    files_seen: int = 0
    files_changed: int = 0
    sessions_updated: int = 0
    sessions_skipped: int = 0  # empty files and files that are not Claude Code transcripts
    subagent_runs: int = 0
    orphans: int = 0
    bad_lines: int = 0
    bytes_read: int = 0
    seconds: float = 0.0
    updated: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"{self.files_seen} files, {self.files_changed} new or changed; {self.sessions_updated} sessions "
            f"updated, {self.sessions_skipped} skipped (empty or not transcripts), {self.subagent_runs} subagent "
            f"runs folded, {self.orphans} orphan notes, {self.bad_lines} bad lines skipped, "
            f"{self.bytes_read / 1e6:.1f} MB read in {self.seconds:.1f}s"
        )

    def to_json(self) -> str:
        data = {k: v for k, v in self.__dict__.items() if k != "updated"}
        return orjson.dumps(data).decode()


@dataclass(frozen=True)
class IngestPaths:
    projects_dir: Path
    handoffs_dir: Path
    archive_dir: Path
    pending_dir: Path | None = None  # SessionEnd marks (core/pending.py): forced, then deleted
    machine: str = ""  # this machine's name, for the sessions of projects_dir
    projects: ProjectNames = field(default_factory=ProjectNames)  # names this machine's sessions' projects
    spokes: tuple[Source, ...] = ()  # the other machines' folders (core/spokes.py)

    @property
    def sources(self) -> list[Source]:
        return [Source(CLAUDE_CODE, self.projects_dir, self.machine, self.projects), *self.spokes]


def _first_time(files: SessionFiles) -> str:
    for source in files.main or files.subagents:
        stamp = parse_time(peek_fields(source.path, ("timestamp",)).get("timestamp"))
        if stamp is not None:
            return stamp.astimezone(dt.UTC).isoformat()
    return "9999"  # no timestamp: after every dated session, ordered by id


def ingest(store: Store, paths: IngestPaths, *, redact: Callable[[str], str], zone: ZoneInfo,
           progress: Progress | None = None, only: set[str] | None = None,
           force: frozenset[str] = frozenset(), workers: int | None = None) -> IngestReport:
    """Ingest new and changed sessions; `force` re-extracts those sessions even if unchanged, `only`
    limits the run to the given session ids (both by full id). `workers`: processes reading sessions
    (default: as many as pay off, see `prepare.worker_count`); the result is the same for any number."""
    started = time.perf_counter()
    report = IngestReport()
    if not paths.projects_dir.is_dir():
        raise IngestError(
            f"the Claude projects folder {paths.projects_dir} does not exist: set projects_dir in the config "
            f"file or EYWA_PROJECTS_DIR to the folder that holds Claude Code's transcripts"
        )
    refresh_fulltext(store, paths.archive_dir)  # an index split by an older eywa: before new sessions
    marks = read_marks(paths.pending_dir) if paths.pending_dir is not None else {}
    force = force | frozenset(marks) | _judged_by_older_rules(store)
    scanned = [(source, scan_files(source.root)) for source in paths.sources]
    report.files_seen = sum(len(files) for _, files in scanned)
    known = store.source_states()
    changed = {str(f.path) for _, files in scanned for f in files
               if known.get(str(f.path), (None, None))[:2] != (f.size, f.mtime_ns)}
    report.files_changed = len(changed)

    def parent_of(source: SourceFile) -> str | None:
        state = known.get(str(source.path))
        if state is not None and str(source.path) not in changed and state[2]:
            return state[2]
        return subagent_parent(source)

    groups: dict[str, SessionFiles] = {}
    for source, files in scanned:
        for sid, group in group_sessions(files, parent_of).items():
            group.source = source
            # One session id in two folders (a transcript copied between machines): one session, not two.
            groups.setdefault(sid, group).merge(group)
    if marks:
        expire_marks(marks, set(groups))
    dirty = [
        g for g in groups.values()
        if (only is None or g.session_id in only)
        and (g.session_id in force or any(str(f.path) in changed for f in g.files))
    ]
    dirty.sort(key=lambda g: (_first_time(g), g.session_id))
    workers = worker_count(dirty) if workers is None else workers
    prepared = prepared_in_order(dirty, redact, zone, workers)
    with contextlib.closing(prepared), store.staged_text_index():
        done = 0
        while done < len(dirty):
            # A batch's first session is read before its transaction begins, so that reading a large
            # session never holds the write lock; small ones join the batch while it is young.
            began, first, session = time.perf_counter(), done, next(prepared)
            superseded: list[Path] = []
            with store.transaction():
                terms = TermStats(store.conn)
                while True:
                    superseded += _store_session(store, terms, dirty[done], session, paths, report)
                    done += 1
                    if progress is not None:
                        progress(done, len(dirty), dirty[done - 1].session_id)
                    if (done == len(dirty) or time.perf_counter() - began >= _BATCH_SECONDS
                            or sum(f.size for f in dirty[done].files) > _BATCH_MAX_SESSION_BYTES):
                        break
                    session = next(prepared)
                terms.flush()
            for path in superseded:
                path.unlink(missing_ok=True)
            for group in dirty[first:done]:
                if group.session_id in marks:
                    clear_mark(marks[group.session_id])
    report.seconds = time.perf_counter() - started
    with store.transaction():
        store.set_meta("last_ingest_at", dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
        store.set_meta("last_ingest_report", report.to_json())
        if only is None:  # every session was judged by these rules
            store.set_meta("substance_rules", SUBSTANCE_RULES)
    return report


def _judged_by_older_rules(store: Store) -> frozenset[str]:
    """The sessions found of no substance by another SUBSTANCE_RULES than this eywa's: extracted again,
    so an upgrade finds what the old rules hid (a session driven by a slash command) without `--force`."""
    if store.get_meta("substance_rules") == SUBSTANCE_RULES:
        return frozenset()
    return frozenset(uid for (uid,) in store.conn.execute(
        "SELECT session_uuid FROM handoffs WHERE substance = 0 AND extractor = ?", (EXTRACTOR_NAME,)))


def _store_session(store: Store, terms: TermStats, group: SessionFiles, prepared: PreparedSession,
                   paths: IngestPaths, report: IngestReport) -> list[Path]:
    """Write a session's files and rows, inside the caller's transaction; the files it supersedes, to
    delete once that transaction is committed."""
    stats = prepared.stats
    report.bytes_read += sum(s.bytes_read for s in stats.values())
    report.bad_lines += prepared.bad_lines

    def record_sources(kind_of_main: str) -> None:
        for source in group.files:
            file_stats = stats.get(str(source.path))
            if file_stats is None:  # gone between the scan and the read: unrecorded, so seen anew if it returns
                continue
            kind = kind_of_main if source.kind == "main" else source.kind
            store.put_source(str(source.path), source.size, source.mtime_ns, group.session_id, kind,
                             file_stats.bad_lines)

    if prepared.handoff is None:  # empty, or not a Claude Code transcript
        report.sessions_skipped += 1
        record_sources("skipped")
        return []
    terms.record(prepared.session_id, prepared.terms)
    handoff = with_keywords(prepared.handoff, weights=prepared.weights, df=terms.df,
                            total_docs=terms.document_count())
    relpath = handoff_relpath(handoff)
    old = store.conn.execute("SELECT path FROM handoffs WHERE session_uuid = ?", (prepared.session_id,)).fetchone()
    # Files first, row last: a crash in between leaves files that the next run rewrites identically.
    atomic_write(paths.archive_dir / relpath, prepared.markdown)
    atomic_write(paths.handoffs_dir / relpath, handoff.to_markdown())
    store.put_handoff(handoff, path=relpath.as_posix(), archive_path=relpath.as_posix(),
                      transcript=prepared.markdown, columns=prepared.columns, ended_at=prepared.ended_at,
                      extractor=EXTRACTOR_NAME)
    record_sources("orphan" if prepared.orphan else "main")
    report.sessions_updated += 1
    report.subagent_runs += prepared.subagent_runs
    report.orphans += int(prepared.orphan)
    report.updated.append(prepared.session_id)
    if old is not None and old[0] != relpath.as_posix():
        # The session's day moved (it went on past midnight): the old files are superseded.
        return [paths.handoffs_dir / old[0], paths.archive_dir / old[0]]
    return []
