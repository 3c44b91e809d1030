"""The `anthropic` backend: the Messages API through the SDK (core/extract/llm/anthropic_client.py), with an API key.

The handoff is a forced tool call (`record_handoff`); an invalid answer gets one more turn with the
validation error, then the session keeps its deterministic handoff. The Message Batches API is this
backend's alone (`eywa extract --all --batch`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from eywa.core.errors import LLMStop
from eywa.core.extract.llm.anthropic_client import Answer, LLMClient, RequestRejected, TransientFailure
from eywa.core.extract.llm.backend import Call, Outcome, api_key
from eywa.core.extract.llm.prompt import InvalidAnswer, Refused, build_params, parse_answer, retry_params

if TYPE_CHECKING:
    from eywa.core.config.settings import Settings

log = logging.getLogger("eywa.llm")


class AnthropicBackend:
    name = "anthropic"
    label = "the Anthropic API"

    def __init__(self, settings: Settings, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.settings = settings
        self.cfg = settings.llm
        self.model = self.cfg.model
        self._sleep = sleep
        self._client: LLMClient | None = None
        self._lock = threading.Lock()

    def client(self) -> LLMClient:
        """The API client, created on first use (its import costs seconds)."""
        with self._lock:
            if self._client is None:
                key = api_key(self.settings)
                if not key:
                    raise LLMStop("no Anthropic API key: set ANTHROPIC_API_KEY or llm.api_key")
                self._client = LLMClient(
                    api_key=key, base_url=self.cfg.base_url or None, model=self.cfg.model,
                    timeout=self.cfg.timeout_seconds, max_retries=self.cfg.max_retries,
                    backoff_base=self.cfg.backoff_base_seconds, max_wait=self.cfg.max_wait_seconds,
                    sleep=self._sleep)
            return self._client

    def start(self) -> list[str]:
        """The model check: a deprecated model is named here, at the start of the run."""
        warnings = self.client().check_model()
        for warning in warnings:
            log.warning("%s", warning)
        return warnings

    def params(self, content: str) -> dict[str, Any]:
        """The request of one session (`messages.create` keyword arguments, a batch item's `params`)."""
        return build_params(self.cfg.model, self.cfg.max_tokens, self.cfg.temperature, content)

    def extract(self, content: str) -> Outcome:
        calls: list[Call] = []
        params = self.params(content)
        try:
            answer = self.client().create(params)
            return self.read(params, answer, calls, "sync")
        except LLMStop as exc:  # calls already made keep their usage rows
            return Outcome("stopped", calls, error=str(exc))
        except RequestRejected as exc:
            return Outcome("rejected", calls, error=str(exc))
        except TransientFailure as exc:
            return Outcome("transient", calls, error=str(exc))

    def read(self, params: dict[str, Any], answer: Answer, calls: list[Call], mode: str) -> Outcome:
        """The outcome of `answer`; an invalid one gets its second try here, as a direct request."""
        try:
            fields = parse_answer(answer)
        except Refused as exc:
            calls.append(Call(answer.usage, "refused", mode))
            return Outcome("refused", calls, error=str(exc))
        except InvalidAnswer as exc:
            calls.append(Call(answer.usage, "invalid", mode))
            first = str(exc)
        else:
            calls.append(Call(answer.usage, "ok", mode))
            return Outcome("ok", calls, fields=fields, model=answer.model)
        second = self.client().create(retry_params(params, answer, first))
        try:
            fields = parse_answer(second)
        except InvalidAnswer as exc:
            calls.append(Call(second.usage, "invalid"))
            return Outcome("invalid", calls, error=f"{first}; on the second try: {exc}")
        calls.append(Call(second.usage, "ok"))
        return Outcome("ok", calls, fields=fields, model=second.model)
