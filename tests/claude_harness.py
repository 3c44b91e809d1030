"""The real Claude Code CLI in the tests: a scripted model on 127.0.0.1 and a runner for `claude -p`.

`ScriptedModel` is tests/fake_anthropic.py's server (the Messages API, validated as the real one validates,
streamed as SSE when asked) answering Claude Code's `POST /v1/messages?beta=true` from a script: each
conversation is named by a marker, a piece of text of the prompt it answers (the user's prompt, a subagent's
task, a `<task-notification>`, the compaction instruction), and holds the model's turns in order. Which turn
answers a request is read off the request itself (the assistant turns since that prompt), so concurrent
conversations (a background subagent beside its parent) and resumed sessions are answered deterministically.

`ClaudeCode` runs the pinned CLI (`tests.tools.agent_cli("claude")`) in a throwaway HOME against the model,
with the environment that keeps it on loopback; `eywa` on its PATH is this checkout's, its data directory
and projects folder inside that HOME, its LLM extraction off (`eywa_settings`). Nothing touches the real
~/.claude or ~/.eywa.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.fake_anthropic import FakeAnthropic, Reply
from tests.tools import AGENT_CLIS, agent_cli, encoded_cwd

API_KEY = "sk-ant-harness-0000"
CLI_VERSION: str = json.loads((AGENT_CLIS / "package.json").read_text())["dependencies"]["@anthropic-ai/claude-code"]
COMPACT_MARKER = "Your task is to create a detailed summary of the conversation so far"  # /compact's request
_REMINDER = "<system-reminder>"
_NOTIFICATION = "<task-notification>"


def text(words: str) -> dict[str, Any]:
    """A text block of a scripted turn."""
    return {"type": "text", "text": words}


def tool(name: str, tool_input: dict[str, Any], tool_id: str | None = None) -> dict[str, Any]:
    """A tool_use block of a scripted turn (the id is made when not given)."""
    return {"type": "tool_use", "name": name, "input": tool_input, **({"id": tool_id} if tool_id else {})}


Turn = str | dict[str, Any] | list[dict[str, Any]] | Reply


def _reply(turn: Turn) -> Reply:
    if isinstance(turn, Reply):
        return turn
    if isinstance(turn, str):
        return Reply(blocks=[text(turn)])
    return Reply(blocks=[turn] if isinstance(turn, dict) else list(turn))


def _texts(content: object) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return []


def prompt_of(request: dict[str, Any]) -> tuple[str, int]:
    """The prompt a request answers (the last user turn with text of its own, reminders left out) and how
    many assistant turns came since it."""
    messages = [m for m in request.get("messages", []) if m.get("role") in ("user", "assistant")]
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        content = message.get("content")
        if message["role"] != "user" or (isinstance(content, list) and
                                         any(b.get("type") == "tool_result" for b in content)):
            continue  # text beside tool results is the CLI's ("Tool loaded."), not a prompt
        # A background run's notification comes wrapped in a reminder, but it is the prompt of its turn.
        own = [t for t in _texts(content)
               if t.strip() and (not t.lstrip().startswith(_REMINDER) or _NOTIFICATION in t)]
        if own:
            after = sum(1 for m in messages[index + 1:] if m["role"] == "assistant")
            return "\n".join(own), after
    return "", sum(1 for m in messages if m["role"] == "assistant")


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of a request's last user turn."""
    for message in reversed(request.get("messages", [])):
        if message.get("role") == "user" and isinstance(message.get("content"), list):
            return [b for b in message["content"] if b.get("type") == "tool_result"]
        if message.get("role") == "assistant":
            break
    return []


def result_text(block: dict[str, Any]) -> str:
    """A tool_result's text, as the model reads it."""
    return "\n".join(_texts(block.get("content")))


class ScriptedModel:
    """The model Claude Code talks to: scripted conversations, every request kept."""

    def __init__(self) -> None:
        self.api = FakeAnthropic(API_KEY)
        self.api.responder = self._respond
        self.base_url = self.api.base_url
        self._conversations: list[tuple[str, list[Turn]]] = []
        self.unscripted: list[str] = []  # prompts no conversation matched (answered "Done.")
        self._lock = threading.Lock()

    def close(self) -> None:
        self.api.close()

    def on(self, marker: str, *turns: Turn) -> None:
        """Answer the prompt containing `marker` with `turns`, one a request; the newest marker wins.
        After the last turn the conversation ends with "Done."."""
        with self._lock:
            self._conversations.insert(0, (marker, list(turns)))

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every Messages request Claude Code sent, in order."""
        return self.api.message_requests

    def requests_for(self, marker: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if marker in prompt_of(r)[0]]

    def _respond(self, request: dict[str, Any]) -> Reply:
        prompt, step = prompt_of(request)
        with self._lock:
            turns = next((t for marker, t in self._conversations if marker in prompt), None)
            if turns is None:
                self.unscripted.append(prompt)
        if turns is None or step >= len(turns):
            return Reply(blocks=[text("Done.")])
        return _reply(turns[step])


@dataclass
class ClaudeRun:
    """One `claude -p` run: exit code, output, and the result JSON (`--output-format json`)."""

    returncode: int
    stdout: str
    stderr: str
    result: dict[str, Any] = field(default_factory=dict)

    @property
    def session_id(self) -> str:
        return str(self.result.get("session_id", ""))


class ClaudeCode:
    """The pinned CLI in a throwaway HOME (`root/home`), working in `root/project`, answered by `model`."""

    def __init__(self, root: Path, model: ScriptedModel) -> None:
        self.binary = agent_cli("claude")
        self.model = model
        self.home = root / "home"
        self.project = root / "project"
        self.data_dir = root / "eywa"
        self.tmp = root / "tmp"
        for folder in (self.home, self.project, self.tmp):
            folder.mkdir(parents=True, exist_ok=True)
        self.projects_dir = self.home / ".claude" / "projects"
        self.settings_path = self.home / ".claude" / "settings.json"
        # Eywa's own settings for the hooks, the MCP server and `eywa`: deterministic handoffs (the CLI's
        # ANTHROPIC_API_KEY would otherwise send Eywa's extractions to the scripted model too).
        self.eywa_settings: dict[str, str] = {"EYWA_LLM__ENABLED": "false"}

    @property
    def env(self) -> dict[str, str]:
        """The CLI's environment: loopback only, no telemetry, this checkout's eywa first on PATH."""
        keep = {k: v for k, v in os.environ.items()
                if not k.startswith(("ANTHROPIC_", "CLAUDE", "EYWA_", "OPENAI_")) and k != "TELEGRAM_BOT_TOKEN"}
        return {**keep, "HOME": str(self.home), "PATH": f"{Path(sys.executable).parent}:{keep.get('PATH', '')}",
                "ANTHROPIC_BASE_URL": self.model.base_url, "ANTHROPIC_API_KEY": API_KEY,
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
                "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_TMPDIR": str(self.tmp),  # its task outputs: here too
                # An MCP server starting on a machine busy with other suites may need more than the default, and
                # the first turn must wait for it: by default the first request goes out while servers still connect.
                "MCP_TIMEOUT": "60000", "CLAUDE_CODE_MCP_STARTUP_WAIT_MS": "60000",
                "EYWA_DATA_DIR": str(self.data_dir),
                "EYWA_PROJECTS_DIR": str(self.projects_dir), **self.eywa_settings}

    def command(self, prompt: str | None, *args: str, resume: str | None = None,
                allowed_tools: str = "Write Edit Read Bash Agent") -> list[str]:
        """`claude -p` with `--output-format json` (stream-json both ways when `prompt` is None: the prompts
        come on stdin), edits accepted and `allowed_tools` allowed (as root the CLI refuses bypassPermissions)."""
        io = ["--output-format", "json"] if prompt is not None else \
            ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
        return [str(self.binary), "-p", *([prompt] if prompt is not None else []), *io,
                "--permission-mode", "acceptEdits", *(["--allowedTools", allowed_tools] if allowed_tools else []),
                *(["--resume", resume] if resume else []), *args]

    def run(self, prompt: str | None, *args: str, resume: str | None = None, cwd: Path | None = None,
            allowed_tools: str = "Write Edit Read Bash Agent", timeout: float = 90, check: bool = True,
            env: dict[str, str] | None = None, messages: list[dict[str, Any]] | None = None) -> ClaudeRun:
        """`claude -p PROMPT` (or `--resume ID`), or with `prompt` None the user `messages` (content blocks:
        images, ...) streamed in; `env` adds to the CLI's environment."""
        stdin = "".join(json.dumps({"type": "user", "message": {"role": "user", "content": content}}) + "\n"
                        for content in messages or []) if prompt is None else None
        done = subprocess.run(self.command(prompt, *args, resume=resume, allowed_tools=allowed_tools),
                              cwd=cwd or self.project, env={**self.env, **(env or {})}, capture_output=True,
                              text=True, timeout=timeout, input=stdin,
                              stdin=subprocess.DEVNULL if stdin is None else None)
        run = ClaudeRun(done.returncode, done.stdout, done.stderr)
        for line in reversed(done.stdout.strip().splitlines()):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict) and value.get("type") == "result":
                run.result = value
                break
        if check and done.returncode != 0:
            raise AssertionError(f"claude -p failed ({done.returncode}): {done.stderr[-2000:]}{done.stdout[-2000:]}")
        return run

    def start(self, prompt: str, *args: str,
              allowed_tools: str = "Write Edit Read Bash Agent") -> subprocess.Popen[str]:
        """`claude -p PROMPT` left running (to interrupt it, say)."""
        return subprocess.Popen(self.command(prompt, *args, allowed_tools=allowed_tools), cwd=self.project,
                                env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def cli(self, *args: str, cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Any other `claude` subcommand (`mcp add`, `plugin install`, ...) in the same HOME."""
        return subprocess.run([str(self.binary), *args], cwd=cwd or self.project, env=self.env,
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)

    def eywa(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """This checkout's `eywa` with the same data directory and projects folder as the CLI's hooks."""
        return subprocess.run([str(Path(sys.executable).parent / "eywa"), *args], cwd=self.project, env=self.env,
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)

    def headline(self, session_id: str) -> str:
        """The headline of the handoff Eywa stored for a session (`eywa show --json`)."""
        shown = self.eywa("show", "--json", session_id)
        if shown.returncode != 0:
            raise AssertionError(f"eywa show {session_id} failed: {shown.stderr}")
        return str(json.loads(shown.stdout)["headline"])

    def transcript(self, session_id: str, cwd: Path | None = None) -> Path:
        return self.projects_dir / encoded_cwd(cwd or self.project) / f"{session_id}.jsonl"

    def records(self, session_id: str, cwd: Path | None = None) -> list[dict[str, Any]]:
        lines = self.transcript(session_id, cwd).read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="module")
def scripted_model() -> Iterator[ScriptedModel]:
    """One scripted model a test module shares (each test scripts its own markers)."""
    model = ScriptedModel()
    yield model
    model.close()


@pytest.fixture(scope="module")
def claude_code(tmp_path_factory: pytest.TempPathFactory, scripted_model: ScriptedModel) -> ClaudeCode:
    """The real CLI in a throwaway HOME a test module shares."""
    return ClaudeCode(tmp_path_factory.mktemp("claude-code"), scripted_model)
