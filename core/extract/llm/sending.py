"""The send loop: one request per session, `llm.concurrency` at once on worker threads, each reserved
against the spending caps first. The run stops on an error that stops it (the backend keeps failing, three
rejections in a row, a cap); every answer already paid for is kept, even when interrupted."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from eywa.core.config.settings import LLMSettings
from eywa.core.errors import LLMStop
from eywa.core.extract.llm.backend import Backend, Outcome
from eywa.core.extract.llm.budget import Budget
from eywa.core.extract.llm.candidates import Candidate
from eywa.core.extract.llm.outcomes import Outcomes
from eywa.core.extract.llm.report import LLMReport, Progress

REJECTED_IN_A_ROW = 3  # this many rejections in a row point at the settings, not the sessions


class Sender:
    def __init__(self, cfg: LLMSettings, backend: Backend, outcomes: Outcomes, start: Callable[[], None],
                 budget: Callable[[], Budget]) -> None:
        self.cfg = cfg
        self.backend = backend
        self.outcomes = outcomes
        self._start = start
        self._budget = budget

    def send(self, cands: list[Candidate], report: LLMReport, progress: Progress | None) -> None:
        if not cands:
            return
        try:
            self._start()
        except LLMStop as exc:
            report.stopped, report.left = str(exc), len(cands)
            return
        budget = self._budget()
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
                reserve = budget.reservation(cand)
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
                    self.outcomes.apply(cand, outcome, report)
                    if outcome.kind == "stopped":
                        stop = stop or outcome.error
                    elif outcome.kind == "transient":
                        stop = stop or f"{self.backend.label} keeps failing ({outcome.error}); run again later"
                    rejected_in_a_row = rejected_in_a_row + 1 if outcome.kind == "rejected" else 0
                    if rejected_in_a_row >= REJECTED_IN_A_ROW:
                        stop = stop or (f"{self.backend.label} rejected {rejected_in_a_row} requests in a row "
                                        f"({outcome.error}): check the llm settings")
                    finished += 1
                    if progress is not None:
                        progress(finished, len(cands), cand.session_id)
                fill()
        except BaseException:
            # Interrupted (Ctrl-C, a progress callback that raised): keep every answer already paid for.
            pool.shutdown(wait=True, cancel_futures=True)
            for future, (cand, _) in inflight.items():
                if future.done() and not future.cancelled() and future.exception() is None:
                    self.outcomes.apply(cand, future.result(), report)
            raise
        pool.shutdown(wait=True)
        report.left += sum(1 for _ in queue)
        if stop:
            report.stopped = stop
