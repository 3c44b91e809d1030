"""The `claude-code` backend: the user's own Claude Code CLI as the extraction engine, for people signed in
with a Claude subscription rather than an API key.

One session is one headless run: `claude -p --model <llm.claude_code_model> --json-schema <the handoff
schema> --output-format json --no-session-persistence`, the transcript on stdin, Eywa's system prompt
in place of Claude Code's, no tools, no MCP servers, no slash commands, no CLAUDE.md and no auto-memory,
in an empty temporary working directory, and no hooks at all (`disableAllHooks`): an extraction must
never fire the user's or Eywa's own SessionStart/SessionEnd hooks, nor write a transcript that Eywa
would ingest again. The CLI offers
the schema as its StructuredOutput tool and gives a schema mismatch one more try itself
(MAX_STRUCTURED_OUTPUT_RETRIES=2, the API backend's rule); usage and cost come from its result JSON.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eywa.core.errors import LLMStop
from eywa.core.extract.llm.backend import Call, Outcome
from eywa.core.extract.llm.prompt import SYSTEM_PROMPT, InvalidAnswer, answer_schema, read_fields
from eywa.core.index.llm_tables import Usage

if TYPE_CHECKING:
    from eywa.core.config.settings import Settings

# Only hooks off: the user's permissions, apiKeyHelper and model settings still apply.
NO_HOOKS = '{"disableAllHooks": true}'
_SIGNED_OUT_RE = re.compile(r"not logged in|/login|invalid api key|oauth token (?:has )?(?:expired|revoked)|"
                            r"authentication", re.IGNORECASE)
_QUOTA_RE = re.compile(r"usage limit|hit your limit|out of (?:extra )?usage|credit balance|quota|spend limit",
                       re.IGNORECASE)


@dataclass(frozen=True)
class AuthStatus:
    signed_in: bool
    detail: str  # "signed in with a Claude subscription (max)", "authMethod none", why it could not be asked


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    # No update checks, telemetry or other traffic a one-shot extraction does not need.
    return {**os.environ, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
            **(extra or {})}


def auth_status(cli: str, timeout: float = 20) -> AuthStatus:
    """`claude auth status`: whether the CLI is signed in, read from its JSON (no network call)."""
    try:
        done = subprocess.run([cli, "auth", "status", "--json"], capture_output=True, text=True, timeout=timeout,
                              env=_env(), stdin=subprocess.DEVNULL)
        data = json.loads(done.stdout)
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
        return AuthStatus(False, f"`{cli} auth status` did not answer: {type(exc).__name__}")
    if not isinstance(data, dict) or not data.get("loggedIn"):
        return AuthStatus(False, f"authMethod {data.get('authMethod', 'none') if isinstance(data, dict) else '?'}")
    method = str(data.get("authMethod", ""))
    if method == "claude.ai":
        plan = data.get("subscriptionType")
        return AuthStatus(True, "signed in with a Claude subscription" + (f" ({plan})" if plan else ""))
    return AuthStatus(True, f"signed in with {method.replace('_', ' ') or 'a credential'}")


class ClaudeCodeBackend:
    name = "claude-code"
    label = "Claude Code"

    def __init__(self, settings: Settings, cli: str) -> None:
        self.cfg = settings.llm
        self.cli = cli
        self.model = f"claude-code:{self.cfg.claude_code_model}"
        self._schema = json.dumps(answer_schema(), separators=(",", ":"))

    def start(self) -> list[str]:
        if not Path(self.cli).exists():
            raise LLMStop(f"the Claude Code CLI {self.cli} is gone: install it again or set llm.backend")
        status = auth_status(self.cli)
        if not status.signed_in:
            raise LLMStop(f"Claude Code is not signed in ({status.detail}): run `claude` and /login; the "
                          f"deterministic handoffs stay until then")
        return []

    def command(self) -> list[str]:
        return [self.cli, "-p", "--model", self.cfg.claude_code_model, "--output-format", "json",
                "--json-schema", self._schema, "--no-session-persistence", "--settings", NO_HOOKS,
                "--tools", "", "--strict-mcp-config", "--disable-slash-commands", "--system-prompt", SYSTEM_PROMPT]

    def extract(self, content: str) -> Outcome:
        calls: list[Call] = []
        errors: list[str] = []
        note = ""
        try:
            for _ in range(2):  # an answer the CLI's schema check passed but Eywa refused: one more run, told why
                answer = self._run(content + note, calls)
                try:
                    return Outcome("ok", calls, fields=read_fields(answer), model=calls[-1].model)
                except InvalidAnswer as exc:
                    calls[-1].outcome = "invalid"
                    errors.append(str(exc))
                    note = (f"\n\nA handoff given for this session before was not accepted: {exc}. Give the "
                            f"complete handoff again, every field valid.")
            return Outcome("invalid", calls, error="; on the second try: ".join(errors))
        except _Failed as failed:
            if failed.kind == "refused" and calls:
                calls[-1].outcome = "refused"
            return Outcome(failed.kind, calls, error=failed.message)
        except LLMStop as exc:
            return Outcome("stopped", calls, error=str(exc))

    def _run(self, content: str, calls: list[Call]) -> Any:
        """One CLI run; its structured output. Its usage is appended to `calls`, whatever came of it."""
        # The user's CLAUDE.md files must not steer a handoff, nor an extraction write to Claude's memory.
        env = _env({"MAX_STRUCTURED_OUTPUT_RETRIES": "2", "CLAUDE_CODE_MAX_RETRIES": str(self.cfg.max_retries),
                    "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1", "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"})
        with tempfile.TemporaryDirectory(prefix="eywa-extract-") as cwd:
            try:
                process = subprocess.Popen(self.command(), cwd=cwd, env=env, stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                           start_new_session=True)
            except OSError as exc:
                raise LLMStop(f"cannot run the Claude Code CLI {self.cli}: {exc.strerror or exc}") from exc
            try:
                stdout, stderr = process.communicate(content, timeout=self.cfg.timeout_seconds)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)  # the CLI and anything it started
                process.communicate()
                raise _Failed("transient", f"Claude Code gave no answer within llm.timeout_seconds "
                                           f"({self.cfg.timeout_seconds:g}s)") from None
        try:
            result = json.loads(stdout)
        except json.JSONDecodeError:
            said = (stderr.strip() or stdout.strip())[-300:]
            raise _Failed("transient", f"Claude Code exited with code {process.returncode} and no result: "
                                       f"{said!r}") from None
        if not isinstance(result, dict):
            raise _Failed("transient", f"Claude Code's result is not a JSON object: {stdout[:120]!r}")
        call = _call(result)
        calls.append(call)
        answer = _structured_output(result)
        call.outcome = "ok"
        return answer


class _Failed(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind, self.message = kind, message


def _call(result: dict[str, Any]) -> Call:
    usage = got if isinstance(got := result.get("usage"), dict) else {}
    models = got if isinstance(got := result.get("modelUsage"), dict) else {}
    cost = result.get("total_cost_usd")
    tokens = [int(usage.get(name) or 0) for name in
              ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
    return Call(Usage(*tokens), "invalid", cost_usd=float(cost) if isinstance(cost, int | float) else None,
                model=next(iter(models), ""))


def _structured_output(result: dict[str, Any]) -> Any:
    """The answer of a result, or the failure it reports, sorted as the API backend sorts them."""
    if not result.get("is_error") and "structured_output" in result:
        return result["structured_output"]
    said = " ".join(str(e) for e in result.get("errors") or []) or str(result.get("result") or "")
    said = said.strip()[:300] or f"{result.get('subtype')} / {result.get('terminal_reason')}"
    status = result.get("api_error_status")
    quota = LLMStop(f"Claude Code is out of quota ({said}): the run stops here and the rest waits for a later run")
    if status == 429:
        raise quota
    if status in (401, 403) or _SIGNED_OUT_RE.search(said):
        raise LLMStop(f"Claude Code is signed out or its credential is refused ({said}): run `claude` and "
                      f"/login; the deterministic handoffs stay until then")
    if _QUOTA_RE.search(said):
        raise quota
    if result.get("stop_reason") == "refusal":
        raise _Failed("refused", f"the model declined to summarise this session: {said}")
    if str(result.get("subtype", "")).startswith("error_max") or not result.get("is_error"):
        # The CLI's own second try failed too, or it answered without the structured output.
        raise _Failed("invalid", f"no valid handoff from Claude Code: {said}")
    raise _Failed("transient", f"Claude Code failed: {said}" + (f" (API status {status})" if status else ""))
