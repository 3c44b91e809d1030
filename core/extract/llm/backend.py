"""The LLM backends behind one small interface, and the choice `llm.backend` makes between them.

- `anthropic` (core/extract/llm/anthropic_backend.py): the Messages API through the `anthropic` SDK, with an API key.
- `claude-code` (core/extract/llm/cli_backend.py): the user's own Claude Code CLI, headless, signed in with
  whatever it is signed in with (a Claude subscription, most often).
- `deterministic`: no LLM at all.

`auto` (the default) takes the API key when one is set, else a Claude Code CLI that is installed and
signed in, else the deterministic extractor. core/extract/llm/run.py sends sessions through whichever backend is
chosen and keeps everything else (state, caps, the content hash, concurrency) the same for both.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from eywa.core.index.llm_tables import Usage

if TYPE_CHECKING:
    from eywa.core.config.settings import Settings
    from eywa.core.extract.llm.prompt import HandoffFields

BACKENDS = ("auto", "anthropic", "claude-code", "deterministic")


@dataclass
class Call:
    """One paid request: its usage, what came of it, and its cost when the backend reports one."""

    usage: Usage
    outcome: str  # ok | invalid | refused
    mode: str = "sync"  # sync | batch
    cost_usd: float | None = None  # None: priced from the model's list price
    model: str = ""  # the model that answered, when the backend says


@dataclass
class Outcome:
    kind: str  # ok | invalid | refused | rejected | transient | stopped | requeue
    calls: list[Call] = field(default_factory=list)
    fields: HandoffFields | None = None
    error: str = ""
    model: str = ""


class Backend(Protocol):
    """What the LLM pass needs of a backend."""

    name: str  # anthropic | claude-code
    model: str  # the configured model, as the content hash and the usage rows name it
    label: str  # for messages: "the Anthropic API", "Claude Code"

    def start(self) -> list[str]:
        """Checks before the first request of a run (the model, the sign-in); warnings to show. Raises
        `LLMStop` when nothing can be sent."""
        ...

    def extract(self, content: str) -> Outcome:
        """One session's handoff from its prompt `content`, with the one second try an invalid answer gets
        (called on worker threads, `llm.concurrency` at once)."""
        ...


@dataclass(frozen=True)
class Choice:
    """Which backend extracts, and why, in one line for the log, `eywa stats` and the bot's /status."""

    backend: str  # anthropic | claude-code | deterministic
    reason: str
    cli: str = ""  # the Claude Code executable, for claude-code

    @property
    def active(self) -> bool:
        return self.backend != "deterministic"


def api_key(settings: Settings) -> str:
    """The configured key, else ANTHROPIC_API_KEY; "" when there is none."""
    return settings.llm.api_key.get_secret_value().strip() or os.environ.get("ANTHROPIC_API_KEY", "").strip()


def find_cli(command: str) -> str | None:
    """The Claude Code executable: `command` as a path, or looked up on PATH."""
    if os.sep in command:
        path = Path(command).expanduser()
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    return shutil.which(command)


def choose_backend(settings: Settings) -> Choice:
    """The backend `llm.backend` names, or for `auto` the first that can work: the API key, a signed-in
    Claude Code CLI, the deterministic extractor. Asks the CLI (`claude auth status`, no network) only
    when it might be chosen."""
    wanted = settings.llm.backend
    if wanted == "deterministic":
        return Choice("deterministic", "llm.backend is deterministic")
    if not settings.llm.enabled:
        return Choice("deterministic", "llm.enabled is false")
    if api_key(settings) and wanted in ("auto", "anthropic"):
        return Choice("anthropic", f"the Anthropic API with an API key, model {settings.llm.model}")
    if wanted == "anthropic":
        return Choice("deterministic", "llm.backend is anthropic but no API key is set (ANTHROPIC_API_KEY or "
                                       "llm.api_key)")
    why = "no API key and " if wanted == "auto" else "llm.backend is claude-code but "
    cli = find_cli(settings.llm.claude_code_command)
    if cli is None:
        return Choice("deterministic", f"{why}no Claude Code CLI ({settings.llm.claude_code_command!r} is not "
                                       f"on PATH; llm.claude_code_command names it)")
    # Imported only with a CLI to ask: cli_backend imports the prompt and the handoff model, a tenth of a
    # second that an ingest without a backend never needs.
    from eywa.core.extract.llm.cli_backend import auth_status

    status = auth_status(cli)
    if not status.signed_in:
        return Choice("deterministic", f"{why}Claude Code is not signed in ({status.detail}): run `claude` "
                                       f"and /login", cli)
    return Choice("claude-code", f"Claude Code ({status.detail}), model {settings.llm.claude_code_model}", cli)


class NoBackend:
    """The deterministic choice: nothing is sent, and a run that would send says why."""

    name = "deterministic"
    label = "no LLM"

    def __init__(self, reason: str) -> None:
        self.model = ""
        self._reason = reason

    def start(self) -> list[str]:
        from eywa.core.errors import LLMStop

        raise LLMStop(f"no LLM backend: {self._reason}")

    def extract(self, content: str) -> Outcome:
        return Outcome("stopped", error=f"no LLM backend: {self._reason}")


def open_backend(choice: Choice, settings: Settings, *, sleep: Callable[[float], None]) -> Backend:
    """The backend of `choice`, ready to start (nothing is imported, run or sent until a run starts)."""
    if choice.backend == "anthropic":
        from eywa.core.extract.llm.anthropic_backend import AnthropicBackend

        return AnthropicBackend(settings, sleep=sleep)
    if choice.backend == "claude-code":
        from eywa.core.extract.llm.cli_backend import ClaudeCodeBackend

        return ClaudeCodeBackend(settings, choice.cli)
    return NoBackend(choice.reason)
