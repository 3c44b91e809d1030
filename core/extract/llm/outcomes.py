"""What an answer does: a valid one becomes the session's handoff (same file format and front matter as
ingest writes); any other keeps the handoff in place (the deterministic one) and sets the session's state
for a retry, or for good. Both the send loop and the batch collector apply outcomes here."""

from __future__ import annotations

import logging

from eywa.core.config.settings import Settings
from eywa.core.extract.llm.anthropic_client import cost_usd
from eywa.core.extract.llm.backend import Backend, Call, Outcome
from eywa.core.extract.llm.candidates import Candidate, Candidates
from eywa.core.extract.llm.lifecycle import LLMStates
from eywa.core.extract.llm.prompt import HandoffFields, to_handoff
from eywa.core.extract.llm.report import LLMReport
from eywa.core.handoffs.model import atomic_write, handoff_relpath
from eywa.core.index.store import Store

log = logging.getLogger("eywa.llm")


class Outcomes:
    def __init__(self, store: Store, settings: Settings, backend: Backend, states: LLMStates,
                 candidates: Candidates) -> None:
        self.store = store
        self.settings = settings
        self.backend = backend
        self.states = states
        self.candidates = candidates

    def apply(self, cand: Candidate, outcome: Outcome, report: LLMReport) -> None:
        report.requests += len(outcome.calls)
        for call in outcome.calls:
            report.usage.add(call.usage)
            cost = self._cost(call)
            report.cost_usd = None if cost is None or report.cost_usd is None else report.cost_usd + cost
        if outcome.kind == "ok" and outcome.fields is not None:
            self._apply_ok(cand, outcome, report)
            return
        with self.store.transaction():
            self.states.record_calls(cand.session_id, outcome.calls, self.backend.model)
            if outcome.kind in ("stopped", "requeue"):
                self.states.pending(cand.session_id, content_hash=cand.hash, error=outcome.error)
                report.left += outcome.kind == "stopped"
                report.outcomes[cand.session_id] = f"not extracted: {outcome.error}"
                return
            # A fallback keeps the handoff in place (the deterministic one for a new or changed session).
            self.states.fell_back(cand.session_id, cand.hash, outcome.kind, outcome.error)
        report.fallbacks += 1
        report.outcomes[cand.session_id] = f"kept the deterministic handoff ({outcome.kind}): {outcome.error}"
        log.warning("session %s kept its deterministic handoff (%s): %s", cand.session_id, outcome.kind,
                    outcome.error)

    def _apply_ok(self, cand: Candidate, outcome: Outcome, report: LLMReport) -> None:
        assert outcome.fields is not None
        fresh = self.candidates.current(cand.session_id)
        with self.store.transaction():
            self.states.record_calls(cand.session_id, outcome.calls, self.backend.model)
            if fresh is None or fresh.hash != cand.hash:
                # The session changed while the request was out: this answer describes an old version.
                self.states.pending(cand.session_id, content_hash=fresh.hash if fresh else "")
                report.outcomes[cand.session_id] = "changed during the request: pending again"
                return
            # The validated answer is stored first: a crash from here on is finished without a request.
            self.states.answer(cand.session_id, cand.hash, outcome.fields.model_dump_json())
        self.write(fresh, outcome.fields, outcome.model or self.backend.model)
        report.extracted += 1
        report.outcomes[cand.session_id] = f"extracted by {outcome.model or self.backend.model}"

    def restore(self, cand: Candidate, result: str, report: LLMReport) -> None:
        """Put back the answer stored for this content, with no request."""
        self.write(cand, HandoffFields.model_validate_json(result), self.backend.model)
        report.restored += 1

    def write(self, cand: Candidate, fields: HandoffFields, model: str) -> None:
        session = cand.session
        handoff = to_handoff(fields, session_id=session.session_id, short_id=session.short_id, date=session.date,
                             duration_min=session.duration_min, model=session.model,
                             cwd_projects=[p for p in session.projects if p])
        handoff.machine, handoff.agent = session.machine, session.agent  # the session's, whoever summarises it
        relpath = handoff_relpath(handoff)
        # Files first, row last, as ingest does: a crash in between is repaired by the next run.
        atomic_write(self.settings.handoffs_dir / relpath, handoff.to_markdown())
        with self.store.transaction():
            self.store.put_handoff(handoff, path=relpath.as_posix(), archive_path=session.archive_path,
                                   transcript=cand.markdown, ended_at=session.ended_at, extractor=f"llm:{model}")
            self.states.done(session.session_id)

    def _cost(self, call: Call) -> float | None:
        """What a call cost: as the backend reported it (Claude Code does), else at the model's list price."""
        if call.cost_usd is not None:
            return call.cost_usd
        return cost_usd(call.model or self.backend.model, call.usage, batch=call.mode == "batch")
