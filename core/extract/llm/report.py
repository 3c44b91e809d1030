"""What one LLM run tells its caller: progress while it goes, and the report at the end (also kept in the
index's meta as the last run, for `eywa stats`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from eywa.core.config.clock import now
from eywa.core.index.llm_tables import Usage

Progress = Callable[[int, int, str], None]  # (done, total, the session or batch just finished)


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
