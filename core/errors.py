"""The exceptions front ends catch, defined once; pydantic-free, so the hooks' light path can raise them too.
Each message is meant for the user: it says what went wrong and what to do."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from eywa.core.retrieval.recall import HandoffRecord


class EywaError(Exception):
    """The base of every error Eywa raises for a person to read: a front end catches this one name."""


class ConfigError(EywaError):
    """A setting is invalid or the config file cannot be used."""


class LightConfigError(ConfigError):
    """A setting the hooks or `eywa get` need cannot be read (core/config/light.py); hooks fail open on it."""


class StoreError(EywaError, RuntimeError):
    """The index (or another of Eywa's SQLite files) cannot be opened or used."""


class NotFound(EywaError, LookupError):
    """No handoff (or transcript) has that id."""


class AmbiguousId(EywaError, LookupError):
    """Several handoffs share that prefix; `candidates` lists them."""

    def __init__(self, prefix: str, candidates: list[HandoffRecord]) -> None:
        listed = "\n".join(f"  {c.session_id}  {c.date}  {c.headline}" for c in candidates)
        super().__init__(f"'{prefix}' matches {len(candidates)} handoffs; give more characters:\n{listed}")
        self.candidates = candidates


class IngestError(EywaError, RuntimeError):
    """Ingest cannot start."""


class LaunchError(EywaError, RuntimeError):
    """A Claude Code session could not be started or looked at."""


class PushError(EywaError, RuntimeError):
    """`eywa push` cannot run or failed."""


class ServiceError(EywaError, RuntimeError):
    """The service cannot be installed here."""


class LLMStop(EywaError, RuntimeError):
    """The LLM run cannot go on (bad key, unknown model, spend limit, the API unavailable). Sessions not yet
    extracted stay pending and a later run resumes them."""


class LLMAuthError(LLMStop):
    """401: the key is missing, wrong or revoked."""
