"""The Anthropic API as Eywa uses it: the official `anthropic` SDK with Eywa's own retry policy.

The SDK's built-in retries are turned off (`max_retries=0`) because Eywa needs what they do not give:
a configurable backoff base (tests wait milliseconds), a ceiling on how long a `retry-after` may make a
run wait, and errors sorted into "retry", "this request is wrong" and "stop the whole run".

- 429 (rate limit) and 529 (overloaded): wait at least the `retry-after` the API sends, and at least the
  backoff; a 429 for a spend limit stops the run (waiting would not help).
- 5xx, 408, 409, timeouts and connection errors: exponential backoff with jitter, up to `max_retries`.
- 401, 402, 403, 404 (an unknown model): `LLMStop`, the run stops with a message saying what to fix.
- other 4xx: `RequestRejected`, only this request is wrong.

`import anthropic` takes seconds, so it happens in `LLMClient.__init__`, and only a run that has a
session to send creates a client.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import logging
import random
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from eywa.core.errors import EywaError, LLMAuthError, LLMStop
from eywa.core.index.llm_tables import Usage

log = logging.getLogger("eywa.llm")

# 429 error codes that mean "your organisation hit a spending limit": retrying cannot succeed.
_SPEND_LIMIT_CODES = {"enforced_spend_limit_reached", "contract_spend_limit_reached"}
# Official prices in USD per million tokens (input, output), for prompts up to 100k tokens; cache writes
# cost 1.25x input, cache reads 0.1x input, the Batches API half of everything. Unknown models: no estimate.
PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "claude-haiku-5-5": (0.10, 0.50),
    "claude-sonnet-5-5": (2.0, 10.0),
    "claude-opus-5-5": (4.0, 20.0),
    "claude-fable-5-1": (10.0, 50.0),
}


class RequestRejected(EywaError):
    """A 4xx for this one request (its content or parameters); other requests may well succeed."""


class TransientFailure(EywaError):
    """429, 529, 5xx or timeouts went on through every retry."""


def cost_usd(model: str, usage: Usage, *, batch: bool = False) -> float | None:
    """What `usage` costs on `model`, or None when the model's price is not known here."""
    price = PRICES_PER_MTOK.get(model)
    if price is None:
        return None
    cost = (usage.input_tokens * price[0] + usage.cache_creation_input_tokens * price[0] * 1.25
            + usage.cache_read_input_tokens * price[0] * 0.1 + usage.output_tokens * price[1]) / 1e6
    return cost / 2 if batch else cost


@dataclass
class Answer:
    """One model reply: its content blocks as plain dicts (to send back in a follow-up turn as received)."""

    content: list[dict[str, Any]]
    stop_reason: str | None
    usage: Usage
    model: str = ""

    @classmethod
    def of(cls, message: Any) -> Answer:
        blocks = [block.model_dump(mode="json", exclude_none=True) for block in message.content]
        return cls(content=blocks, stop_reason=message.stop_reason, usage=Usage.of(message.usage),
                   model=str(message.model))


@dataclass
class BatchResult:
    custom_id: str
    kind: str  # succeeded | errored | canceled | expired
    answer: Answer | None = None
    error_type: str = ""
    error: str = ""


@dataclass
class BatchStatus:
    processing_status: str  # in_progress | canceling | ended
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def done(self) -> int:
        return sum(n for kind, n in self.counts.items() if kind != "processing")

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def parse_retry_after(headers: Any) -> float | None:
    """Seconds from `retry-after-ms` or `retry-after` (seconds or an HTTP date); None if absent."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            return max(0.0, float(raw) * scale)
        except ValueError:
            pass
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            continue
        return max(0.0, (when - dt.datetime.now(dt.UTC)).total_seconds())
    return None


class LLMClient:
    """One SDK client; thread-safe for concurrent `create` calls (the SDK's httpx client is)."""

    def __init__(self, *, api_key: str, base_url: str | None, model: str, timeout: float, max_retries: int,
                 backoff_base: float, max_wait: float, sleep: Callable[[float], None] = time.sleep,
                 jitter: Callable[[], float] = random.random) -> None:
        import anthropic  # deferred: seconds of imports, paid only by a run that sends something

        self._anthropic = anthropic
        # base_url None lets the SDK honour ANTHROPIC_BASE_URL; max_retries=0: the policy is ours (above).
        self._client = anthropic.Anthropic(api_key=api_key, base_url=base_url or None, timeout=timeout,
                                           max_retries=0)
        self._key = re.compile(re.escape(api_key), re.IGNORECASE) if api_key else None
        self.model = model
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.max_wait = max_wait
        self._sleep = sleep
        self._jitter = jitter

    # -- the retry policy ---------------------------------------------------------------------------
    def _backoff(self, attempt: int) -> float:
        # Jitter in [0.5, 1) of the exponential step, so concurrent workers do not retry in lockstep.
        return min(self.max_wait, self.backoff_base * 2**attempt * (0.5 + self._jitter() / 2))

    def _scrub(self, text: str) -> str:
        """An error text without the API key or any other secret: proxies quote the key they refuse."""
        from eywa.core.redaction.scrubber import default_redactor

        return default_redactor().redact(self._key.sub("<api key>", text) if self._key is not None else text)

    def _says(self, exc: Any) -> str:
        return self._scrub(_api_message(exc))

    def _call(self, what: str, fn: Callable[[], Any]) -> Any:
        a = self._anthropic
        for attempt in range(self.max_retries + 1):
            try:
                return fn()
            except a.AuthenticationError as exc:
                raise LLMAuthError(
                    f"the Anthropic API rejected the key (401 {self._says(exc)}): set ANTHROPIC_API_KEY or "
                    f"llm.api_key to a valid key; the deterministic handoffs stay until a run succeeds"
                ) from exc
            except (a.PermissionDeniedError, a.PaymentRequiredError) as exc:
                raise LLMStop(f"the Anthropic API refused {what} ({exc.status_code} {self._says(exc)}): check "
                              f"the account, its billing and the key's permissions") from exc
            except a.NotFoundError as exc:
                raise LLMStop(f"the Anthropic API does not know {what} (404 {self._says(exc)}): check "
                              f"llm.model and llm.base_url") from exc
            except (a.RateLimitError, a.OverloadedError) as exc:
                if exc.error_code in _SPEND_LIMIT_CODES:
                    raise LLMStop(f"the organisation's spend limit is reached (429 {self._says(exc)}): raise "
                                  f"it in the Anthropic console or wait; the run stops here") from exc
                asked = parse_retry_after(exc.response.headers)
                if asked is not None and asked > self.max_wait:
                    raise LLMStop(f"the Anthropic API asks to wait {asked:.0f}s ({exc.status_code} "
                                  f"{self._says(exc)}), more than llm.max_wait_seconds ({self.max_wait:.0f}s): "
                                  f"run again later, the rest is kept pending") from exc
                wait = max(asked or 0.0, self._backoff(attempt))
                failure: BaseException = exc
            except a.APIStatusError as exc:
                if exc.status_code < 500 and exc.status_code not in (408, 409):
                    raise RequestRejected(f"{exc.status_code} {self._says(exc)}") from exc
                wait, failure = self._backoff(attempt), exc
            except a.APIConnectionError as exc:  # also APITimeoutError
                wait, failure = self._backoff(attempt), exc
            except a.APIError as exc:  # an answer the SDK cannot read (a proxy's error page): not retried
                raise TransientFailure(f"{what}: {self._scrub(str(exc))}") from exc
            described = self._scrub(_describe(failure))
            if attempt == self.max_retries:
                raise TransientFailure(f"{what}: {described} after {attempt + 1} attempts") from failure
            log.info("%s: %s; retry %d of %d in %.2fs", what, described, attempt + 1, self.max_retries, wait)
            self._sleep(wait)
        raise AssertionError("unreachable")

    # -- messages -----------------------------------------------------------------------------------
    def create(self, params: dict[str, Any]) -> Answer:
        """One Messages API call with the retry policy."""
        what = f"model {params.get('model')}"
        message = self._call(what, lambda: self._client.messages.create(**params))
        try:
            return Answer.of(message)
        except (AttributeError, TypeError, ValueError) as exc:
            # A 200 whose body is not a message (an HTML page from a proxy, say): not a model answer at all.
            raise TransientFailure(f"{what}: the API's answer is not a message: {str(message)[:120]!r}") from exc

    def check_model(self) -> list[str]:
        """Warnings about the configured model (deprecated: its retirement date and the current models);
        raises `LLMStop` when the API knows no such model or it is retired."""
        try:
            info = self._call(f"model {self.model}", lambda: self._client.models.retrieve(self.model))
        except LLMAuthError:
            raise
        except (LLMStop, RequestRejected, TransientFailure) as exc:
            current = self._current_models()
            if current is None:  # an endpoint without a model list (a proxy): nothing to check against
                log.info("cannot check model %s: %s", self.model, exc)
                return self._offline_deprecation()
            if self.model not in current:
                raise LLMStop(f"llm.model {self.model!r} is not a model of this API; current models: "
                              f"{', '.join(current) or 'none listed'}") from exc
            return self._offline_deprecation()
        lifecycle = getattr(info, "lifecycle", "active")
        if lifecycle == "active":
            return self._offline_deprecation()
        models = ", ".join(self._current_models() or [])
        retires = getattr(info, "retires_at", None)
        when = f" on {retires.date().isoformat()}" if retires is not None else ""
        if lifecycle == "retired":
            raise LLMStop(f"llm.model {self.model!r} is retired and no longer answers; set llm.model to a current "
                          f"model: {models}")
        return [f"llm.model {self.model!r} is deprecated and retires{when}; set llm.model to a current model "
                f"before then: {models}"]

    def _current_models(self) -> list[str] | None:
        try:
            listed = self._call("the model list", lambda: list(self._client.models.list(limit=100)))
        except (LLMStop, RequestRejected, TransientFailure):
            return None
        return [m.id for m in listed if getattr(m, "lifecycle", "active") == "active"]

    def _offline_deprecation(self) -> list[str]:
        # The SDK ships its own table of deprecated ids (it warns from inside each create call, as a
        # DeprecationWarning nobody sees); read it so the warning comes at the start of the run.
        try:
            from anthropic._data import DEPRECATED_MODELS
        except ImportError:
            return []
        retires = DEPRECATED_MODELS.get(self.model)
        if retires is None:
            return []
        return [f"llm.model {self.model!r} is deprecated and reaches end of life on {retires} (the anthropic "
                f"SDK's list); set llm.model to a current model such as claude-haiku-5-5"]

    # -- message batches ----------------------------------------------------------------------------
    def create_batch(self, requests: list[dict[str, Any]]) -> str:
        batch = self._call("a message batch", lambda: self._client.messages.batches.create(requests=requests))  # type: ignore[arg-type]  # dicts of Request's shape
        return str(batch.id)

    def batch_status(self, batch_id: str) -> BatchStatus:
        batch = self._call(f"batch {batch_id}", lambda: self._client.messages.batches.retrieve(batch_id))
        counts = batch.request_counts
        return BatchStatus(batch.processing_status, {
            kind: int(getattr(counts, kind, 0) or 0)
            for kind in ("processing", "succeeded", "errored", "canceled", "expired")
        })

    def batch_results(self, batch_id: str) -> Iterator[BatchResult]:
        lines = self._call(f"results of batch {batch_id}",
                           lambda: list(self._client.messages.batches.results(batch_id)))
        for line in lines:
            result = line.result
            if result.type == "succeeded":
                yield BatchResult(line.custom_id, "succeeded", answer=Answer.of(result.message))
            elif result.type == "errored":
                error = getattr(result.error, "error", None)
                yield BatchResult(line.custom_id, "errored", error_type=str(getattr(error, "type", "")),
                                  error=str(getattr(error, "message", "")))
            else:
                yield BatchResult(line.custom_id, str(result.type))


def _api_message(exc: Any) -> str:
    kind = getattr(exc, "type", None) or ""
    message = getattr(exc, "api_message", None) or str(exc)
    return f"{kind}: {message}" if kind else message


def _describe(exc: BaseException) -> str:
    status = getattr(exc, "status_code", None)
    if status is not None:
        return f"{status} {_api_message(exc)}"
    return type(exc).__name__ + (f": {exc}" if str(exc) else "")
