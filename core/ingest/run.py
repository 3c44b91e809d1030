"""Incremental ingest: transcripts -> redacted session -> markdown archive + handoff file + index.

An unchanged file costs one stat. A session with any new or grown file is read again whole. Sessions
are stored oldest first, in transactions of about a second's work each written after their files
(core/ingest/prepare.py reads them ahead, in parallel for a large ingest): killing ingest at any moment
leaves the store consistent, and the next run ends with exactly the files of an uninterrupted one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import time
from array import array
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

import orjson

from eywa.core.config.clock import now
from eywa.core.errors import IngestError
from eywa.core.extract.deterministic import EXTRACTOR_NAME, HANDOFF_RULES, SUBSTANCE_RULES, with_keywords
from eywa.core.handoffs.model import atomic_write, handoff_relpath
from eywa.core.index.store import SourceState, Store
from eywa.core.index.term_stats import TermStats
from eywa.core.ingest import reredact
from eywa.core.ingest.agent_runs import link_runs, may_link
from eywa.core.ingest.allocator import bound_allocator
from eywa.core.ingest.apart import apart
from eywa.core.ingest.changed import ChangedFiles
from eywa.core.ingest.pending import clear_mark, expire_marks, read_marks
from eywa.core.ingest.prepare import PreparedSession, prepared_in_order, worker_count
from eywa.core.ingest.reindex import refresh_fulltext
from eywa.core.ingest.spool import SessionSpool
from eywa.core.redaction.scrubber import Redactor
from eywa.core.sources import CLAUDE_CODE, Source
from eywa.core.sources.common import parse_time
from eywa.core.sources.discovery import Groups, file_session, scan_sources, session_key
from eywa.core.sources.jsonl import peek_fields
from eywa.core.sources.plugin import AGENT_RUN, SessionFiles, SourceFile
from eywa.core.sources.projects import ProjectNames

Progress = Callable[[int, int, str], None]
# One commit per session made the full-text index write a segment and the term statistics rewrite
# their pages for every session; a batch shares that work, and a second keeps other writers' waits short.
_BATCH_SECONDS = 1.0
_BATCH_MAX_SESSION_BYTES = 4_000_000  # a larger session starts a batch: it is read outside any transaction
# From this many bytes of transcripts to read, the full-text index's pages are paged out while it is written
# (core/index/page_out.py): that bounds the memory of a large ingest's merges, but drops the pages from the page
# cache too, so a smaller ingest (the bot's every few minutes) leaves them for the next search (bench/RESULTS.md).
PAGE_OUT_BYTES = 200_000_000


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
    # The updated sessions' ids, each ended by a NUL (no file name holds one): 37 bytes a session, not a list's 93,
    # held through a first ingest of a large disk for the LLM pass after it; moved to `_read` when read.
    _updated: bytearray = field(default_factory=bytearray, repr=False)
    _read: list[str] = field(default_factory=list, repr=False)

    @property
    def updated(self) -> list[str]:
        """The ids of the sessions updated, in the order they were stored (each decoded once)."""
        self._read += self._updated.decode().split("\0")[:-1]
        self._updated.clear()
        return self._read

    def add_updated(self, session_id: str) -> None:
        self._updated += session_id.encode() + b"\0"

    def summary(self) -> str:
        return (
            f"{counted(self.files_seen, 'file')}, {self.files_changed} new or changed; "
            f"{counted(self.sessions_updated, 'session')} updated, {self.sessions_skipped} skipped (empty or not "
            f"transcripts), {counted(self.subagent_runs, 'subagent run')} folded, "
            f"{counted(self.orphans, 'orphan note')}, {counted(self.bad_lines, 'bad line')} skipped, "
            f"{self.bytes_read / 1e6:.1f} MB read in {self.seconds:.1f}s"
        )

    def to_json(self) -> str:
        data = {k: v for k, v in self.__dict__.items() if not k.startswith("_")}
        return orjson.dumps(data).decode()


def counted(number: int, thing: str) -> str:
    """`number` and `thing`, plural unless it is one: "1 session", "2 sessions"."""
    return f"{number} {thing}{'' if number == 1 else 's'}"


@dataclass(frozen=True)
class IngestPaths:
    sources: tuple[Source, ...]  # the transcript folders (core/sources); disabled and missing ones are skipped
    handoffs_dir: Path
    archive_dir: Path
    pending_dir: Path | None = None  # SessionEnd marks (core/ingest/pending.py): forced, then deleted
    # Each machine's way of naming projects (its spoke's repository map, core/machines/spokes.py); a machine it does
    # not list, by this machine's folders.
    projects: Mapping[str, ProjectNames] = field(default_factory=dict)
    spokes_dir: Path | None = None  # on a hub, where the spokes' copies land (core/machines/spokes.py)

    def spoke_copy(self, path: str) -> Path | None:
        """`path` when it is a copy a spoke pushed here, else None."""
        candidate = Path(path)
        return candidate if self.spokes_dir is not None and candidate.is_relative_to(self.spokes_dir) else None


def _first_time(files: SessionFiles) -> str:
    for source in files.main or files.subagents:
        stamp = parse_time(peek_fields(source.path, ("timestamp",)).get("timestamp"))
        if stamp is not None:
            return stamp.astimezone(dt.UTC).isoformat()
    return "9999"  # no timestamp: after every dated session, ordered by id


def ingest(store: Store, paths: IngestPaths, *, redactor: Redactor, zone: ZoneInfo,
           progress: Progress | None = None, only: set[str] | None = None,
           force: frozenset[str] = frozenset(), workers: int | None = None) -> IngestReport:
    """Ingest new and changed sessions; `force` re-extracts those sessions even if unchanged, `only`
    limits the run to the given session ids (both by full id). `workers`: processes reading sessions
    (default: as many as pay off, see `prepare.worker_count`); the result is the same for any number.
    Stored text written under older redaction rules is redacted again first (core/ingest/reredact.py)."""
    bound_allocator()
    run = reredact.begin(store, redactor)
    with store.scrubbing() if run is not None else contextlib.nullcontext():
        return _ingest(store, paths, redactor, zone, progress, only, force, workers, run)


def _ingest(store: Store, paths: IngestPaths, redactor: Redactor, zone: ZoneInfo, progress: Progress | None,
            only: set[str] | None, force: frozenset[str], workers: int | None,
            run: reredact.ReRedaction | None) -> IngestReport:
    started = time.perf_counter()
    redact = redactor.redact
    report = IngestReport()
    enabled = [source for source in paths.sources if source.enabled]
    if not any(source.path.is_dir() for source in enabled):
        claude = next((str(s.path) for s in enabled if s.kind == CLAUDE_CODE), "")
        raise IngestError(
            f"no transcript folder exists ({', '.join(str(s.path) for s in enabled) or 'every source is off'}): "
            + (f"set projects_dir in the config file or EYWA_PROJECTS_DIR to the folder that holds Claude Code's "
               f"transcripts (now {claude}), " if claude else "")
            + "or give each agent's folder in the `sources` list"
        )
    refresh_fulltext(store, paths.archive_dir)  # an index split by an older eywa: before new sessions
    reredact.redact_copies(store, paths.spokes_dir, redactor, progress, run)
    marks = read_marks(paths.pending_dir) if paths.pending_dir is not None else {}
    dirty, to_read, in_place_before = _queue(store, paths, enabled, redactor, progress, only, force, marks, run,
                                             report)
    workers = worker_count(dirty) if workers is None else workers
    prepared = prepared_in_order(dirty, redact, zone, workers)
    with (contextlib.closing(dirty), contextlib.closing(prepared),
          store.staged_text_index(paging_out=to_read >= PAGE_OUT_BYTES)):
        done, group = 0, dirty[0] if len(dirty) else None
        while group is not None:
            # A batch's first session is read before its transaction begins, so that reading a large
            # session never holds the write lock; small ones join the batch while it is young.
            began, session = time.perf_counter(), next(prepared)
            superseded: list[Path] = []
            settled: list[Path] = []  # the SessionEnd marks of the batch's sessions
            with store.transaction():
                terms = TermStats(store.conn)
                while True:
                    superseded += _store_session(store, terms, group, session, paths, report)
                    if group.session_id in marks:
                        settled.append(marks[group.session_id])
                    done += 1
                    if progress is not None:
                        progress(done, len(dirty), group.session_id)
                    group = dirty[done] if done < len(dirty) else None
                    if (group is None or time.perf_counter() - began >= _BATCH_SECONDS
                            or sum(f.size for f in group.files) > _BATCH_MAX_SESSION_BYTES):
                        break
                    session = next(prepared)
                terms.flush()
            for path in superseded:
                path.unlink(missing_ok=True)
            for mark in settled:
                clear_mark(mark)
    report.seconds = time.perf_counter() - started
    with store.transaction():
        store.set_meta("last_ingest_at", now().isoformat(timespec="seconds"))
        store.set_meta("last_ingest_report", report.to_json())
        if only is None:  # every session was judged by these rules
            store.set_meta("substance_rules", SUBSTANCE_RULES)
            store.set_meta("handoff_rules", HANDOFF_RULES)
    if run is not None:
        # What the ingest did not draft again (a run folded away, a transcript that reads as empty now, an
        # ingest of `only` some sessions) is redacted where it lies.
        reredact.redact_stored(store, sorted(reredact.pending(store)), paths.handoffs_dir, paths.archive_dir,
                               redactor, run, progress)
        run.redrafted -= run.in_place - in_place_before
        reredact.finish(store, run, started)
    return report


def _queue(store: Store, paths: IngestPaths, enabled: list[Source], redactor: Redactor, progress: Progress | None,
           only: set[str] | None, force: frozenset[str], marks: dict[str, Path], run: reredact.ReRedaction | None,
           report: IngestReport) -> tuple[SessionSpool, int, int]:
    """The sessions to read, oldest first, spooled to a file; the bytes of their files; and the re-redaction's
    in-place count before them.
    The lists of every file and state seen are made in a child process (`_plan`): this one never holds them."""
    force = force | frozenset(marks) | _judged_by_older_rules(store)
    # A deterministic handoff is drafted again from its transcript; any other stored text is redacted as it lies.
    queued = reredact.pending(store) if run is not None else set()
    redraftable = queued & set(store.handoff_ids(EXTRACTOR_NAME)) if queued else set()
    spool = SessionSpool(paths.projects)
    plan = apart(_plan, store.path, enabled, only, force, set(marks), redraftable, store.forgotten(), spool)
    spool.spans = plan.spans
    report.files_seen, report.files_changed = plan.files_seen, plan.files_changed
    if marks:
        expire_marks(marks, plan.marked)
    in_place_before = 0
    if run is not None:
        run.redrafted += len(plan.redrafted)
        reredact.redact_stored(store, sorted(queued - plan.redrafted), paths.handoffs_dir, paths.archive_dir,
                               redactor, run, progress)
        in_place_before = run.in_place
    if plan.kept_out:
        _keep_out(store, plan.kept_out, paths)
    return spool, plan.to_read, in_place_before


@dataclass
class _Plan:
    files_seen: int
    files_changed: int
    marked: set[str]  # the sessions with a SessionEnd mark that were found
    redrafted: set[str]  # the sessions queued for re-redaction that are drafted again
    kept_out: list[SessionFiles]  # forgotten sessions with new or changed files
    spans: array[int]  # the spool's records, in reading order
    to_read: int  # the bytes of the spooled sessions' files


def _plan(db: Path, enabled: list[Source], only: set[str] | None, force: frozenset[str],
          marks: set[str], redraftable: set[str], forgotten: set[str], spool: SessionSpool) -> _Plan:
    """Scan the sources, group their files into sessions and spool those to read (in `_queue`'s child process)."""
    files = scan_sources(enabled)
    reader = Store(db, read_only=True)
    changed, parents, linked_runs = _compared(files, reader.source_states())
    reader.close()
    # A run of another agent's CLI linked to the Claude Code session that started it (core/ingest/agent_runs.py)
    # stays with it while unchanged: recorded under the parent's id.
    files = [dataclasses.replace(f, role=AGENT_RUN) if f.location in linked_runs else f for f in files]

    def parent_of(source: SourceFile) -> str | None:
        return parents.get(source.location) or file_session(source)

    files_seen, files_changed = len(files), len(changed)
    if 2 * len(changed) < len(files) and not may_link(files, changed):
        # Only the sessions that may be read are grouped: the plan of an ingest after the first holds what changed,
        # not every session of the disk (a run of another agent to link may join any session: then all are).
        of_changed = {f.location: session_key(f, parent_of) for f in files if f.location in changed}
        wanted = force | marks | redraftable | set(of_changed.values())
        kept = [(f, sid) for f in files if (sid := of_changed.get(f.location) or session_key(f, parent_of)) in wanted]
        files, sessions = [f for f, _ in kept], [sid for _, sid in kept]
    else:
        sessions = [session_key(f, parent_of) for f in files]
    groups = Groups(files, sessions)
    del files, sessions  # each file is held by its group
    linked = link_runs(groups, [s.path for s in enabled if s.kind == CLAUDE_CODE], changed)
    redrafted = {sid for sid in redraftable if sid in groups}
    marked = {sid for sid in marks if sid in groups}
    force |= frozenset(linked.values()) | redrafted
    parents.clear()
    kept_out: list[SessionFiles] = []
    keys: list[tuple[str, str]] = []  # the place in the queue of each session spooled, in the order spooled
    to_read = 0
    while groups:
        # Each group let go of as it is spooled: the queue is sorted as numbers of records in the spool, not as the
        # sessions themselves, so the keys never sit beside every group.
        _, group = groups.popitem()
        files = group.files
        dirty = (only is None or group.session_id in only) and (
            group.session_id in force or any(f.location in changed for f in files))
        if not dirty:
            continue
        if group.session_id in forgotten:
            kept_out.append(group)
            continue
        keys.append((_first_time(group), group.session_id))
        to_read += sum(f.size for f in files)
        spool.add(group)
    spans = spool.ordered(sorted(range(len(keys)), key=keys.__getitem__))
    return _Plan(files_seen, files_changed, marked, redrafted, kept_out, spans, to_read)


def _compared(files: list[SourceFile], states: Iterator[tuple[str, SourceState]],
              ) -> tuple[ChangedFiles, dict[str, str], set[str]]:
    """The paths of `files` new or changed since their recorded state; the session recorded for each unchanged
    file; the unchanged main files recorded as agent runs. The states, in path order, are read alongside."""
    changed: set[str] = set()
    parents: dict[str, str] = {}
    linked_runs: set[str] = set()
    path, state = next(states, ("", None))
    for source in sorted(files, key=lambda f: f.location):
        while state is not None and path < source.location:
            path, state = next(states, ("", None))
        if state is None or path != source.location or (state.size, state.mtime_ns) != (source.size, source.mtime_ns):
            changed.add(source.location)
            continue
        if state.session_id:
            parents[source.location] = state.session_id
        if source.role == "main" and state.kind == AGENT_RUN:
            linked_runs.add(source.location)
    return ChangedFiles(files, changed), parents, linked_runs


def _keep_out(store: Store, groups: list[SessionFiles], paths: IngestPaths) -> None:
    """Forgotten sessions (core/ingest/forget.py) stay out: their files are recorded unread, and a copy a spoke
    pushed again is deleted (as `eywa forget` deleted the first)."""
    with store.transaction():
        for group in groups:
            for source in group.files:
                copy = paths.spoke_copy(source.location)
                if copy is not None:
                    copy.unlink(missing_ok=True)
                else:
                    store.put_source(source.location, source.size, source.mtime_ns, group.session_id, "forgotten", 0)


def _judged_by_older_rules(store: Store) -> frozenset[str]:
    """The deterministic handoffs drafted by another HANDOFF_RULES than this eywa's (all of them), or
    found of no substance by another SUBSTANCE_RULES: extracted again, so an upgrade gives every user
    the better handoffs (and finds what the old rules hid) without `--force`. Claude's handoffs stay."""
    if not store.has_handoffs():
        # An empty index is drafted by these rules from its first session on: a first ingest killed halfway
        # must not redraft, on resuming, what it already drafted (keywords would see later sessions' terms).
        with store.transaction():
            store.set_meta("substance_rules", SUBSTANCE_RULES)
            store.set_meta("handoff_rules", HANDOFF_RULES)
        return frozenset()
    if store.get_meta("handoff_rules") != HANDOFF_RULES:
        return frozenset(store.handoff_ids(EXTRACTOR_NAME))
    if store.get_meta("substance_rules") != SUBSTANCE_RULES:
        return frozenset(store.handoff_ids(EXTRACTOR_NAME, without_substance=True))
    return frozenset()


def _store_session(store: Store, terms: TermStats, group: SessionFiles, prepared: PreparedSession,
                   paths: IngestPaths, report: IngestReport) -> list[Path]:
    """Write a session's files and rows, inside the caller's transaction; the files it supersedes, to
    delete once that transaction is committed."""
    stats = prepared.stats
    report.bytes_read += sum(s.bytes_read for s in stats.values())
    report.bad_lines += prepared.bad_lines

    def record_sources(kind_of_main: str) -> None:
        for source in group.files:
            file_stats = stats.get(source.location)
            if file_stats is None:  # gone between the scan and the read: unrecorded, so seen anew if it returns
                continue
            kind = kind_of_main if source.role == "main" else source.role
            unknown = {("type", name): n for name, n in file_stats.unknown_types.items()}
            unknown.update({("field", name): n for name, n in file_stats.unknown_fields.items()})
            store.put_source(source.location, source.size, source.mtime_ns, group.session_id, kind,
                             file_stats.bad_lines, version=file_stats.version, unknown=unknown)

    if prepared.handoff is None:  # empty, or not a Claude Code transcript
        report.sessions_skipped += 1
        record_sources("skipped")
        return []
    superseded = _fold_runs(store, terms, group, paths)
    terms.record(prepared.session_id, prepared.terms)
    handoff = with_keywords(prepared.handoff, weights=prepared.weights, df=terms.df,
                            total_docs=terms.document_count(), candidates=prepared.candidates)
    relpath = handoff_relpath(handoff)
    old = store.handoff_path(prepared.session_id)
    # Files first, row last: a crash in between leaves files that the next run rewrites identically.
    atomic_write(paths.archive_dir / relpath, prepared.markdown)
    atomic_write(paths.handoffs_dir / relpath, handoff.to_markdown())
    store.put_handoff(handoff, path=relpath.as_posix(), archive_path=relpath.as_posix(),
                      transcript=prepared.markdown, columns=prepared.columns, ended_at=prepared.ended_at,
                      extractor=EXTRACTOR_NAME)
    reredact.done(store, prepared.session_id)
    record_sources("orphan" if prepared.orphan else "main")
    report.sessions_updated += 1
    report.subagent_runs += prepared.subagent_runs
    report.orphans += int(prepared.orphan)
    report.add_updated(prepared.session_id)
    if old is not None and old != relpath.as_posix():
        # The session's day moved (it went on past midnight): the old files are superseded.
        superseded += [paths.handoffs_dir / old, paths.archive_dir / old]
    return superseded


def _fold_runs(store: Store, terms: TermStats, group: SessionFiles, paths: IngestPaths) -> list[Path]:
    """The handoffs that runs folded into this session had as sessions of their own, deleted (in the
    transaction that stores the session, so that no run is ever counted twice or lost); their files."""
    gone: list[Path] = []
    for source in group.subagents:
        if source.role != AGENT_RUN or (own := file_session(source)) is None:
            continue
        relpath = store.handoff_path(own)
        if relpath is not None:
            store.delete_handoff(own)
            terms.forget(own)
            gone += [paths.handoffs_dir / relpath, paths.archive_dir / relpath]
    return gone
