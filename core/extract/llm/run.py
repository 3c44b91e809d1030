"""The LLM pass: replaces the deterministic handoffs of settled sessions with handoffs written by Claude.

Ingest keeps writing the deterministic handoff of every new or changed session, so the index is always
fresh; this pass then sends each settled session (no new line for `llm.idle_minutes`, or a SessionEnd
mark, or asked for by id) and writes Claude's handoff in the same file format and front matter. It
composes the parts, each in its own module: state (per-session status), candidates (settled and due),
budget (caps and estimates), sending (the concurrent loop), batches (Message Batches), outcomes (what an
answer does), stats (for `eywa stats`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

import orjson

from eywa.core.config.clock import now, timestamp
from eywa.core.config.settings import Settings
from eywa.core.errors import LLMStop
from eywa.core.extract.llm.anthropic_backend import AnthropicBackend
from eywa.core.extract.llm.backend import Backend, Choice, choose_backend, open_backend
from eywa.core.extract.llm.batches import Batches
from eywa.core.extract.llm.budget import Budget, Plan
from eywa.core.extract.llm.candidates import Candidates
from eywa.core.extract.llm.lifecycle import LLMStates, answered
from eywa.core.extract.llm.outcomes import Outcomes
from eywa.core.extract.llm.report import LLMReport, Progress
from eywa.core.extract.llm.sending import Sender
from eywa.core.index.store import Store

__all__ = ["LLMPass", "LLMReport", "Plan"]  # what core/api.py takes from the LLM pass


class LLMPass:
    """One run of LLM extraction over one store (main thread only; requests go out on worker threads)."""

    def __init__(self, store: Store, settings: Settings, *, choice: Choice | None = None,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = timestamp) -> None:
        self.store = store
        self.settings = settings
        self.cfg = settings.llm
        self._clock = clock
        self.choice = choice or choose_backend(settings)
        self.backend: Backend = open_backend(self.choice, settings, sleep=sleep)
        self._started = False
        self.warnings: list[str] = []
        self.states = LLMStates(store, clock)
        self.candidates = Candidates(store, settings, self.backend.model, clock)
        self.outcomes = Outcomes(store, settings, self.backend, self.states, self.candidates)
        self.sender = Sender(self.cfg, self.backend, self.outcomes, self.start, self._budget)
        self.batches = Batches(self.cfg, self.backend, self.states, self.candidates, self.outcomes,
                               start=self.start, budget=self._budget, sleep=sleep)

    def start(self) -> None:
        """The backend's checks before the first request of the run (the model, the sign-in); raises
        `LLMStop` with what to fix when nothing can be sent."""
        if not self._started:
            self.warnings.extend(self.backend.start())
            self._started = True

    def batch_backend(self) -> AnthropicBackend:
        """The backend with the Message Batches API (raises `LLMStop` for one without)."""
        return self.batches.backend_with_batches()

    def unfinished_batches(self) -> int:
        return self.batches.unfinished()

    def _budget(self) -> Budget:
        return Budget(self.cfg, self.states.tokens_today())

    # -- the entry points -------------------------------------------------------------------------------
    def after_ingest(self, updated: list[str], *, ended: Iterable[str] = (), only: set[str] | None = None,
                     progress: Progress | None = None) -> LLMReport:
        """The automatic pass after an ingest: puts back the stored Claude handoff of sessions ingest
        rewrote without a change, marks sessions that changed, collects a finished batch, and extracts
        the pending sessions that have settled. Sessions last active before LLM extraction was switched
        on are left to `eywa extract --all`."""
        report = LLMReport(mode="auto", backend=self.backend.name)
        try:
            self._mark_touched(report, updated)
            self.batches.resume(report, block=False)
            states, due = self.states.due()
            if only is not None:
                due = [uid for uid in due if uid in only]
            backlog = self.candidates.due(states, due, set(ended))
            report.waiting += backlog.waiting
            for cand in backlog.restore:
                self.outcomes.restore(cand, states[cand.session_id].result, report)  # answered before a crash
            self.sender.send(backlog.candidates, report, progress)
        except LLMStop as exc:
            report.stopped = str(exc)
        return self._finish(report)

    def _mark_touched(self, report: LLMReport, updated: list[str]) -> None:
        """The sessions ingest just wrote, and the Claude handoffs it overwrote: put back when unchanged,
        pending when changed; a new session only when last active after LLM extraction was switched on."""
        enabled_at = self.store.get_meta("llm_enabled_at")
        if enabled_at is None:
            enabled_at = str(int(self._clock() * 1e9))
            with self.store.transaction():
                self.store.set_meta("llm_enabled_at", enabled_at)
        cutoff_ns = int(enabled_at) - self.cfg.idle_minutes * 60 * 1_000_000_000
        touched = list(dict.fromkeys([*updated, *self.states.overwritten()]))
        states = self.states.of(touched)
        for session in self.candidates.sessions(touched):
            state = states.get(session.session_id)
            if state is None:
                # Decided from the row alone: a first ingest of thousands of sessions reads no archive here.
                if session.newest_mtime_ns >= cutoff_ns and session.substance > 0:
                    self.states.pending(session.session_id)
                continue
            cand = self.candidates.read(session)
            if cand is None:
                continue
            if answered(state, cand.hash):
                if not session.extractor.startswith("llm:"):
                    self.outcomes.restore(cand, state.result, report)
            elif state.status in ("done", "retry", "failed") and state.content_hash != cand.hash:
                self.states.pending(cand.session_id, content_hash=cand.hash, attempts=0)

    def extract_one(self, session_id: str) -> LLMReport:
        """Extract one session now, settled or not (the user asked); an unchanged one is not sent again."""
        report = LLMReport(mode="one", backend=self.backend.name)
        cand = self.candidates.current(session_id)
        if cand is None:
            report.outcomes[session_id] = "no transcript kept for this session: nothing to send"
            return self._finish(report)
        state = self.states.one(session_id)
        if answered(state, cand.hash):
            if not cand.session.extractor.startswith("llm:"):
                self.outcomes.restore(cand, state.result, report)
            else:
                report.unchanged += 1
            report.outcomes[session_id] = "unchanged since its LLM extraction: kept, nothing sent"
            return self._finish(report)
        self.sender.send([cand], report, None)
        return self._finish(report)

    def plan_all(self) -> Plan:
        """Every session worth sending, for `eywa extract --all`, with the token and cost estimate."""
        return Plan.of(self.candidates.backlog(self.states.all()), self._budget(), self.backend.model)

    def run_all(self, plan: Plan, *, batch: bool = False, progress: Progress | None = None) -> LLMReport:
        report = LLMReport(mode="batch" if batch else "all", backend=self.backend.name)
        for cand in plan.restore:
            state = self.states.one(cand.session_id)
            if state and state.result:
                self.outcomes.restore(cand, state.result, report)
        report.unchanged += plan.unchanged
        report.waiting += plan.waiting
        (self.batches.send if batch else self.sender.send)(plan.candidates, report, progress)
        return self._finish(report)

    def resume_batches(self, progress: Progress | None = None) -> LLMReport:
        """Wait for and collect every batch a previous run left unfinished (after a restart)."""
        report = LLMReport(mode="batch", backend=self.backend.name)
        self.batches.resume(report, block=True, progress=progress)
        return self._finish(report)

    def _finish(self, report: LLMReport) -> LLMReport:
        report.warnings = list(dict.fromkeys([*self.warnings, *report.warnings]))
        with self.store.transaction():
            self.store.set_meta("last_llm_report", orjson.dumps(report.to_json()).decode())
            if report.stopped:
                self.store.set_meta("llm_last_stop", f"{now().isoformat(timespec='seconds')}: {report.stopped}")
        return report
