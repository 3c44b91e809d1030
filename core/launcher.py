"""Claude Code sessions that Eywa starts for the owner, in a handoff's working directory with its Continue
prompt: a background one from the phone (`claude --bg`, watched through `claude agents --json`) and an
interactive one from the shell (`eywa continue`).

Permission checks are never bypassed: `--bg` always gets an explicit `--permission-mode` from config, where
bypassPermissions is no choice (so a `defaultMode` in the owner's settings cannot turn it on either). The
workspace must be one the owner trusted: Claude Code itself refuses `--bg` elsewhere, and its reason is
passed on with what to do.

What Claude Code 2.1.332 was seen to print and report for these commands: bench/RESULTS.md.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from eywa.core.errors import LaunchError
from eywa.core.redaction.scrubber import default_redactor

__all__ = ["BackgroundSession", "LaunchError", "attach_command", "find_cli", "interactive_command",
           "list_background", "start_background", "working_directory"]

# What `claude --bg` prints on success (2.1.332): "backgrounded · e7b5b689", then the commands that take the id.
_BACKGROUNDED = re.compile(r"backgrounded\s+·\s+([0-9A-Za-z-]+)")
_TIMEOUT = 60  # seconds; `--bg` returns in under a second once its service runs
# States `claude agents --json` reports. Its model call classifies a turn's end as done, failed, blocked
# (waiting for the owner) or working; a stopped session has exited.
FINISHED_STATES = frozenset({"done", "failed", "blocked", "stopped"})


class BackgroundSession(BaseModel):
    """One entry of `claude agents --json`."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    id: str  # the short id that `claude attach` takes
    session_id: str = Field(default="", alias="sessionId")
    cwd: str = ""
    name: str = ""
    state: str = ""  # working, blocked, done, failed, stopped
    status: str = ""  # busy or idle, while its process runs

    @field_validator("name")
    @classmethod
    def _redacted(cls, value: str) -> str:  # named by Claude from the prompt; shown on Telegram
        return default_redactor().redact(value)

    @property
    def finished(self) -> bool:
        """Its turn is over: done, failed, waiting for the owner, or exited."""
        return self.state in FINISHED_STATES


def attach_command(session: BackgroundSession) -> str:
    """How the owner opens it: `claude attach` while it runs, `claude --resume` once it has exited."""
    if session.state == "stopped" and session.session_id:
        where = f"cd {shlex.quote(session.cwd)} && " if session.cwd else ""
        return f"{where}claude --resume {session.session_id}"
    return f"claude attach {session.id}"


def find_cli(command: str) -> str:
    """The Claude Code executable `command` names (on PATH, or a path)."""
    found = shutil.which(command)
    if found is None:
        raise LaunchError(f"Claude Code's CLI ({command!r}) is not installed on this machine, or not on the PATH "
                          "of Eywa's process: install it (npm install -g @anthropic-ai/claude-code) or set "
                          "claude_code.command to its path")
    return found


def working_directory(cwd: str | None, session_id: str) -> Path:
    """The session's working directory, when it still exists as a directory."""
    if not cwd:
        raise LaunchError(f"session {session_id} has no recorded working directory (an imported handoff, or "
                          "one whose archive is gone): start Claude Code yourself and paste the Continue prompt")
    folder = Path(cwd)
    if not folder.is_dir():
        what = "is not a directory any more" if folder.exists() else "no longer exists (moved or deleted)"
        raise LaunchError(f"the working directory of session {session_id}, {cwd}, {what}: start Claude Code "
                          "where the project is now and paste the Continue prompt")
    return folder


def _run(argv: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=_TIMEOUT,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise LaunchError(f"`{Path(argv[0]).name} {argv[1]}` did not answer within {_TIMEOUT} s") from None
    except OSError as exc:
        raise LaunchError(f"cannot run {argv[0]}: {exc.strerror or exc}") from None


def _said(done: subprocess.CompletedProcess[str]) -> str:
    """The CLI's last line, redacted: it is shown to the owner, on Telegram too."""
    lines = [line.strip() for line in (done.stderr + "\n" + done.stdout).splitlines() if line.strip()]
    return default_redactor().redact(lines[-1][:300]) if lines else f"exit code {done.returncode}"


def start_background(command: str, cwd: Path, prompt: str, permission_mode: str) -> BackgroundSession:
    """Starts `claude --bg` in `cwd` with `prompt`; the session as `claude agents` lists it."""
    if permission_mode == "bypassPermissions":  # config refuses it; this keeps any other caller from it
        raise LaunchError("a session started by Eywa never bypasses permission checks")
    binary = find_cli(command)
    done = _run([binary, "--bg", "--permission-mode", permission_mode, prompt], cwd)
    found = _BACKGROUNDED.search(done.stdout)
    if done.returncode != 0 or found is None:
        said = _said(done)
        if "trust" in said.lower():
            raise LaunchError(f"Claude Code does not trust {cwd} yet: run `claude` there once and accept the trust "
                              f"prompt, then try again (Claude Code said: {said})")
        raise LaunchError(f"`claude --bg` failed in {cwd}: {said}")
    short_id = found.group(1)
    listed = next((s for s in list_background(command) if s.id == short_id), None)
    return listed or BackgroundSession(id=short_id, cwd=str(cwd), state="working")


def list_background(command: str) -> list[BackgroundSession]:
    """Every background session `claude agents --json --all` knows, those that exited included."""
    done = _run([find_cli(command), "agents", "--json", "--all"])
    if done.returncode != 0:
        raise LaunchError(f"`claude agents --json` failed: {_said(done)}")
    try:
        entries = json.loads(done.stdout or "[]")
        return [BackgroundSession.model_validate(e) for e in entries if isinstance(e, dict)]
    except (json.JSONDecodeError, ValidationError) as exc:
        raise LaunchError(f"`claude agents --json` printed what Eywa cannot read: {str(exc)[:200]}") from None


def interactive_command(command: str, prompt: str) -> list[str]:
    """The argv of an interactive `claude` that starts on `prompt` (the owner answers its permission prompts)."""
    return [find_cli(command), prompt]
