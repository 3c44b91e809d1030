"""Incremental ingest: transcripts -> redacted session -> markdown archive + handoff file + index.

An unchanged file costs one stat. A session with any new or grown file is read again whole. Sessions
are processed oldest first, each in one transaction written after its files: killing ingest at any
moment leaves the store consistent, and the next run ends with exactly the files of an
uninterrupted one.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

import orjson

from core.discovery import SessionFiles, SourceFile, group_sessions, read_meta, scan_files, subagent_parent
from core.extractor import EXTRACTOR_NAME, extract, session_terms
from core.handoff import atomic_write, handoff_relpath
from core.pending import clear_mark, expire_marks, read_marks
from core.renderer import Renderer
from core.session_builder import build_session, is_transcript, parse_time
from core.store import Store
from core.transcript_reader import peek_fields

Progress = Callable[[int, int, str], None]


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


def _first_time(files: SessionFiles) -> str:
    for source in files.main or files.subagents:
        stamp = parse_time(peek_fields(source.path, ("timestamp",)).get("timestamp"))
        if stamp is not None:
            return stamp.astimezone(dt.UTC).isoformat()
    return "9999"  # no timestamp: after every dated session, ordered by id


def ingest(store: Store, paths: IngestPaths, *, redact: Callable[[str], str], zone: ZoneInfo,
           progress: Progress | None = None, only: set[str] | None = None,
           force: frozenset[str] = frozenset()) -> IngestReport:
    """Ingest new and changed sessions; `force` re-extracts those sessions even if unchanged, `only`
    limits the run to the given session ids (both by full id)."""
    started = time.perf_counter()
    report = IngestReport()
    if not paths.projects_dir.is_dir():
        raise IngestError(
            f"the Claude projects folder {paths.projects_dir} does not exist: set projects_dir in the config "
            f"file or EYWA_PROJECTS_DIR to the folder that holds Claude Code's transcripts"
        )
    marks = read_marks(paths.pending_dir) if paths.pending_dir is not None else {}
    force = force | frozenset(marks)
    files = scan_files(paths.projects_dir)
    report.files_seen = len(files)
    known = store.source_states()
    changed = {str(f.path) for f in files if known.get(str(f.path), (None, None))[:2] != (f.size, f.mtime_ns)}
    report.files_changed = len(changed)

    def parent_of(source: SourceFile) -> str | None:
        state = known.get(str(source.path))
        if state is not None and str(source.path) not in changed and state[2]:
            return state[2]
        return subagent_parent(source)

    groups = group_sessions(files, parent_of)
    if marks:
        expire_marks(marks, set(groups))
    dirty = [
        g for g in groups.values()
        if (only is None or g.session_id in only)
        and (g.session_id in force or any(str(f.path) in changed for f in g.files))
    ]
    dirty.sort(key=lambda g: (_first_time(g), g.session_id))
    renderer = Renderer(zone)
    for done, group in enumerate(dirty, start=1):
        _ingest_session(store, group, paths, renderer, redact, zone, report)
        if group.session_id in marks:
            clear_mark(marks[group.session_id])
        if progress is not None:
            progress(done, len(dirty), group.session_id)
    report.seconds = time.perf_counter() - started
    with store.transaction():
        store.set_meta("last_ingest_at", dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
        store.set_meta("last_ingest_report", report.to_json())
    return report


def _ingest_session(store: Store, group: SessionFiles, paths: IngestPaths, renderer: Renderer,
                    redact: Callable[[str], str], zone: ZoneInfo, report: IngestReport) -> None:
    subagent_files = [
        (f.path, f.kind, read_meta(f) if f.kind == "subagents-dir" else {}) for f in group.subagents
    ]
    session, stats = build_session(group.session_id, [f.path for f in group.main], subagent_files, redact)
    report.bytes_read += sum(s.bytes_read for s in stats.values())
    report.bad_lines += session.bad_lines

    def record_sources(kind_of_main: str) -> None:
        for source in group.files:
            file_stats = stats.get(str(source.path))
            kind = kind_of_main if source.kind == "main" else source.kind
            store.put_source(str(source.path), source.size, source.mtime_ns, group.session_id, kind,
                             file_stats.bad_lines if file_stats else 0)

    if not is_transcript(session):
        report.sessions_skipped += 1
        with store.transaction():
            record_sources("skipped")
        return
    markdown = renderer.render(session)
    weights, terms = session_terms(session)
    with store.transaction():
        store.set_session_terms(session.session_id, terms)
        handoff = extract(session, weights=weights, df=store.term_df, total_docs=store.document_count(),
                          zone=zone)
        relpath = handoff_relpath(handoff)
        old = store.conn.execute(
            "SELECT path FROM handoffs WHERE session_uuid = ?", (session.session_id,)
        ).fetchone()
        # Files first, row last: a crash in between leaves files that the next run rewrites identically.
        atomic_write(paths.archive_dir / relpath, markdown)
        atomic_write(paths.handoffs_dir / relpath, handoff.to_markdown())
        store.put_handoff(handoff, path=relpath.as_posix(), archive_path=relpath.as_posix(), transcript=markdown,
                          ended_at=session.last_ts.isoformat() if session.last_ts else "",
                          extractor=EXTRACTOR_NAME)
        record_sources("orphan" if session.orphan else "main")
    if old is not None and old[0] != relpath.as_posix():
        # The session's day moved (it went on past midnight): the old files are superseded.
        (paths.handoffs_dir / old[0]).unlink(missing_ok=True)
        (paths.archive_dir / old[0]).unlink(missing_ok=True)
    report.sessions_updated += 1
    report.subagent_runs += len(session.subagents)
    report.orphans += int(session.orphan)
    report.updated.append(session.session_id)
