"""The one core API that every front end calls: CLI, Telegram bot, MCP server, hooks."""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import re
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from eywa.core.config.clock import now
from eywa.core.config.settings import Settings
from eywa.core.errors import AmbiguousId, NotFound, StoreError
from eywa.core.index.store import Store
from eywa.core.ingest.run import IngestPaths, IngestReport, Progress, ingest
from eywa.core.retrieval.recall import COLUMNS as _COLUMNS
from eywa.core.retrieval.recall import MAX_QUERY_CHARS, HandoffRecord, format_handoffs, ranked_records, record_from_row
from eywa.core.retrieval.scorer import index_version
from eywa.core.storage_faults import describe

if TYPE_CHECKING:  # imported for real only when an LLM pass runs, or a Claude Code session is started
    from eywa.core.claude_sessions import BackgroundSession
    from eywa.core.extract.llm.backend import Choice
    from eywa.core.extract.llm.run import LLMPass, LLMReport

log = logging.getLogger("eywa")

_ID_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z-]{0,63}$")
__all__ = ["MAX_QUERY_CHARS", "Digest", "Eywa", "HandoffRecord", "Stats",
           "format_handoffs"]


@dataclass
class Stats:
    handoffs: int
    substantial: int
    imported: int
    sources: int
    sources_skipped: int
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
    llm: dict = field(default_factory=dict)  # LLM extraction: states, requests, tokens, cost (core/extract/llm/run.py)
    drift: dict[str, dict[str, int]] = field(default_factory=dict)  # CLI version -> unknown types and fields


def drift_lines(drift: dict[str, dict[str, int]], limit: int = 6, clean_limit: int | None = None) -> list[str]:
    """One line per Claude Code version, newest first: the files read and what in them the reader did not
    know. Versions with nothing unknown past the newest `clean_limit` are summed in one last line."""
    lines, clean = [], []
    for version in sorted(drift, key=_version_key, reverse=True):
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
        lines.append(f"{len(clean) - clean_limit} older versions: nothing unknown")
    return lines


def _version_key(version: str) -> tuple:
    return tuple(int(p) if p.isdigit() else -1 for p in version.replace("-", ".").split("."))


@dataclass
class Digest:
    since: dt.datetime
    handoffs: list[HandoffRecord]
    open_threads: list[tuple[HandoffRecord, list[str]]]


class Eywa:
    """Opens the store lazily; one instance per thread (SQLite connections are not shared)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
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
        if self._store is None and not self.settings.db_path.exists():
            raise StoreError(f"no index in {self.settings.data_dir}: run `eywa ingest` first")
        return self.store

    def _record(self, row: tuple) -> HandoffRecord:
        return record_from_row(row, self.settings.handoffs_dir)

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """A full disk or an unwritable data directory met while writing, as a StoreError that says so."""
        try:
            yield
        except (sqlite3.Error, OSError) as exc:
            message = describe(exc, self.settings.data_dir)
            if message is None:
                raise
            raise StoreError(message) from exc

    # -- the API ------------------------------------------------------------------------------------
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
        with self._writing():
            report = ingest(self.store, paths, redact=redactor.redact, zone=self.settings.zone,
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
            projects={machine: ProjectNames(aliases), **spoke_projects(self.settings.spokes_dir, spokes, aliases)})

    def llm_pass(self) -> LLMPass:
        """The LLM extraction pass over this index: `eywa extract --all` plans and runs it."""
        from eywa.core.extract.llm.run import LLMPass

        return LLMPass(self.store, self.settings, choice=self.llm_choice(), **self.llm_options)

    def extract(self, session_id: str) -> HandoffRecord:
        """(Re-)extract one session from its transcript now, whether or not it changed; its handoff."""
        from eywa.core.sources.claude_code.discovery import file_session, scan_sources

        session_id = session_id.strip()
        if not _ID_RE.match(session_id):
            raise NotFound(f"'{session_id[:80]}' is not a session id (letters, digits and '-' only)")
        sessions = {file_session(f) for f in scan_sources(self.ingest_paths().sources) if f.kind == "main"}
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

    def recall(self, query: str | None = None, *, days_back: int | None = None, max_results: int | None = None,
               project: str | None = None, mode: str | None = None, offset: int = 0,
               agent: str | None = None, machine: str | None = None) -> list[HandoffRecord]:
        """The best handoffs for `query`; `project` keeps projects whose name contains it, `agent` the
        sessions of that agent, `machine` those of that machine (core/machines/spokes.py)."""
        return ranked_records(
            self._reader().conn, query, handoffs_dir=self.settings.handoffs_dir,
            mode=mode or self.settings.retrieval.mode,
            today=now().astimezone(self.settings.zone).date(),
            days_back=days_back or self.settings.retrieval.days_back,
            max_results=max_results or self.settings.retrieval.max_handoffs,
            project=project, offset=offset, agent=agent, machine=machine,
        )

    def last(self, count: int = 5, *, project: str | None = None, agent: str | None = None,
             machine: str | None = None) -> list[HandoffRecord]:
        """The newest substantial handoffs, newest first."""
        sql = f"SELECT {_COLUMNS} FROM handoffs WHERE substance > 0"
        params: list[object] = []
        if project:
            sql += " AND session_uuid IN (SELECT session_uuid FROM project_index WHERE project LIKE ?)"
            params.append(f"%{project.lower()}%")
        if agent:
            sql += " AND agent = ?"
            params.append(agent.strip().lower())
        if machine:
            sql += " AND machine = ?"
            params.append(machine.strip().lower())
        sql += " ORDER BY date DESC, ended_at DESC, session_uuid LIMIT ?"
        params.append(max(1, count))
        return [self._record(row) for row in self._reader().conn.execute(sql, params)]

    def show(self, id_or_prefix: str) -> HandoffRecord:
        """One handoff by full id, short id or any unique prefix of either."""
        prefix = id_or_prefix.strip()
        if not _ID_RE.match(prefix):
            raise NotFound(f"'{prefix[:80]}' is not a session id (letters, digits and '-' only)")
        conn = self._reader().conn
        exact = conn.execute(f"SELECT {_COLUMNS} FROM handoffs WHERE session_uuid = ?", (prefix,)).fetchone()
        if exact:
            return self._record(exact)
        pattern = prefix.replace("%", "").replace("_", "") + "%"
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM handoffs WHERE session_uuid LIKE ? OR short_id LIKE ?"
            " ORDER BY date DESC, session_uuid LIMIT 11",
            (pattern, pattern),
        ).fetchall()
        if not rows:
            raise NotFound(f"no handoff with id '{prefix}': `eywa last` lists recent ones")
        if len(rows) > 1:
            raise AmbiguousId(prefix, [self._record(row) for row in rows[:10]])
        return self._record(rows[0])

    def session_cwd(self, record: HandoffRecord) -> str | None:
        """The working directory the session began in, as its archived rendering records it (None for an
        imported handoff, or when the archive file is gone)."""
        row = self._reader().conn.execute(
            "SELECT archive_path FROM handoffs WHERE session_uuid = ?", (record.session_uuid,)).fetchone()
        if not row or not row[0]:
            return None
        try:
            with open(self.settings.archive_dir / row[0], encoding="utf-8") as archive:
                head = archive.read(4096)  # the facts come first
        except OSError:
            return None
        from eywa.core.archive.renderer import recorded_cwd

        return recorded_cwd(head)

    def start_session(self, id_or_prefix: str) -> BackgroundSession:
        """A background Claude Code session (`claude --bg`) in the handoff's working directory, given its
        Continue prompt; raises `claude_sessions.LaunchError` with the reason it cannot."""
        from eywa.core.claude_sessions import start_background, working_directory
        from eywa.core.handoffs.continue_prompt import continue_prompt

        record = self.show(id_or_prefix)
        folder = working_directory(self.session_cwd(record), record.short_id)
        claude = self.settings.claude_code
        return start_background(claude.command, folder, continue_prompt(record), claude.permission_mode)

    def background_session(self, short_id: str) -> BackgroundSession | None:
        """A background session as `claude agents` reports it now (None: unknown). Touches no index, so
        any thread may call it."""
        from eywa.core.claude_sessions import list_background

        return next((s for s in list_background(self.settings.claude_code.command) if s.id == short_id), None)

    def continue_command(self, id_or_prefix: str) -> tuple[Path, list[str]]:
        """Where and how to run an interactive `claude` on the handoff's Continue prompt (`eywa continue`)."""
        from eywa.core.claude_sessions import interactive_command, working_directory
        from eywa.core.handoffs.continue_prompt import continue_prompt

        record = self.show(id_or_prefix)
        folder = working_directory(self.session_cwd(record), record.short_id)
        return folder, interactive_command(self.settings.claude_code.command, continue_prompt(record))

    def stats(self) -> Stats:
        from eywa.core.extract.llm.run import llm_stats

        conn = self._reader().conn
        one = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
        report = self.store.get_meta("last_ingest_report")
        projects = conn.execute(
            "SELECT project, COUNT(*) FROM project_index GROUP BY project ORDER BY COUNT(*) DESC, project LIMIT 10"
        ).fetchall()
        index_bytes = sum(p.stat().st_size for p in self.settings.db_path.parent.glob(self.settings.db_path.name + "*"))
        return Stats(
            handoffs=one("SELECT COUNT(*) FROM handoffs"),
            substantial=one("SELECT COUNT(*) FROM handoffs WHERE substance > 0"),
            imported=one("SELECT COUNT(*) FROM handoffs WHERE origin = 'imported'"),
            sources=one("SELECT COUNT(*) FROM sources"),
            sources_skipped=one("SELECT COUNT(*) FROM sources WHERE kind = 'skipped'"),
            bad_lines=one("SELECT COALESCE(SUM(bad_lines), 0) FROM sources"),
            first_date=one("SELECT MIN(date) FROM handoffs WHERE substance > 0"),
            last_date=one("SELECT MAX(date) FROM handoffs WHERE substance > 0"),
            last_ingest_at=self.store.get_meta("last_ingest_at"),
            last_ingest=orjson.loads(report) if report else {},
            projects=[(p, n) for p, n in projects],
            data_dir=str(self.settings.data_dir),
            index_bytes=index_bytes,
            extractors=dict(conn.execute(
                "SELECT extractor, COUNT(*) FROM handoffs WHERE extractor != '' GROUP BY extractor ORDER BY 2 DESC"
            ).fetchall()),
            llm=llm_stats(self.store, self.settings, self.llm_choice()),
            drift=self._reader().drift(),
            agents=dict(conn.execute(
                "SELECT agent, COUNT(*) FROM handoffs WHERE substance > 0 GROUP BY agent ORDER BY 2 DESC, 1"
            ).fetchall()),
            agent_bytes=dict(conn.execute(
                "SELECT h.agent, SUM(s.size) FROM sources AS s JOIN handoffs AS h ON h.session_uuid = s.session_uuid"
                " GROUP BY h.agent ORDER BY 2 DESC, 1"
            ).fetchall()),
        )

    def vocabulary(self, limit: int = 2000, *, min_sessions: int = 2) -> list[str]:
        """The index's own words, for biasing speech recognition: project names (most used first), then
        the single words of the sessions' routing terms (and of keywords, for an index rebuilt from files)
        found in at least two sessions but in at most a quarter of them, most frequent first: the words a
        speech model must hear right and may not know ("gitleaks", "jsonl"). Which of them it already
        knows is the speech side's business (bot/speech/transcribe.py). `min_sessions` 1 adds the words of one
        session alone (what a spoken query is matched against, bot/speech/readings.py)."""
        conn = self._reader().conn
        # Read once per change of the index (a voice note asks for it each time).
        state = index_version(conn)
        cached = self._vocabulary.get((limit, min_sessions))
        if cached is not None and cached[0] == state:
            return list(cached[1])
        total = conn.execute("SELECT COUNT(*) FROM handoffs WHERE substance > 0").fetchone()[0]
        projects = [p for (p,) in conn.execute(
            "SELECT project FROM project_index GROUP BY project ORDER BY COUNT(*) DESC, project")]
        words = [w for (w,) in conn.execute(
            "SELECT term FROM (SELECT term, df FROM term_df UNION ALL"
            " SELECT keyword, COUNT(*) FROM keyword_index GROUP BY keyword)"
            " WHERE length(term) >= 4 AND term NOT GLOB '*[^a-z]*'"
            " GROUP BY term HAVING MAX(df) BETWEEN ? AND ? ORDER BY MAX(df) DESC, term",
            (min_sessions, max(2, total // 4)))]
        terms = list(dict.fromkeys(w for w in projects + words if len(w) >= 3 and not w.isdigit()))
        self._vocabulary[(limit, min_sessions)] = (state, terms[:max(0, limit)])
        return terms[:max(0, limit)]

    def digest(self, since: dt.datetime) -> Digest:
        """Handoffs of sessions that ended since `since`, and every open thread of those still open."""
        conn = self._reader().conn
        day = since.astimezone(self.settings.zone).date().isoformat()
        rows = conn.execute(
            f"SELECT {_COLUMNS}, ended_at FROM handoffs WHERE substance > 0 AND date >= ?"
            " ORDER BY date, ended_at, session_uuid",
            (day,),
        ).fetchall()
        handoffs = []
        for row in rows:
            ended = row[-1]
            if ended and dt.datetime.fromisoformat(ended) < since:
                continue
            handoffs.append(self._record(row[:-1]))
        threads = [(h, h.open_threads) for h in handoffs if h.open_threads]
        return Digest(since=since, handoffs=handoffs, open_threads=threads)

    def reindex(self, import_dir: Path | None = None) -> tuple[int, int, list[str]]:
        from eywa.core.ingest.reindex import reindex

        with self._writing():
            return reindex(self.store, self.settings.handoffs_dir, self.settings.archive_dir, import_dir)
