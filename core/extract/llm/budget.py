"""The spending caps (`llm.tokens_per_run`, `llm.tokens_per_day` per UTC day), and what a backfill would
send and cost before anything is sent."""

from __future__ import annotations

from dataclasses import dataclass

from eywa.core.config.settings import LLMSettings
from eywa.core.extract.llm.anthropic_client import cost_usd
from eywa.core.extract.llm.candidates import Backlog, Candidate
from eywa.core.index.llm_tables import Usage

EXPECTED_OUTPUT_TOKENS = 700  # a typical handoff answer, for estimates (max_tokens is the ceiling)


class Budget:
    """Tokens reserved before a request (its prompt and the answer's ceiling), settled after by its usage."""

    def __init__(self, cfg: LLMSettings, used_today: int) -> None:
        self.per_run, self.per_day, self.used_today = cfg.tokens_per_run, cfg.tokens_per_day, used_today
        self.max_tokens = cfg.max_tokens
        self.used_run = 0
        self.reserved = 0

    def reservation(self, cand: Candidate) -> int:
        return cand.est_input + self.max_tokens

    def reserve(self, tokens: int) -> str | None:
        """None when the tokens fit (and are reserved), else why not."""
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

    @classmethod
    def of(cls, backlog: Backlog, budget: Budget, model: str) -> Plan:
        cands = backlog.candidates
        return cls(
            candidates=cands, restore=backlog.restore, unchanged=backlog.unchanged, waiting=backlog.waiting,
            failed=backlog.failed, batched=backlog.batched, input_tokens=sum(c.est_input for c in cands),
            expected_output_tokens=len(cands) * min(EXPECTED_OUTPUT_TOKENS, budget.max_tokens),
            max_output_tokens=len(cands) * budget.max_tokens, model=model,
            fits=sum(1 for c in cands if budget.reserve(budget.reservation(c)) is None),
        )

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
