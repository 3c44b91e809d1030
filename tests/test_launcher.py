"""A new Claude Code session on a handoff, with the real CLI (tests/claude_harness.py) against the scripted
model: Start in the bot (the real PTB Application against the fake Bot API) launches `claude --bg` in the
session's working directory on its Continue prompt, says how to attach and tells when its turn is over;
`eywa continue` opens an interactive `claude` there. Untrusted, missing or moved directories, a missing
CLI, a disabled setting and strangers get a clear answer and start nothing."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import random
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from eywa.core.api import Eywa
from eywa.core.config.settings import Settings, load_settings
from eywa.core.errors import LaunchError
from eywa.core.index.bot_store import BotState
from eywa.core.launcher import BackgroundSession

from .claude_harness import API_KEY, ClaudeCode, ScriptedModel, tool
from .fake_telegram import BotThread, FakeTelegram, Owner, bot_settings, button
from .secrets_corpus import body

pytestmark = pytest.mark.slow  # the real Claude Code CLI

OWNER, STRANGER = 42, 666
ORIGIN = "sessions-origin: plan the quokka exporter"
GONE = "sessions-gone: sketch a throwaway idea"
DONE_STATE = json.dumps({"state": "done", "detail": "picked up the plan", "tempo": "idle",
                         "output": {"result": "plan checked"}})


@dataclass
class World:
    claude: ClaudeCode
    model: ScriptedModel
    settings: Settings
    origin_id: str  # a session whose working directory is the harness project
    gone_id: str  # a session whose working directory was deleted since

    def continue_marker(self, session_id: str) -> str:
        return f"Continue from my earlier Claude Code session {session_id}"


def _trust(claude: ClaudeCode, folder: Path, trusted: bool = True) -> None:
    """What accepting the trust prompt once (and the API key, and the first-run screens) leaves in
    ~/.claude.json: the CLI then runs interactively and in the background there."""
    path = claude.home / ".claude.json"
    config = json.loads(path.read_text()) if path.exists() else {}
    config.setdefault("projects", {}).setdefault(str(folder), {})["hasTrustDialogAccepted"] = trusted
    config["customApiKeyResponses"] = {"approved": [API_KEY[-20:]], "rejected": []}
    config["hasCompletedOnboarding"] = True
    path.write_text(json.dumps(config))


def _wait(predicate: Callable[[], Any], timeout: float = 60, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def world(claude_code: ClaudeCode, scripted_model: ScriptedModel) -> Iterator[World]:
    claude, model = claude_code, scripted_model
    with pytest.MonkeyPatch.context() as mp:
        # Eywa's own children (claude --bg, claude agents) inherit this process's environment.
        for name in list(os.environ):
            if name not in claude.env and name.startswith(("ANTHROPIC_", "CLAUDE", "EYWA_", "OPENAI_")):
                mp.delenv(name)
        for name, value in claude.env.items():
            mp.setenv(name, value)
        plan = claude.project / "plan.md"
        model.on(ORIGIN, tool("Write", {"file_path": str(plan), "content": "# Plan\n- wire the exporter\n"}),
                 "Wrote plan.md. Still open: wire the exporter to the scheduler.")
        origin = claude.run(ORIGIN).session_id
        elsewhere = claude.home / "scratch"
        elsewhere.mkdir()
        model.on(GONE, "An idea, sketched.")
        gone = claude.run(GONE, cwd=elsewhere).session_id
        settings = load_settings(data_dir=claude.data_dir, projects_dir=claude.projects_dir,
                                 claude_code={"command": str(claude.binary)})
        eywa = Eywa(settings)
        eywa.ingest()
        eywa.close()
        shutil.rmtree(elsewhere)
        try:
            yield World(claude, model, settings, origin, gone)
        finally:
            claude.cli("daemon", "stop", "--any")  # ends the background sessions and their service


def _script_the_background_session(world: World, session_id: str, answer: str) -> None:
    world.model.on(world.continue_marker(session_id), answer)
    # Claude Code asks the model to name a background job and to classify the end of each turn; both
    # prompts quote the user's ask, so they are scripted after (newest marker first).
    world.model.on("2-4 word lowercase label", "quokka exporter plan")
    world.model.on("Current state:", DONE_STATE)


# --- the core: start, watch, refuse -------------------------------------------------------------------------


def test_start_refuses_an_untrusted_workspace_with_what_to_do(world: World) -> None:
    _trust(world.claude, world.claude.project, trusted=False)
    eywa = Eywa(world.settings)
    with pytest.raises(LaunchError, match=r"does not trust .*run `claude` there once and accept the trust prompt"):
        eywa.start_session(world.origin_id)
    eywa.close()
    assert not world.model.requests_for(world.continue_marker(world.origin_id))  # nothing was started


def test_start_launches_a_background_session_in_the_working_directory_on_the_continue_prompt(world: World) -> None:
    _trust(world.claude, world.claude.project)
    _script_the_background_session(world, world.origin_id, "Checked plan.md; the exporter is wired.")
    eywa = Eywa(world.settings)
    try:
        session = eywa.start_session(world.origin_id[:8])
        assert re.fullmatch(r"[0-9a-f]{8}", session.id) and session.session_id.startswith(session.id)
        assert session.cwd == str(world.claude.project)
        first = _wait(lambda: world.model.requests_for(world.continue_marker(world.origin_id)), what="the prompt")[0]
        texts = [b["text"] for m in first["messages"] for b in m["content"] if b.get("type") == "text"]
        prompt = next(t for t in texts if t.startswith(world.continue_marker(world.origin_id)))
        assert "Key files:\n- `plan.md` (1 edit)" in prompt and f"Session id: {world.origin_id}" in prompt
        assert f"Primary working directory: {world.claude.project}\n" in "\n".join(texts)
        finished = _wait(lambda: (s := eywa.background_session(session.id)) is not None and s.finished and s,
                         what="the session's turn to end")
        assert finished.state == "done" and finished.name  # Claude's label for it, or its prompt until then
    finally:
        eywa.close()
    records = world.claude.records(session.session_id)
    modes = {r["permissionMode"] for r in records if "permissionMode" in r}
    assert modes == {"default"}  # claude_code.permission_mode "manual": asks, never bypasses


def test_start_refuses_a_working_directory_that_is_gone(world: World) -> None:
    eywa = Eywa(world.settings)
    with pytest.raises(LaunchError, match=r"/scratch, no longer exists \(moved or deleted\)"):
        eywa.start_session(world.gone_id)
    eywa.close()


def test_start_without_the_cli_says_how_to_get_it(world: World) -> None:
    settings = world.settings.model_copy(update={"claude_code": world.settings.claude_code.model_copy(
        update={"command": str(world.claude.home / "no-such-claude")})})
    eywa = Eywa(settings)
    with pytest.raises(LaunchError, match=r"is not installed on this machine.*claude_code\.command"):
        eywa.start_session(world.origin_id)
    eywa.close()


def test_bypassing_permissions_cannot_be_configured(world: World) -> None:
    from eywa.core.errors import ConfigError

    with pytest.raises(ConfigError, match=r"claude_code\.permission_mode = 'bypassPermissions'"):
        load_settings(claude_code={"permission_mode": "bypassPermissions"})


# --- the bot ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeTelegram]:
    with FakeTelegram() as server:
        yield server


def _bot(world: World, fake: FakeTelegram, **telegram: Any) -> BotThread:
    from eywa.bot.app import build_application

    settings = bot_settings(fake, world.claude.data_dir, world.claude.projects_dir, **telegram)
    settings = settings.model_copy(update={"claude_code": world.settings.claude_code})
    return BotThread(build_application(settings))


def test_start_button_is_there_only_when_enabled_and_its_data_fits_64_bytes(world: World, fake: FakeTelegram) -> None:
    owner = Owner(fake, OWNER)
    with _bot(world, fake):
        (off,) = owner.says(f"/show {world.origin_id[:8]}")
    with _bot(world, fake, start_sessions=True):
        (on,) = owner.says(f"/show {world.origin_id[:8]}")
    assert [b["text"] for b in off.buttons] == ["File", "Continue", "Forget"]
    assert [b["text"] for b in on.buttons] == ["File", "Continue", "Start", "Forget"]
    assert all(len(b["callback_data"].encode()) <= 64 for b in on.buttons)


def test_start_button_starts_a_session_says_how_to_attach_and_tells_when_it_is_done(world: World,
                                                                                 fake: FakeTelegram) -> None:
    """Started by one run of the bot, reported by the next: the watch outlives a restart."""
    _trust(world.claude, world.claude.project)
    _script_the_background_session(world, world.origin_id, "Checked again: the plan holds.")
    owner = Owner(fake, OWNER)
    with _bot(world, fake, start_sessions=True, session_poll_seconds=3600):
        (shown,) = owner.says(f"/show {world.origin_id[:8]}")
        _, (started,) = owner.presses(shown, button(shown, "Start"))
    found = re.search(r"Started a Claude session ([0-9a-f]{8}) on ", started.text)
    assert found, started.text
    short = found.group(1)
    assert f"in {world.claude.project}." in started.text and f"claude attach {short}" in started.text
    mark = fake.mark()
    with _bot(world, fake, start_sessions=True, session_poll_seconds=0.5):
        (finished,) = fake.wait_messages(1, mark, OWNER, timeout=90)
        time.sleep(1.5)  # a second look would tell again
    assert re.fullmatch(rf"Claude session {short} \([^\n]{{1,60}}\) is done\.\nOpen it: claude attach {short}",
                        finished.text), finished.text
    assert len([c for c in fake.since(mark) if c.method == "sendMessage" and c.chat_id == OWNER]) == 1
    state = BotState(world.claude.data_dir / "bot.sqlite3")
    assert state.watched_sessions() == []  # told once, then forgotten
    state.close()
    listed = Eywa(world.settings).background_session(short)
    assert listed is not None and listed.cwd == str(world.claude.project)


def test_start_button_answers_clearly_when_the_directory_is_gone(world: World, fake: FakeTelegram) -> None:
    owner = Owner(fake, OWNER)
    with _bot(world, fake, start_sessions=True):
        (shown,) = owner.says(f"/show {world.gone_id[:8]}")
        _, (reply,) = owner.presses(shown, button(shown, "Start"))
    assert reply.text.startswith("Could not start a Claude session: the working directory of session")
    assert "no longer exists (moved or deleted)" in reply.text and "paste the Continue prompt" in reply.text


def test_start_from_an_old_button_while_disabled_or_from_a_stranger_starts_nothing(world: World,
                                                                                  fake: FakeTelegram) -> None:
    owner = Owner(fake, OWNER)
    with _bot(world, fake, start_sessions=True):
        (shown,) = owner.says(f"/show {world.origin_id[:8]}")
    data = button(shown, "Start")
    before = len(world.model.requests)
    with _bot(world, fake):  # the owner turned it off since
        _, (reply,) = owner.presses(shown, data)
        assert "Starting Claude sessions from Telegram is off" in reply.text
        assert "telegram.start_sessions: true" in reply.text
    with _bot(world, fake, start_sessions=True):
        mark = fake.mark()
        fake.press(STRANGER, shown.result, data)
        time.sleep(1.5)
        assert not [c for c in fake.since(mark) if c.method == "sendMessage"]
    assert len(world.model.requests) == before


# --- the shell: eywa continue -------------------------------------------------------------------------------


def _eywa(world: World, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).parent / "eywa"), *args], env=_cli_env(world),
                          capture_output=True, text=True, timeout=60, cwd=world.claude.home)


def _cli_env(world: World) -> dict[str, str]:
    return {**world.claude.env, "EYWA_CLAUDE_CODE__COMMAND": str(world.claude.binary)}


def test_eywa_continue_print_shows_the_directory_and_the_prompt(world: World) -> None:
    done = _eywa(world, "continue", world.origin_id[:8], "--print")
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()[:2]
    assert first == f"cd {world.claude.project}"
    assert second.startswith(world.continue_marker(world.origin_id))


def test_eywa_continue_with_the_directory_gone_fails_clearly(world: World) -> None:
    done = _eywa(world, "continue", world.gone_id[:8])
    assert done.returncode == 1 and not done.stdout
    assert "no longer exists (moved or deleted)" in done.stderr and done.stderr.startswith("eywa: ")


def test_eywa_continue_print_gives_the_prompt_to_paste_when_claude_cannot_start_there(world: World) -> None:
    gone = _eywa(world, "continue", world.gone_id[:8], "--print")
    assert gone.returncode == 0 and gone.stdout.startswith(world.continue_marker(world.gone_id))
    assert gone.stderr.startswith("eywa: ") and "no longer exists (moved or deleted)" in gone.stderr
    no_cli = subprocess.run([str(Path(sys.executable).parent / "eywa"), "continue", world.origin_id[:8], "--print"],
                            env={**_cli_env(world), "EYWA_CLAUDE_CODE__COMMAND": "no-such-claude"},
                            capture_output=True, text=True, timeout=60, cwd=world.claude.home)
    assert no_cli.returncode == 0 and "not installed on this machine" in no_cli.stderr
    first, second = no_cli.stdout.splitlines()[:2]
    assert first == f"cd {world.claude.project}" and second.startswith(world.continue_marker(world.origin_id))


def test_eywa_continue_opens_an_interactive_claude_there_on_the_prompt(world: World) -> None:
    _trust(world.claude, world.claude.project)
    marker = world.continue_marker(world.origin_id)
    world.model.on(marker, "Reading the plan again.")
    before = len(world.model.requests_for(marker))
    pid, fd = pty.fork()
    if pid == 0:  # the child: eywa, then claude in its place, on a terminal
        os.chdir(world.claude.home)
        os.execve(str(Path(sys.executable).parent / "eywa"), ["eywa", "continue", world.origin_id[:8]],
                  _cli_env(world))
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 160, 0, 0))
    screen = b""
    try:
        deadline = time.monotonic() + 60
        while len(world.model.requests_for(marker)) <= before and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.2)[0]:
                try:
                    screen += os.read(fd, 65536)
                except OSError:
                    break
        requests = world.model.requests_for(marker)[before:]
        assert requests, screen[-2000:].decode(errors="replace")
        # the interactive CLI works in the session's directory, whatever directory eywa was run from
        assert str(world.claude.project) in json.dumps(requests[0]["system"]) + json.dumps(requests[0]["messages"])
        assert os.waitpid(pid, os.WNOHANG) == (0, 0)  # still running: it is the owner's session now
    finally:
        os.kill(pid, signal.SIGTERM)
        _wait(lambda: os.waitpid(pid, os.WNOHANG) != (0, 0), timeout=20, what="claude to exit")
        os.close(fd)


def test_background_session_model_reads_what_claude_agents_prints() -> None:
    entry = {"pid": 1, "id": "e7b5b689", "cwd": "/w", "kind": "background", "startedAt": 1,
             "sessionId": "e7b5b689-087b-4cae-94db-c52df7ad4407", "name": "n", "status": "idle", "state": "blocked"}
    session = BackgroundSession.model_validate(entry)
    assert session.finished and session.session_id == entry["sessionId"]
    token = "ghp_" + body(random.Random(5), 36)
    assert BackgroundSession.model_validate({**entry, "name": f"rotate {token}"}).name == \
        "rotate [REDACTED:github-token]"  # the name is shown on Telegram
    assert not BackgroundSession.model_validate({**entry, "state": "working"}).finished
