"""The Message Batches API (half price, Anthropic API only): submit the sessions that fit the spending
caps as one batch, wait for it, collect its results into handoffs. A batch is recorded before its
sessions are marked batched, so one left by a crash or a restart is collected by a later run."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

from eywa.core.config.settings import LLMSettings
from eywa.core.errors import LLMStop
from eywa.core.extract.llm.anthropic_backend import AnthropicBackend
from eywa.core.extract.llm.anthropic_client import RequestRejected, TransientFailure
from eywa.core.extract.llm.backend import Backend, Call, Outcome
from eywa.core.extract.llm.budget import Budget
from eywa.core.extract.llm.candidates import Candidate, Candidates
from eywa.core.extract.llm.lifecycle import LLMStates
from eywa.core.extract.llm.outcomes import Outcomes
from eywa.core.extract.llm.report import LLMReport, Progress
from eywa.core.index.llm_tables import BatchItem

log = logging.getLogger("eywa.llm")
_CUSTOM_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # what the API accepts as a custom_id


class Batches:
    def __init__(self, cfg: LLMSettings, backend: Backend, states: LLMStates, candidates: Candidates,
                 outcomes: Outcomes, *, start: Callable[[], None], budget: Callable[[], Budget],
                 sleep: Callable[[float], None]) -> None:
        self.cfg = cfg
        self.backend = backend
        self.states = states
        self.candidates = candidates
        self.outcomes = outcomes
        self._start = start
        self._budget = budget
        self._sleep = sleep

    def backend_with_batches(self) -> AnthropicBackend:
        """The backend that has the Message Batches API: only the Anthropic API has one."""
        if not isinstance(self.backend, AnthropicBackend):
            raise LLMStop(f"--batch needs the Anthropic API (llm.backend anthropic, with a key); {self.backend.label} "
                          f"has no batches")
        self._start()
        return self.backend

    def unfinished(self) -> int:
        """How many batches a previous run left uncollected."""
        return len(self.states.batch_ids())

    def send(self, cands: list[Candidate], report: LLMReport, progress: Progress | None) -> None:
        try:
            backend = self.backend_with_batches()
            client = backend.client()
            self.resume(report, block=True, progress=progress)
        except LLMStop as exc:
            report.stopped, report.left = str(exc), len(cands)
            return
        budget = self._budget()
        chosen: list[Candidate] = []
        for cand in cands:
            if budget.reserve(budget.reservation(cand)) is not None:
                report.left = len(cands) - len(chosen)
                report.stopped = (f"spending cap: {len(chosen)} of {len(cands)} sessions fit in llm.tokens_per_run "
                                  f"and llm.tokens_per_day; the rest wait for a later run")
                break
            chosen.append(cand)
        if not chosen:
            return
        items: dict[str, BatchItem] = {}
        requests = []
        for cand in chosen:
            custom_id = cand.session_id if _CUSTOM_ID_RE.match(cand.session_id) else cand.hash[:40]
            items[custom_id] = BatchItem(cand.session_id, cand.hash)
            params = backend.params(cand.content)
            params.update(params.pop("extra_body", {}))  # a batch request's params are the JSON body itself
            requests.append({"custom_id": custom_id, "params": params})
        try:
            batch_id = client.create_batch(requests)
        except (LLMStop, RequestRejected, TransientFailure) as exc:
            report.stopped, report.left = f"cannot create the batch: {exc}", len(cands)
            return
        self.states.add_batch(batch_id, self.cfg.model, items)
        log.info("created batch %s with %d requests", batch_id, len(chosen))
        self._await(batch_id, report, block=True, progress=progress)

    def resume(self, report: LLMReport, *, block: bool, progress: Progress | None = None) -> None:
        """Collect the batches a previous run left: waiting for them (`block`), or only those ended."""
        batch_ids = self.states.batch_ids()
        if batch_ids and not isinstance(self.backend, AnthropicBackend):
            report.warnings.append(f"{len(batch_ids)} message batch(es) wait for the Anthropic API backend")
            return
        for batch_id in batch_ids:
            try:
                self._await(batch_id, report, block=block, progress=progress)
            except (RequestRejected, TransientFailure) as exc:
                report.warnings.append(f"batch {batch_id} cannot be read now ({exc}); a later run tries again")

    def _await(self, batch_id: str, report: LLMReport, *, block: bool, progress: Progress | None) -> bool:
        backend = self.backend_with_batches()
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
        self._collect(backend, batch_id, report)
        return True

    def _collect(self, backend: AnthropicBackend, batch_id: str, report: LLMReport) -> None:
        client = backend.client()
        items = self.states.batch_items(batch_id)
        states = self.states.all()
        for result in client.batch_results(batch_id):
            if result.custom_id not in items:
                continue
            item = items[result.custom_id]
            state = states.get(item.session_id)
            if state is None or state.status != "batched" or state.batch_id != batch_id:
                continue  # collected before a restart
            cand = self.candidates.current(item.session_id)
            if cand is None:
                continue
            if result.kind == "succeeded" and result.answer is not None:
                if cand.hash != item.content_hash:
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
            self.outcomes.apply(cand, outcome, report)
        self.states.close_batch(batch_id)
