"""The one core API that every front end calls: CLI, Telegram bot, MCP server, hooks."""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import logging
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from eywa.core.config.settings import Settings
from eywa.core.errors import AmbiguousId, NotFound, StoreError
from eywa.core.index import readonly
from eywa.core.index.storage_faults import storage_faults
from eywa.core.index.store import Store
from eywa.core.ingest.run import IngestPaths, IngestReport, Progress, ingest
from eywa.core.retrieval.recall import (
    MAX_QUERY_CHARS,
    HandoffRecord,
    RecallDefaults,
    Results,
    format_handoffs,
    query_handoffs,
    record_from_row,
)

if TYPE_CHECKING:  # imported for real only when an LLM pass runs, or a Claude Code session is started
    from eywa.core.extract.llm.backend import Choice
    from eywa.core.extract.llm.run import LLMPass, LLMReport
    from eywa.core.launcher import BackgroundSession

log = logging.getLogger("eywa")

_ID_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z-]{0,63}$")
__all__ = ["MAX_QUERY_CHARS", "Digest", "Eywa", "HandoffRecord", "Results", "Stats",
           "format_handoffs"]


@dataclass
class Stats:
    handoffs: int
    substantial: int
    imported: int
    sources: int
    sessions_skipped: int  # sessions whose files gave no handoff (empty, or not transcripts)
    bad_lines: int
    first_date: str | None
    last_date: str | None
    last_ingest_at: str | None
    last_ingest: dict = field(default_factory=dict)
    projects: list[tuple[str, int]] = field(default_factory=list)
    data_dir: str = ""
    index_bytes: int = 0
    extractors: dict[str, int] = field(default_factory=dict)  # extractor name -> handoffs it wrote
    agents: dict[str, int] = field(default_factory=dict)  # agent (core/sources) -> its sessions with work
    agent_bytes: dict[str, int] = field(default_factory=dict)  # agent -> bytes of its transcripts read
    llm: dict = field(default_factory=dict)  # LLM extraction: states, requests, tokens, cost (llm/stats.py)
    drift: dict[str, dict[str, int]] = field(default_factory=dict)  # CLI version -> unknown types and fields
    redaction: dict = field(default_factory=dict)  # rules, sessions still to re-redact, the last re-redaction


def drift_lines(drift: dict[str, dict[str, int]], limit: int = 6, clean_limit: int | None = None) -> list[str]:
    """One line per CLI version (Claude Code's bare, another agent's after its name: `codex <version>`), Claude
    Code's first, each agent's newest first: the files read and what in them the reader did not know. Versions
    with nothing unknown past the newest `clean_limit` are summed in one last line."""
    lines, clean = [], []
    for version in sorted(drift, key=_version_key):
        counts = dict(drift[version])
        files = counts.pop("files", 0)
        unknown = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        if not unknown:
            clean.append(version)
            if clean_limit is not None and len(clean) > clean_limit:
                continue
        listed = ", ".join(f"{name} {n}" for name, n in unknown[:limit]) + \
            (f", {len(unknown) - limit} more" if len(unknown) > limit else "")
        lines.append(f"{version}: {files} file{'s' if files != 1 else ''}, "
                     + (f"unknown: {listed}" if unknown else "nothing unknown"))
    if clean_limit is not None and len(clean) > clean_limit:
        more = len(clean) - clean_limit
        lines.append(f"{more} {'older ' if clean_limit else ''}version{'s' if more != 1 else ''}: nothing unknown")
    return lines


def _version_key(version: str) -> tuple:
    agent, _, number = ("", "", version) if version[:1].isdigit() or version == "no version" else version.partition(" ")
    return agent, tuple(-int(p) if p.isdigit() else 1 for p in number.replace("-", ".").split("."))


@dataclass
class Digest:
    since: dt.datetime
    handoffs: list[HandoffRecord]
    open_threads: list[tuple[HandoffRecord, list[str]]]


@functools.cache
def _note_days_back(days_back: int | None) -> None:
    """Once a process: a config's `retrieval.days_back` is a filter now, no longer a decay."""
    if days_back is not None:
        log.info("retrieval.days_back is %d: every query searches the sessions of the last %d days alone; remove it "
                 "from the config to search sessions of any age", days_back, days_back)


@dataclass
class ContinuePlan:
    """`eywa continue`: the prompt, the session's folder (None: unknown or gone), the argv of `claude` there,
    and why it cannot start (None: it can)."""

    prompt: str
    folder: Path | None
    argv: list[str] | None
    problem: str | None = None


_Method = TypeVar("_Method", bound=Callable[..., Any])


def _faults(method: _Method) -> _Method:
    """The method run inside its instance's `faults()`."""
    @functools.wraps(method)
    def inside(self: Eywa, *args: Any, **kwargs: Any) -> Any:
        with self.faults():
            return method(self, *args, **kwargs)
    return inside  # type: ignore[return-value]


class Eywa:
    """Opens the store lazily; one instance per thread (SQLite connections are not shared)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        _note_days_back(settings.retrieval.days_back)
        self._store: Store | None = None
        self.last_llm_report: LLMReport | None = None  # this instance's last LLM pass, if any
        self.llm_options: dict = {}  # passed to every LLMPass (tests give `sleep` here)
        # (limit, min_sessions) -> (index state, terms)
        self._vocabulary: dict[tuple[int, int], tuple[tuple[int, int], list[str]]] = {}
        self._llm_choice: tuple[float, Choice] | None = None  # (when, what `llm.backend` chose)

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = Store(self.settings.db_path)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def _reader(self) -> Store:
        """The store, for reading: opened read-only where the data directory (or the index) cannot be written,
        so that reading works on a read-only mount; a writer then fails with the directory's one line."""
        if self._store is None:
            path = self.settings.db_path
            if not path.exists():
                raise StoreError(f"no index in {self.settings.data_dir}: run `eywa ingest` first")
            writable = os.access(path.parent, os.W_OK) and os.access(path, os.W_OK)
            self._store = Store(path) if writable else Store(path, read_only=True)
        return self._store

    def _record(self, row: readonly.HandoffRow) -> HandoffRecord:
        return record_from_row(row, self.settings.handoffs_dir)

    def faults(self) -> contextlib.AbstractContextManager[None]:
        """Inside it, what SQLite or the data directory raise is a StoreError that says what to do (every
        method of the API below runs inside it; a front end wraps what else it does with the index)."""
        return storage_faults(self.settings.data_dir)

    # -- the API ------------------------------------------------------------------------------------
    @_faults
    def ingest(self, progress: Progress | None = None, *, only: set[str] | None = None,
               force: frozenset[str] = frozenset(), llm: bool = True) -> IngestReport:
        """Ingest new and changed transcripts; then, with an LLM backend (`llm_choice`), the LLM pass over
        settled sessions (`llm=False` skips it). An LLM pass that must stop never fails the ingest: its
        report, with the reason, is `last_llm_report`."""
        from eywa.core.ingest.pending import read_marks
        from eywa.core.redaction.scrubber import Redactor

        redactor = Redactor(self.settings.redaction.extra_patterns)
        paths = self.ingest_paths()
        ended = set(read_marks(self.settings.pending_dir))  # SessionEnd marks: those sessions have settled
        report = ingest(self.store, paths, redactor=redactor, zone=self.settings.zone,
                        progress=progress, only=only, force=force)
        if llm and self.llm_choice().active:
            self.last_llm_report = self.llm_pass().after_ingest(report.updated, ended=ended, only=only)
        return report

    def llm_choice(self) -> Choice:
        """Which LLM backend extracts, and why (core/extract/llm/backend.py); asked again after a minute, so a
        long-running bot sees a sign-in or a new key. A change is logged (the bot logs the first at start)."""
        from eywa.core.extract.llm.backend import choose_backend

        if self._llm_choice is None or time.monotonic() - self._llm_choice[0] > 60:
            choice = choose_backend(self.settings)
            if self._llm_choice is not None and self._llm_choice[1] != choice:
                log.info("LLM extraction is now %s (%s)", choice.backend, choice.reason)
            self._llm_choice = (time.monotonic(), choice)
        return self._llm_choice[1]
    def ingest_paths(self) -> IngestPaths:
        """This machine's transcripts and every spoke's folder (core/machines/spokes.py), as ingest reads them."""
        from eywa.core.machines.spokes import spoke_projects, spoke_sources
        from eywa.core.sources.projects import ProjectNames

        machine, aliases = self.settings.machine_name, self.settings.projects.aliases
        spokes = spoke_sources(self.settings.spokes_dir)
        return IngestPaths(
            (*(source._replace(machine=machine) for source in self.settings.all_sources), *spokes),
            self.settings.handoffs_dir, self.settings.archive_dir, self.settings.pending_dir,
            projects={machine: ProjectNames(aliases), **spoke_projects(self.settings.spokes_dir, spokes, aliases)},
            spokes_dir=self.settings.spokes_dir)

    def llm_pass(self) -> LLMPass:
        """The LLM extraction pass over this index: `eywa extract --all` plans and runs it."""
        from eywa.core.extract.llm.run import LLMPass

        return LLMPass(self.store, self.settings, choice=self.llm_choice(), **self.llm_options)

    @_faults
    def extract(self, session_id: str) -> HandoffRecord:
        """(Re-)extract one session from its transcript now, whether or not it changed; its handoff."""
        from eywa.core.sources.discovery import file_session, scan_sources

        session_id = session_id.strip()
        if not _ID_RE.match(session_id):
            raise NotFound(f"'{session_id[:80]}' is not a session id (letters, digits and '-' only)")
        sessions = {file_session(f) for f in scan_sources(self.ingest_paths().sources) if f.role == "main"}
        matches = sorted(s for s in sessions if s and s.startswith(session_id))
        if not matches:
            folders = ", ".join(str(s.path) for s in self.ingest_paths().sources if s.enabled)
            raise NotFound(f"no transcript of session '{session_id}' under {folders}")
        if len(matches) > 1:
            listed = ", ".join(matches[:10])
            raise NotFound(f"'{session_id}' matches {len(matches)} transcripts ({listed}); give more characters")
        report = self.ingest(only={matches[0]}, force=frozenset({matches[0]}), llm=False)
        if not report.updated:
            raise NotFound(f"session {matches[0]} holds no Claude Code conversation to extract")
        if self.llm_choice().active:
            # Settled or not (the user asked); unchanged content is not sent again. The outcome, a fallback
            # to the deterministic handoff included, is in `last_llm_report`.
            self.last_llm_report = self.llm_pass().extract_one(matches[0])
        return self.show(matches[0])

    @_faults
    def recall(self, query: str | None = None, *, days_back: int | None = None, max_results: int | None = None,
               project: str | None = None, mode: str | None = None, offset: int = 0,
               agent: str | None = None, machine: str | None = None, asked_on: dt.date | None = None) -> Results:
        """The best handoffs for `query` (core/retrieval/recall.py: time words in it keep those days);
        `days_back` keeps the last N days (default `retrieval.days_back`, none: any day), `project` projects
        whose name contains it, `agent` the sessions of that agent, `machine` those of that machine
        (core/machines/spokes.py). `asked_on`: the day the query was first asked, for its next pages (default
        today)."""
        retrieval = self.settings.retrieval
        defaults = RecallDefaults(self.settings.handoffs_dir, retrieval.mode, retrieval.days_back,
                                  retrieval.max_handoffs, self.settings.zone)
        return query_handoffs(self._reader().conn, query, defaults, days_back=days_back, max_results=max_results,
                              project=project, mode=mode, offset=offset, agent=agent, machine=machine,
                              asked_on=asked_on)

    @_faults
    def last(self, count: int = 5, *, project: str | None = None, agent: str | None = None,
             machine: str | None = None) -> list[HandoffRecord]:
        """The newest substantial handoffs, newest first."""
        rows = readonly.latest_handoffs(self._reader().conn, count, project=project, agent=agent, machine=machine)
        return [self._record(row) for row in rows]

    @_faults
    def show(self, id_or_prefix: str) -> HandoffRecord:
        """One handoff by full id, short id or any unique prefix of either."""
        prefix = id_or_prefix.strip()
        if not _ID_RE.match(prefix):
            raise NotFound(f"'{prefix[:80]}' is not a session id (letters, digits and '-' only)")
        conn = self._reader().conn
        exact = readonly.handoff(conn, prefix)
        if exact:
            return self._record(exact)
        rows = readonly.handoffs_by_prefix(conn, prefix, 11)
        if not rows:
            raise NotFound(f"no handoff with id '{prefix}': `eywa last` lists recent ones")
        if len(rows) > 1:
            raise AmbiguousId(prefix, [self._record(row) for row in rows[:10]])
        return self._record(rows[0])

    @_faults
    def session_cwd(self, record: HandoffRecord) -> str | None:
        """The working directory the session began in, as its archived rendering records it (None for an
        imported handoff, or when the archive file is gone)."""
        relpath = readonly.archive_path(self._reader().conn, record.session_id)
        if not relpath:
            return None
        try:
            with open(self.settings.archive_dir / relpath, encoding="utf-8") as archive:
                head = archive.read(4096)  # the facts come first
        except OSError:
            return None
        from eywa.core.archive.renderer import recorded_cwd

        return recorded_cwd(head)

    def start_session(self, id_or_prefix: str) -> BackgroundSession:
        """A background Claude Code session (`claude --bg`) in the handoff's working directory, given its
        Continue prompt; raises `launcher.LaunchError` with the reason it cannot."""
        from eywa.core.handoffs.continue_prompt import continue_prompt
        from eywa.core.launcher import start_background, working_directory

        record = self.show(id_or_prefix)
        folder = working_directory(self.session_cwd(record), record.short_id)
        claude = self.settings.claude_code
        return start_background(claude.command, folder, continue_prompt(record), claude.permission_mode)

    def background_session(self, short_id: str) -> BackgroundSession | None:
        """A background session as `claude agents` reports it now (None: unknown). Touches no index, so
        any thread may call it."""
        from eywa.core.launcher import list_background

        return next((s for s in list_background(self.settings.claude_code.command) if s.id == short_id), None)

    def continue_plan(self, id_or_prefix: str) -> ContinuePlan:
        """The handoff's Continue prompt, and where and how to run an interactive `claude` on it (`eywa
        continue`), or why it cannot run: the prompt is there either way, to paste by hand."""
        from eywa.core.handoffs.continue_prompt import continue_prompt
        from eywa.core.launcher import LaunchError, interactive_command, working_directory

        record = self.show(id_or_prefix)
        prompt = continue_prompt(record)
        folder = None
        try:
            folder = working_directory(self.session_cwd(record), record.short_id)
            return ContinuePlan(prompt, folder, interactive_command(self.settings.claude_code.command, prompt))
        except LaunchError as exc:
            return ContinuePlan(prompt, folder, None, str(exc))

    @_faults
    def stats(self) -> Stats:
        from eywa.core.extract.llm.stats import llm_stats

        conn = self._reader().conn
        report = self.store.get_meta("last_ingest_report")
        index_bytes = sum(p.stat().st_size for p in self.settings.db_path.parent.glob(self.settings.db_path.name + "*"))
        return Stats(
            **readonly.counts(conn),  # type: ignore[arg-type]
            last_ingest_at=self.store.get_meta("last_ingest_at"),
            last_ingest=orjson.loads(report) if report else {},
            projects=list(readonly.project_counts(conn, 10).items()),
            data_dir=str(self.settings.data_dir),
            index_bytes=index_bytes,
            extractors=readonly.extractor_counts(conn),
            llm=llm_stats(self.store, self.settings, self.llm_choice()),
            drift=self._reader().drift(),
            agents=readonly.agent_counts(conn),
            agent_bytes=readonly.agent_bytes(conn),
            redaction=self._redaction_stats(),
        )

    def _redaction_stats(self) -> dict:
        from eywa.core.ingest import reredact

        last = self.store.get_meta(reredact.LAST_META)
        return {"rules": self.store.get_meta(reredact.RULES_META) or "1", "pending": len(reredact.pending(self.store)),
                "last": orjson.loads(last) if last else None}

    @_faults
    def vocabulary(self, limit: int = 2000, *, min_sessions: int = 2) -> list[str]:
        """The index's own words, for biasing speech recognition: project names (most used first), then
        the single words of the sessions' routing terms (and of keywords, for an index rebuilt from files)
        found in at least two sessions but in at most a quarter of them, most frequent first: the words a
        speech model must hear right and may not know ("gitleaks", "jsonl"). Which of them it already
        knows is the speech side's business (bot/speech/transcribe.py). `min_sessions` 1 adds the words of one
        session alone (what a spoken query is matched against, bot/speech/readings.py)."""
        conn = self._reader().conn
        # Read once per change of the index (a voice note asks for it each time).
        state = readonly.index_version(conn)
        cached = self._vocabulary.get((limit, min_sessions))
        if cached is not None and cached[0] == state:
            return list(cached[1])
        total = readonly.handoff_count(conn, substantial=True)
        projects = list(readonly.project_counts(conn))
        words = readonly.frequent_words(conn, min_sessions, max(2, total // 4))
        terms = list(dict.fromkeys(w for w in projects + words if len(w) >= 3 and not w.isdigit()))
        self._vocabulary[(limit, min_sessions)] = (state, terms[:max(0, limit)])
        return terms[:max(0, limit)]

    @_faults
    def digest(self, since: dt.datetime) -> Digest:
        """Handoffs of sessions that ended since `since`, and every open thread of those still open."""
        conn = self._reader().conn
        day = since.astimezone(self.settings.zone).date().isoformat()
        handoffs = [self._record(row) for row in readonly.handoffs_from(conn, day)
                    if not row.ended_at or dt.datetime.fromisoformat(row.ended_at) >= since]
        threads = [(h, h.open_threads) for h in handoffs if h.open_threads]
        return Digest(since=since, handoffs=handoffs, open_threads=threads)

    @_faults
    def to_forget(self, ids: list[str] = (), *, project: str | None = None,  # type: ignore[assignment]
                  before: dt.date | None = None) -> list[HandoffRecord]:
        """The handoffs `forget` would remove: those of `ids` (ids or unique prefixes, as `show` takes them),
        or every one of project `project` (its exact name, any case) and dated before `before`."""
        if ids:
            return list({record.session_id: record for record in map(self.show, ids)}.values())
        if project is None and before is None:
            return []
        rows = readonly.handoffs_where(self._reader().conn, project=project,
                                       before=before.isoformat() if before else None)
        return [self._record(row) for row in rows]

    @_faults
    def forget(self, session_ids: list[str]) -> int:
        """Forget these sessions (core/ingest/forget.py): how many handoffs went."""
        from eywa.core.ingest.forget import forget

        return forget(self.store, session_ids, self.ingest_paths())

    @_faults
    def unforget(self, id_or_prefix: str) -> str:
        """Lift a forgotten session's tombstone; its full id. The next ingest reads it again, if its transcript
        is still there."""
        from eywa.core.ingest.forget import unforget

        try:
            found = unforget(self.store, id_or_prefix.strip())
        except ValueError as exc:
            raise NotFound(str(exc)) from None
        if found is None:
            raise NotFound(f"no forgotten session has the id '{id_or_prefix[:80]}'")
        return found

    @_faults
    def reindex(self, import_dir: Path | None = None, *, build_text_index: bool = True) -> tuple[int, int, list[str]]:
        """(handoffs indexed, files imported, problems); `build_text_index` False leaves the full-text index to
        `text_index.ensure_at` (or the next store opened), as `eywa reindex` does to build it in a lean process."""
        from eywa.core.ingest.reindex import reindex

        return reindex(self.store, self.settings.handoffs_dir, self.settings.archive_dir, import_dir,
                       build_text_index=build_text_index)
