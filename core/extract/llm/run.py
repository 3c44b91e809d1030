"""The LLM pass: replaces the deterministic handoffs of settled sessions with handoffs written by Claude.

Ingest keeps writing the deterministic handoff of every new or changed session, so the index is always
fresh; this pass then sends each settled session (no new line for `llm.idle_minutes`, or a SessionEnd
mark, or asked for by id) and writes Claude's handoff in the same file format and front matter.

State, per session, in the index database (tables created here, outside core/index/store.py's schema):
`llm_state.status` is pending (to send), done (Claude's handoff is in place for `done_hash`), retry (the
last attempt fell back; tried again after a pause, three attempts in all), failed (refused, rejected, or
out of attempts: only a change of the session or `eywa extract <id>` tries again) or batched (in a
Message Batch not collected yet). `content_hash` is the transcript markdown with the model, budget and
prompt version: an unchanged session is never sent twice. The validated answer is stored before the
file is written, so a crash anywhere is resumed without a second request; `llm_usage` has one row per
API call.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import sqlite3
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

import orjson

from eywa.core.config.clock import now, timestamp
from eywa.core.config.settings import Settings
from eywa.core.extract.llm.anthropic_backend import AnthropicBackend
from eywa.core.extract.llm.anthropic_client import LLMStop, RequestRejected, TransientFailure, Usage, cost_usd
from eywa.core.extract.llm.backend import Backend, Call, Choice, Outcome, choose_backend, open_backend
from eywa.core.extract.llm.prompt import (
    SYSTEM_PROMPT,
    HandoffFields,
    answer_schema,
    budget_markdown,
    content_hash,
    estimate_tokens,
    to_handoff,
    user_content,
)
from eywa.core.handoffs.model import atomic_write, handoff_relpath
from eywa.core.index.migrations import Migration, migrate
from eywa.core.index.store import Store

log = logging.getLogger("eywa.llm")
Progress = Callable[[int, int, str], None]

MAX_ATTEMPTS = 3  # a session that fell back this often waits for a change (or `eywa extract <id>`)
EXPECTED_OUTPUT_TOKENS = 700  # a typical handoff answer, for estimates (max_tokens is the ceiling)
_CUSTOM_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS llm_state(
    session_uuid TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    content_hash TEXT NOT NULL DEFAULT '',
    done_hash TEXT NOT NULL DEFAULT '',
    result TEXT NOT NULL DEFAULT '',
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at REAL NOT NULL DEFAULT 0,
    batch_id TEXT NOT NULL DEFAULT '',
    last_error TEXT NOT NULL DEFAULT '',
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS llm_state_status ON llm_state(status);
CREATE TABLE IF NOT EXISTS llm_usage(
    id INTEGER PRIMARY KEY,
    session_uuid TEXT NOT NULL,
    at TEXT NOT NULL,
    day TEXT NOT NULL,
    model TEXT NOT NULL,
    mode TEXT NOT NULL,
    outcome TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cache_creation_input_tokens INTEGER NOT NULL,
    cache_read_input_tokens INTEGER NOT NULL,
    cost_usd REAL
);
CREATE INDEX IF NOT EXISTS llm_usage_day ON llm_usage(day);
CREATE TABLE IF NOT EXISTS llm_batches(
    batch_id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    model TEXT NOT NULL,
    items TEXT NOT NULL
);
"""


def _add_cost_column(conn: sqlite3.Connection) -> None:
    """Tables from before the claude-code backend lack the column (their rows are priced from the model)."""
    if "cost_usd" not in {row[1] for row in conn.execute("PRAGMA table_info(llm_usage)")}:
        conn.execute("ALTER TABLE llm_usage ADD COLUMN cost_usd REAL")


# The LLM state's migrations, in the index file (core/index/migrations.py); a new one goes at the end.
MIGRATIONS: tuple[Migration, ...] = (
    ("llm-tables", _SCHEMA),
    ("llm-usage-cost", _add_cost_column),
)


def ensure_tables(store: Store) -> None:
    migrate(store.conn, MIGRATIONS)


@dataclass
class Candidate:
    session_uuid: str
    short_id: str
    date: dt.date
    duration_min: int
    model: str
    projects: list[str]
    keywords: list[str]
    substance: int
    extractor: str
    archive_path: str
    ended_at: str
    newest_mtime_ns: int
    markdown: str
    hash: str
    content: str  # the prompt: the budgeted transcript and its hints
    est_input: int
    machine: str = ""
    agent: str = "claude-code"


@dataclass
class LLMReport:
    mode: str
    backend: str = ""  # anthropic | claude-code: which wrote (or would have written) the handoffs
    extracted: int = 0
    restored: int = 0  # unchanged sessions whose stored Claude handoff was put back, with no request
    unchanged: int = 0  # already extracted from the same content
    fallbacks: int = 0  # kept their deterministic handoff (invalid twice, refused, rejected, API failing)
    waiting: int = 0  # not settled yet
    left: int = 0  # not sent because the run stopped (spending cap, an error that stops the run)
    requests: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0
    stopped: str = ""
    warnings: list[str] = field(default_factory=list)
    outcomes: dict[str, str] = field(default_factory=dict)

    def summary(self) -> str:
        cost = f", about ${self.cost_usd:.4f}" if self.cost_usd else ""
        parts = [f"LLM{f' ({self.backend})' if self.backend else ''}: {self.extracted} extracted"]
        for count, label in ((self.restored, "restored unchanged"), (self.unchanged, "unchanged"),
                             (self.fallbacks, "kept deterministic"), (self.waiting, "not settled yet"),
                             (self.left, "left for a later run")):
            if count:
                parts.append(f"{count} {label}")
        text = ", ".join(parts)
        if self.requests:
            cache = self.usage.cache_creation_input_tokens + self.usage.cache_read_input_tokens
            text += (f"; {self.requests} requests, {self.usage.input_tokens:,} input + {cache:,} cache + "
                     f"{self.usage.output_tokens:,} output tokens{cost}")
        return text + (f"; stopped: {self.stopped}" if self.stopped else "")

    def to_json(self) -> dict[str, Any]:
        data = {k: v for k, v in self.__dict__.items() if k not in ("usage", "outcomes")}
        data["usage"] = dict(self.usage.__dict__)
        data["at"] = now().isoformat(timespec="seconds")
        return data


@dataclass
class Plan:
    """What `eywa extract --all` would send, and what it would cost, before anything is sent."""

    candidates: list[Candidate]
    restore: list[Candidate]
    unchanged: int
    waiting: int
    failed: int
    batched: int
    input_tokens: int
    expected_output_tokens: int
    max_output_tokens: int
    model: str
    fits: int  # how many of the candidates the spending caps let through

    def cost(self, *, batch: bool = False, worst: bool = False) -> float | None:
        output = self.max_output_tokens if worst else self.expected_output_tokens
        return cost_usd(self.model, Usage(input_tokens=self.input_tokens, output_tokens=output), batch=batch)

    def describe(self, *, batch: bool = False) -> str:
        lines = [f"{len(self.candidates)} sessions to extract with {self.model}"
                 + (" through the Message Batches API (half price)" if batch else "")]
        lines.append(f"  about {self.input_tokens:,} input tokens and {self.expected_output_tokens:,} output tokens "
                     f"(at most {self.max_output_tokens:,})")
        expected, worst = self.cost(batch=batch), self.cost(batch=batch, worst=True)
        if expected is not None and worst is not None:
            lines.append(f"  estimated cost ${expected:.2f} (at most ${worst:.2f}); prompt caching lowers it")
        else:
            lines.append(f"  no price known for {self.model}: the cost is not estimated")
        if self.fits < len(self.candidates):
            lines.append(f"  the spending caps (llm.tokens_per_run, llm.tokens_per_day) let about {self.fits} through "
                         f"this run; the rest wait for a later one")
        skipped = [(self.unchanged, "already extracted"), (len(self.restore), "to restore without a request"),
                   (self.waiting, "not settled yet"), (self.failed, "failed before on the same content"),
                   (self.batched, "in an unfinished batch")]
        notes = ", ".join(f"{n} {label}" for n, label in skipped if n)
        if notes:
            lines.append(f"  not sent: {notes}")
        return "\n".join(lines)


class _Budget:
    """The spending caps: tokens per run and per UTC day, reserved before a request, settled after."""

    def __init__(self, per_run: int, per_day: int, used_today: int) -> None:
        self.per_run, self.per_day, self.used_today = per_run, per_day, used_today
        self.used_run = 0
        self.reserved = 0

    def reserve(self, tokens: int) -> str | None:
        if self.used_run + self.reserved + tokens > self.per_run:
            return (f"spending cap reached: this run used {self.used_run + self.reserved:,} of llm.tokens_per_run "
                    f"{self.per_run:,} tokens")
        if self.used_today + self.reserved + tokens > self.per_day:
            return (f"spending cap reached: {self.used_today + self.reserved:,} of llm.tokens_per_day "
                    f"{self.per_day:,} tokens used today")
        self.reserved += tokens
        return None

    def settle(self, reserved: int, used: int) -> None:
        self.reserved -= reserved
        self.used_run += used
        self.used_today += used


class LLMPass:
    """One run of LLM extraction over one store (main thread only; requests go out on worker threads)."""

    def __init__(self, store: Store, settings: Settings, *, choice: Choice | None = None,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = timestamp) -> None:
        self.store = store
        self.settings = settings
        self.cfg = settings.llm
        self._sleep = sleep
        self._clock = clock
        self.choice = choice or choose_backend(settings)
        self.backend: Backend = open_backend(self.choice, settings, sleep=sleep)
        self._started = False
        self.warnings: list[str] = []
        ensure_tables(store)
        self._system_tokens = estimate_tokens(SYSTEM_PROMPT + json.dumps(answer_schema()))

    # -- the backend ----------------------------------------------------------------------------------
    def start(self) -> None:
        """The backend's checks before the first request of the run (the model, the sign-in); raises
        `LLMStop` with what to fix when nothing can be sent."""
        if not self._started:
            self.warnings.extend(self.backend.start())
            self._started = True

    # -- reading the store ----------------------------------------------------------------------------
    def _states(self, ids: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
        names = ("session_uuid", "status", "content_hash", "done_hash", "result", "attempts", "next_attempt_at",
                 "batch_id")
        sql = f"SELECT {', '.join(names)} FROM llm_state"
        if ids is None:
            rows = self.store.conn.execute(sql).fetchall()
        else:
            rows = [row for uid in dict.fromkeys(ids)
                    if (row := self.store.conn.execute(sql + " WHERE session_uuid = ?", (uid,)).fetchone())]
        return {r[0]: dict(zip(names, r, strict=True)) for r in rows}

    _ROW_SQL = (
        "SELECT h.session_uuid, h.short_id, h.date, h.duration_min, h.model, h.projects, h.keywords, h.substance,"
        " h.extractor, h.archive_path, h.ended_at,"
        " (SELECT MAX(mtime_ns) FROM sources s WHERE s.session_uuid = h.session_uuid), h.machine, h.agent"
        " FROM handoffs h WHERE h.origin = 'extracted' AND h.archive_path != ''"
    )

    def _rows(self, ids: Iterable[str] | None = None) -> list[tuple]:
        if ids is None:
            return self.store.conn.execute(self._ROW_SQL + " ORDER BY h.ended_at, h.session_uuid").fetchall()
        rows = []
        for uid in ids:
            row = self.store.conn.execute(self._ROW_SQL + " AND h.session_uuid = ?", (uid,)).fetchone()
            if row is not None:
                rows.append(row)
        return rows

    def _candidate(self, row: tuple) -> Candidate | None:
        path = self.settings.archive_dir / row[9]
        try:
            markdown = path.read_text(encoding="utf-8")
        except (FileNotFoundError, UnicodeDecodeError):
            return None  # no transcript kept: nothing to send
        budget = self.cfg.input_token_budget
        text, abridged = budget_markdown(markdown, budget)
        projects, keywords = orjson.loads(row[5]), orjson.loads(row[6])
        content = user_content(text, projects=projects, candidate_keywords=keywords, abridged=abridged)
        return Candidate(
            session_uuid=row[0], short_id=row[1], date=dt.date.fromisoformat(row[2]), duration_min=row[3],
            model=row[4], projects=projects, keywords=keywords, substance=row[7], extractor=row[8],
            archive_path=row[9], ended_at=row[10], newest_mtime_ns=row[11] or 0, markdown=markdown,
            hash=content_hash(self.backend.model, budget, markdown), content=content,
            est_input=self._system_tokens + estimate_tokens(content), machine=row[12], agent=row[13],
        )

    def _settled(self, session_uuid: str, newest_mtime_ns: int, ended: set[str]) -> bool:
        """No new line for `llm.idle_minutes` (by the transcript files' mtimes), or a SessionEnd mark."""
        idle_ns = self.cfg.idle_minutes * 60 * 1_000_000_000
        return session_uuid in ended or self._clock() * 1e9 - newest_mtime_ns >= idle_ns

    def _used_today(self) -> int:
        day = now().date().isoformat()
        row = self.store.conn.execute(
            "SELECT COALESCE(SUM(input_tokens + output_tokens + cache_creation_input_tokens"
            " + cache_read_input_tokens), 0) FROM llm_usage WHERE day = ?", (day,)).fetchone()
        return int(row[0])

    # -- the three entry points -------------------------------------------------------------------------
    def after_ingest(self, updated: list[str], *, ended: Iterable[str] = (), only: set[str] | None = None,
                     progress: Progress | None = None) -> LLMReport:
        """The automatic pass after an ingest: puts back the stored Claude handoff of sessions ingest
        rewrote without a change, marks sessions that changed, collects a finished batch, and extracts
        the pending sessions that have settled. Sessions last active before LLM extraction was switched
        on are left to `eywa extract --all`."""
        report = LLMReport(mode="auto", backend=self.backend.name)
        try:
            self._auto(report, list(updated), set(ended), only, progress)
        except LLMStop as exc:
            report.stopped = str(exc)
        return self._finish(report)

    def _auto(self, report: LLMReport, updated: list[str], ended: set[str], only: set[str] | None,
              progress: Progress | None) -> None:
        enabled_at = self.store.get_meta("llm_enabled_at")
        if enabled_at is None:
            enabled_at = str(int(self._clock() * 1e9))
            with self.store.transaction():
                self.store.set_meta("llm_enabled_at", enabled_at)
        cutoff_ns = int(enabled_at) - self.cfg.idle_minutes * 60 * 1_000_000_000
        overwritten = [r[0] for r in self.store.conn.execute(
            "SELECT s.session_uuid FROM llm_state s JOIN handoffs h USING(session_uuid)"
            " WHERE s.status = 'done' AND h.extractor NOT LIKE 'llm:%'")]
        touched = list(dict.fromkeys([*updated, *overwritten]))
        states = self._states(touched)
        for row in self._rows(touched):
            state = states.get(row[0])
            if state is None:
                # Decided from the row alone: a first ingest of thousands of sessions reads no archive here.
                if (row[11] or 0) >= cutoff_ns and row[7] > 0:
                    self._set_state(row[0], "pending")
                continue
            cand = self._candidate(row)
            if cand is None:
                continue
            if state["result"] and state["done_hash"] == cand.hash:
                if not cand.extractor.startswith("llm:"):
                    self._restore(cand, state["result"], report)
            elif state["status"] in ("done", "retry", "failed") and state["content_hash"] != cand.hash:
                self._set_state(cand.session_uuid, "pending", content_hash=cand.hash, attempts=0)
        self._resume_batches(report, block=False)
        states = self._states()
        due = [uid for uid, s in states.items()
               if s["status"] == "pending" or (s["status"] == "retry" and s["next_attempt_at"] <= self._clock())]
        if only is not None:
            due = [uid for uid in due if uid in only]
        cands = []
        for row in self._rows(due):
            if row[7] == 0:
                continue
            if not self._settled(row[0], row[11] or 0, ended):
                report.waiting += 1
                continue
            cand = self._candidate(row)
            if cand is None:
                continue
            state = states[cand.session_uuid]
            if state["result"] and state["done_hash"] == cand.hash:
                self._restore(cand, state["result"], report)  # answered before a crash: no second request
            else:
                cands.append(cand)
        cands.sort(key=lambda c: (c.ended_at, c.session_uuid))
        self._send(cands, report, progress)

    def extract_one(self, session_uuid: str) -> LLMReport:
        """Extract one session now, settled or not (the user asked); an unchanged one is not sent again."""
        report = LLMReport(mode="one", backend=self.backend.name)
        rows = self._rows([session_uuid])
        cand = self._candidate(rows[0]) if rows else None
        if cand is None:
            report.outcomes[session_uuid] = "no transcript kept for this session: nothing to send"
            return self._finish(report)
        state = self._states([session_uuid]).get(session_uuid)
        if state and state["result"] and state["done_hash"] == cand.hash:
            if not cand.extractor.startswith("llm:"):
                self._restore(cand, state["result"], report)
            else:
                report.unchanged += 1
            report.outcomes[session_uuid] = "unchanged since its LLM extraction: kept, nothing sent"
            return self._finish(report)
        self._send([cand], report, None)
        return self._finish(report)

    def plan_all(self) -> Plan:
        """Every session worth sending, for `eywa extract --all`: not substance 0, not already extracted
        from the same content, settled; with the token and cost estimate."""
        states = self._states()
        cands: list[Candidate] = []
        restore: list[Candidate] = []
        unchanged = waiting = failed = batched = 0
        for row in self._rows():
            if row[7] == 0:
                continue
            cand = self._candidate(row)
            if cand is None:
                continue
            state = states.get(cand.session_uuid)
            if state and state["result"] and state["done_hash"] == cand.hash:
                if cand.extractor.startswith("llm:"):
                    unchanged += 1
                else:
                    restore.append(cand)
            elif state and state["status"] == "batched":
                batched += 1
            elif state and state["status"] == "failed" and state["content_hash"] == cand.hash:
                failed += 1
            elif not self._settled(cand.session_uuid, cand.newest_mtime_ns, set()):
                waiting += 1
            else:
                cands.append(cand)
        budget = _Budget(self.cfg.tokens_per_run, self.cfg.tokens_per_day, self._used_today())
        fits = sum(1 for c in cands if budget.reserve(c.est_input + self.cfg.max_tokens) is None)
        return Plan(
            candidates=cands, restore=restore, unchanged=unchanged, waiting=waiting, failed=failed,
            batched=batched, input_tokens=sum(c.est_input for c in cands),
            expected_output_tokens=len(cands) * min(EXPECTED_OUTPUT_TOKENS, self.cfg.max_tokens),
            max_output_tokens=len(cands) * self.cfg.max_tokens, model=self.backend.model, fits=fits,
        )

    def run_all(self, plan: Plan, *, batch: bool = False, progress: Progress | None = None) -> LLMReport:
        report = LLMReport(mode="batch" if batch else "all", backend=self.backend.name)
        for cand in plan.restore:
            state = self._states([cand.session_uuid]).get(cand.session_uuid)
            if state and state["result"]:
                self._restore(cand, state["result"], report)
        report.unchanged += plan.unchanged
        report.waiting += plan.waiting
        if batch:
            self._send_batch(plan.candidates, report, progress)
        else:
            self._send(plan.candidates, report, progress)
        return self._finish(report)

    def resume_batches(self, progress: Progress | None = None) -> LLMReport:
        """Wait for and collect every batch a previous run left unfinished (after a restart)."""
        report = LLMReport(mode="batch", backend=self.backend.name)
        self._resume_batches(report, block=True, progress=progress)
        return self._finish(report)

    # -- sending, one request per session -----------------------------------------------------------------
    def _send(self, cands: list[Candidate], report: LLMReport, progress: Progress | None) -> None:
        if not cands:
            return
        try:
            self.start()
        except LLMStop as exc:
            report.stopped, report.left = str(exc), len(cands)
            return
        budget = _Budget(self.cfg.tokens_per_run, self.cfg.tokens_per_day, self._used_today())
        queue = iter(cands)
        inflight: dict[Future[Outcome], tuple[Candidate, int]] = {}
        stop = ""
        rejected_in_a_row = 0
        finished = 0
        pool = ThreadPoolExecutor(max_workers=self.cfg.concurrency, thread_name_prefix="eywa-llm")

        def fill() -> None:
            nonlocal stop
            while not stop and len(inflight) < self.cfg.concurrency:
                cand = next(queue, None)
                if cand is None:
                    return
                reserve = cand.est_input + self.cfg.max_tokens
                reason = budget.reserve(reserve)
                if reason is not None:
                    stop = reason
                    report.left += 1
                    return
                inflight[pool.submit(self.backend.extract, cand.content)] = (cand, reserve)

        try:
            fill()
            while inflight:
                done, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
                for future in done:
                    cand, reserve = inflight.pop(future)
                    outcome = future.result()
                    budget.settle(reserve, sum(c.usage.total for c in outcome.calls))
                    self._apply(cand, outcome, report)
                    if outcome.kind == "stopped":
                        stop = stop or outcome.error
                    elif outcome.kind == "transient":
                        stop = stop or f"{self.backend.label} keeps failing ({outcome.error}); run again later"
                    rejected_in_a_row = rejected_in_a_row + 1 if outcome.kind == "rejected" else 0
                    if rejected_in_a_row >= 3:
                        stop = stop or (f"{self.backend.label} rejected {rejected_in_a_row} requests in a row "
                                        f"({outcome.error}): check the llm settings")
                    finished += 1
                    if progress is not None:
                        progress(finished, len(cands), cand.session_uuid)
                fill()
        except BaseException:
            # Interrupted (Ctrl-C, a progress callback that raised): keep every answer already paid for.
            pool.shutdown(wait=True, cancel_futures=True)
            for future, (cand, _) in inflight.items():
                if future.done() and not future.cancelled() and future.exception() is None:
                    self._apply(cand, future.result(), report)
            raise
        pool.shutdown(wait=True)
        report.left += sum(1 for _ in queue)
        if stop:
            report.stopped = stop

    # -- writing results ----------------------------------------------------------------------------------
    def _apply(self, cand: Candidate, outcome: Outcome, report: LLMReport) -> None:
        report.requests += len(outcome.calls)
        for call in outcome.calls:
            report.usage.add(call.usage)
            cost = self._cost(call)
            report.cost_usd = None if cost is None or report.cost_usd is None else report.cost_usd + cost
        if outcome.kind == "ok" and outcome.fields is not None:
            self._apply_ok(cand, outcome, report)
            return
        state = self._states([cand.session_uuid]).get(cand.session_uuid) or {"attempts": 0}
        with self.store.transaction():
            self._record_calls(cand.session_uuid, outcome.calls)
            if outcome.kind in ("stopped", "requeue"):
                self._set_state(cand.session_uuid, "pending", content_hash=cand.hash, error=outcome.error)
                report.left += outcome.kind == "stopped"
                report.outcomes[cand.session_uuid] = f"not extracted: {outcome.error}"
                return
            attempts = int(state["attempts"]) + 1
            final = outcome.kind in ("refused", "rejected") or attempts >= MAX_ATTEMPTS
            # A fallback keeps the handoff in place (the deterministic one for a new or changed session).
            self._set_state(cand.session_uuid, "failed" if final else "retry", content_hash=cand.hash,
                            attempts=attempts, error=outcome.error,
                            next_attempt_at=self._clock() + 3600 * 2 ** (attempts - 1))
        report.fallbacks += 1
        report.outcomes[cand.session_uuid] = f"kept the deterministic handoff ({outcome.kind}): {outcome.error}"
        log.warning("session %s kept its deterministic handoff (%s): %s", cand.session_uuid, outcome.kind,
                    outcome.error)

    def _apply_ok(self, cand: Candidate, outcome: Outcome, report: LLMReport) -> None:
        assert outcome.fields is not None
        current = self._rows([cand.session_uuid])
        fresh = self._candidate(current[0]) if current else None
        with self.store.transaction():
            self._record_calls(cand.session_uuid, outcome.calls)
            if fresh is None or fresh.hash != cand.hash:
                # The session changed while the request was out: this answer describes an old version.
                self._set_state(cand.session_uuid, "pending", content_hash=fresh.hash if fresh else "")
                report.outcomes[cand.session_uuid] = "changed during the request: pending again"
                return
            # The validated answer is stored first: a crash from here on is finished without a request.
            self._set_state(cand.session_uuid, "pending", content_hash=cand.hash, done_hash=cand.hash,
                            result=outcome.fields.model_dump_json())
        self._write(fresh, outcome.fields, outcome.model or self.backend.model)
        report.extracted += 1
        report.outcomes[cand.session_uuid] = f"extracted by {outcome.model or self.backend.model}"

    def _restore(self, cand: Candidate, result: str, report: LLMReport) -> None:
        fields = HandoffFields.model_validate_json(result)
        self._write(cand, fields, self.backend.model)
        report.restored += 1

    def _write(self, cand: Candidate, fields: HandoffFields, model: str) -> None:
        handoff = to_handoff(fields, session_uuid=cand.session_uuid, short_id=cand.short_id, date=cand.date,
                             duration_min=cand.duration_min, model=cand.model,
                             cwd_projects=[p for p in cand.projects if p])
        handoff.machine, handoff.agent = cand.machine, cand.agent  # the session's, whoever summarises it
        relpath = handoff_relpath(handoff)
        # Files first, row last, as ingest does: a crash in between is repaired by the next run.
        atomic_write(self.settings.handoffs_dir / relpath, handoff.to_markdown())
        with self.store.transaction():
            self.store.put_handoff(handoff, path=relpath.as_posix(), archive_path=cand.archive_path,
                                   transcript=cand.markdown, ended_at=cand.ended_at, extractor=f"llm:{model}")
            self.store.conn.execute(
                "UPDATE llm_state SET status = 'done', batch_id = '', last_error = '', updated_at = ?"
                " WHERE session_uuid = ?", (now().isoformat(timespec="seconds"), cand.session_uuid))

    def _set_state(self, session_uuid: str, status: str, *, content_hash: str | None = None,
                   done_hash: str | None = None, result: str | None = None, attempts: int | None = None,
                   error: str | None = None, next_attempt_at: float | None = None, batch_id: str | None = None) -> None:
        """Upsert one session's state; call inside a transaction, or alone (it then makes its own)."""
        values = {"content_hash": content_hash, "done_hash": done_hash, "result": result, "attempts": attempts,
                  "last_error": error, "next_attempt_at": next_attempt_at, "batch_id": batch_id}
        given = {k: v for k, v in values.items() if v is not None}
        stamp = now().isoformat(timespec="seconds")
        columns = ["session_uuid", "status", "updated_at", *given]
        marks = ", ".join("?" * len(columns))
        updates = ", ".join(f"{c} = excluded.{c}" for c in columns[1:])
        sql = (f"INSERT INTO llm_state({', '.join(columns)}) VALUES({marks})"
               f" ON CONFLICT(session_uuid) DO UPDATE SET {updates}")
        params = (session_uuid, status, stamp, *given.values())
        if self.store.conn.in_transaction:
            self.store.conn.execute(sql, params)
        else:
            with self.store.transaction():
                self.store.conn.execute(sql, params)

    def _cost(self, call: Call) -> float | None:
        """What a call cost: as the backend reported it (Claude Code does), else at the model's list price."""
        if call.cost_usd is not None:
            return call.cost_usd
        return cost_usd(call.model or self.backend.model, call.usage, batch=call.mode == "batch")

    def _record_calls(self, session_uuid: str, calls: list[Call]) -> None:
        stamp = now()
        self.store.conn.executemany(
            "INSERT INTO llm_usage(session_uuid, at, day, model, mode, outcome, input_tokens, output_tokens,"
            " cache_creation_input_tokens, cache_read_input_tokens, cost_usd)"
            " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(session_uuid, stamp.isoformat(timespec="seconds"), stamp.date().isoformat(),
              c.model or self.backend.model, c.mode, c.outcome, c.usage.input_tokens, c.usage.output_tokens,
              c.usage.cache_creation_input_tokens, c.usage.cache_read_input_tokens, c.cost_usd) for c in calls],
        )

    def _finish(self, report: LLMReport) -> LLMReport:
        report.warnings = list(dict.fromkeys([*self.warnings, *report.warnings]))
        with self.store.transaction():
            self.store.set_meta("last_llm_report", orjson.dumps(report.to_json()).decode())
            if report.stopped:
                self.store.set_meta("llm_last_stop", f"{now().isoformat(timespec='seconds')}: {report.stopped}")
        return report

    # -- the Message Batches API ----------------------------------------------------------------------------
    def batch_backend(self) -> AnthropicBackend:
        """The backend that has the Message Batches API: only the Anthropic API has one."""
        if not isinstance(self.backend, AnthropicBackend):
            raise LLMStop(f"--batch needs the Anthropic API (llm.backend anthropic, with a key); {self.backend.label} "
                          f"has no batches")
        self.start()
        return self.backend

    def _send_batch(self, cands: list[Candidate], report: LLMReport, progress: Progress | None) -> None:
        try:
            backend = self.batch_backend()
            client = backend.client()
            self._resume_batches(report, block=True, progress=progress)
        except LLMStop as exc:
            report.stopped, report.left = str(exc), len(cands)
            return
        budget = _Budget(self.cfg.tokens_per_run, self.cfg.tokens_per_day, self._used_today())
        chosen: list[Candidate] = []
        for cand in cands:
            if budget.reserve(cand.est_input + self.cfg.max_tokens) is not None:
                report.left = len(cands) - len(chosen)
                report.stopped = (f"spending cap: {len(chosen)} of {len(cands)} sessions fit in llm.tokens_per_run "
                                  f"and llm.tokens_per_day; the rest wait for a later run")
                break
            chosen.append(cand)
        if not chosen:
            return
        items: dict[str, list[str]] = {}
        requests = []
        for cand in chosen:
            custom_id = cand.session_uuid if _CUSTOM_ID_RE.match(cand.session_uuid) else cand.hash[:40]
            items[custom_id] = [cand.session_uuid, cand.hash]
            params = backend.params(cand.content)
            params.update(params.pop("extra_body", {}))  # a batch request's params are the JSON body itself
            requests.append({"custom_id": custom_id, "params": params})
        try:
            batch_id = client.create_batch(requests)
        except (LLMStop, RequestRejected, TransientFailure) as exc:
            report.stopped, report.left = f"cannot create the batch: {exc}", len(cands)
            return
        with self.store.transaction():
            self.store.conn.execute(
                "INSERT INTO llm_batches(batch_id, created_at, model, items) VALUES(?, ?, ?, ?)",
                (batch_id, now().isoformat(timespec="seconds"), self.cfg.model, orjson.dumps(items).decode()))
            for cand in chosen:
                self._set_state(cand.session_uuid, "batched", content_hash=cand.hash, batch_id=batch_id)
        log.info("created batch %s with %d requests", batch_id, len(chosen))
        self._await_batch(batch_id, report, block=True, progress=progress)

    def _resume_batches(self, report: LLMReport, *, block: bool, progress: Progress | None = None) -> None:
        batch_ids = [r[0] for r in self.store.conn.execute("SELECT batch_id FROM llm_batches ORDER BY created_at")]
        if batch_ids and not isinstance(self.backend, AnthropicBackend):
            report.warnings.append(f"{len(batch_ids)} message batch(es) wait for the Anthropic API backend")
            return
        for batch_id in batch_ids:
            try:
                self._await_batch(batch_id, report, block=block, progress=progress)
            except (RequestRejected, TransientFailure) as exc:
                report.warnings.append(f"batch {batch_id} cannot be read now ({exc}); a later run tries again")

    def _await_batch(self, batch_id: str, report: LLMReport, *, block: bool, progress: Progress | None) -> bool:
        backend = self.batch_backend()
        client = backend.client()
        while True:
            status = client.batch_status(batch_id)
            if progress is not None:
                progress(status.done, status.total, batch_id)
            if status.processing_status == "ended":
                break
            if not block:
                return False
            self._sleep(self.cfg.batch_poll_seconds)
        self._collect_batch(backend, batch_id, report)
        return True

    def _collect_batch(self, backend: AnthropicBackend, batch_id: str, report: LLMReport) -> None:
        client = backend.client()
        row = self.store.conn.execute("SELECT items FROM llm_batches WHERE batch_id = ?", (batch_id,)).fetchone()
        items: dict[str, list[str]] = orjson.loads(row[0]) if row else {}
        states = self._states()
        for result in client.batch_results(batch_id):
            if result.custom_id not in items:
                continue
            session_uuid, sent_hash = items[result.custom_id]
            state = states.get(session_uuid)
            if state is None or state["status"] != "batched" or state["batch_id"] != batch_id:
                continue  # collected before a restart
            rows = self._rows([session_uuid])
            cand = self._candidate(rows[0]) if rows else None
            if cand is None:
                continue
            if result.kind == "succeeded" and result.answer is not None:
                if cand.hash != sent_hash:
                    outcome = Outcome("requeue", [Call(result.answer.usage, "ok", "batch")],
                                      error="the session changed while in the batch")
                else:
                    try:
                        outcome = backend.read(backend.params(cand.content), result.answer, [], "batch")
                    except LLMStop as exc:
                        outcome = Outcome("stopped", [Call(result.answer.usage, "invalid", "batch")], error=str(exc))
                    except (RequestRejected, TransientFailure) as exc:
                        outcome = Outcome("transient", [Call(result.answer.usage, "invalid", "batch")],
                                          error=str(exc))
            elif result.kind == "errored" and result.error_type == "invalid_request_error":
                outcome = Outcome("rejected", error=f"{result.error_type}: {result.error}")
            else:  # errored for another reason, expired or canceled: send again later
                outcome = Outcome("requeue", error=f"batch request {result.kind} {result.error_type} {result.error}")
            self._apply(cand, outcome, report)
        with self.store.transaction():
            self.store.conn.execute("DELETE FROM llm_batches WHERE batch_id = ?", (batch_id,))
            # A session the results did not mention goes back to pending rather than stay batched forever.
            self.store.conn.execute(
                "UPDATE llm_state SET status = 'pending', batch_id = '' WHERE status = 'batched' AND batch_id = ?",
                (batch_id,))


# --- stats ---------------------------------------------------------------------------------------------

def llm_stats(store: Store, settings: Settings, choice: Choice | None = None) -> dict[str, Any]:
    """LLM extraction at a glance, for `eywa stats` and the bot's /status (reads only)."""
    choice = choice or choose_backend(settings)
    model = {"anthropic": settings.llm.model, "claude-code": settings.llm.claude_code_model}.get(choice.backend, "")
    conn = store.conn
    stats: dict[str, Any] = {"active": choice.active, "backend": choice.backend, "backend_reason": choice.reason,
                             "wanted": settings.llm.backend, "model": model}
    stats["extracted"] = conn.execute("SELECT COUNT(*) FROM handoffs WHERE extractor LIKE 'llm:%'").fetchone()[0]
    has_tables = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'llm_usage'").fetchone() is not None
    if not has_tables:
        return stats
    ensure_tables(store)  # LLM state an older release wrote (no cost column) reads like today's
    stats["states"] = dict(conn.execute("SELECT status, COUNT(*) FROM llm_state GROUP BY status").fetchall())
    columns = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    sums = ", ".join(f"COALESCE(SUM({c}), 0)" for c in columns)
    total = conn.execute(f"SELECT COUNT(*), {sums} FROM llm_usage").fetchone()
    stats["requests"] = total[0]
    stats["usage"] = dict(zip(columns, total[1:], strict=True))
    today = conn.execute(f"SELECT {sums} FROM llm_usage WHERE day = ?", (now().date().isoformat(),)).fetchone()
    stats["tokens_today"] = sum(today)
    cost = conn.execute("SELECT COALESCE(SUM(cost_usd), 0) FROM llm_usage").fetchone()[0]
    known = True
    for used, mode, *tokens in conn.execute(f"SELECT model, mode, {sums} FROM llm_usage WHERE cost_usd IS NULL"
                                            f" GROUP BY model, mode"):
        part = cost_usd(used, Usage(*tokens), batch=mode == "batch")
        if part is None:
            known = False
            continue
        cost += part
    stats["cost_usd"] = round(cost, 4) if known else None
    last = store.get_meta("last_llm_report")
    stats["last_run"] = orjson.loads(last) if last else {}
    stats["last_stop"] = store.get_meta("llm_last_stop") or ""
    return stats
