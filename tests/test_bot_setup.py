"""`eywa-bot setup` end to end: the real command (the real PTB `Bot`) against the fake Bot API, the owner's
`/start CODE` from the phone, the config file it writes, and then the real bot answering that owner only."""

from __future__ import annotations

import os
import pty
import queue
import re
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from eywa.bot.app import build_application
from eywa.core.config.settings import load_settings

from .conftest import ROOT, clean_bot_env
from .fake_telegram import TOKEN, BotThread, FakeTelegram, Owner

OWNER, STRANGER, OTHER = 4242, 666, 777


@pytest.fixture
def fake() -> Iterator[FakeTelegram]:
    with FakeTelegram() as server:
        yield server


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: FakeTelegram) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    clean_bot_env(monkeypatch, home, "2026-12-02")
    monkeypatch.setenv("EYWA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("EYWA_PROJECTS_DIR", str(tmp_path / "projects"))
    monkeypatch.setenv("EYWA_TELEGRAM__API_BASE_URL", fake.base_url)
    monkeypatch.setenv("EYWA_TELEGRAM__FILE_BASE_URL", fake.base_file_url)
    return home


class Setup:
    """`eywa-bot setup` running in a process of its own, its output read line by line as it comes."""

    def __init__(self, *args: str, before: tuple[str, ...] = ()) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "eywa.bot.main", *before, "setup", *args], cwd=ROOT,
                                        env=dict(os.environ), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def paste(self, token: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(token + "\n")
        self.process.stdin.flush()

    def until(self, pattern: str) -> re.Match[str]:
        while True:
            try:
                line = self.lines.get(timeout=60)
            except queue.Empty:
                self.process.kill()
                raise AssertionError(f"no line matching {pattern!r}; it said:\n" + "\n".join(self.seen)) from None
            self.seen.append(line)
            found = re.search(pattern, line)
            if found:
                return found

    def finish(self) -> tuple[int, str, str]:
        code = self.process.wait(timeout=60)
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        assert self.process.stderr is not None
        return code, "\n".join(self.seen), self.process.stderr.read()


def config_of(home: Path) -> Path:
    return home / ".eywa" / "config.yaml"


def test_setup_pairs_the_owner_who_sends_the_code_and_the_bot_then_answers_only_them(
        home: Path, fake: FakeTelegram) -> None:
    fake.send_text(OTHER, "/start 123456")  # before setup: dropped, nobody's pairing
    config_of(home).parent.mkdir()
    config_of(home).write_text("timezone: Europe/Paris\ntelegram:\n  digest_time: '07:30'\n")
    config_of(home).chmod(0o644)
    setup = Setup()
    setup.paste(TOKEN)
    assert setup.until(r"Token accepted: this is @(\S+)\.").group(1) == "eywa_test_bot"
    code = setup.until(r"/start (\d{6})$").group(1)
    fake.send_text(STRANGER, f"/start {int(code) ^ 1:06d}")
    assert "wrong pairing code" in setup.until(f"user {STRANGER}").string
    fake.send_text(OTHER, "/start")
    assert "no pairing code" in setup.until(f"user {OTHER}").string
    fake.send_text(OWNER, "what did I do yesterday")
    assert f"not /start {code}" in setup.until(f"user {OWNER}").string
    assert yaml.safe_load(config_of(home).read_text())["telegram"] == {"digest_time": "07:30"}  # nothing yet
    fake.send_text(OWNER, f"/start {code}")
    status, out, err = setup.finish()
    assert (status, err) == (0, ""), out + err
    assert f"Paired with Telegram user {OWNER}" in out
    saved = yaml.safe_load(config_of(home).read_text())
    assert saved == {"timezone": "Europe/Paris",
                     "telegram": {"digest_time": "07:30", "token": TOKEN, "allowed_user_ids": [OWNER]}}
    assert stat.S_IMODE(config_of(home).stat().st_mode) == 0o600
    sent = [c for c in fake.calls if c.method == "sendMessage"]
    assert [c.chat_id for c in sent] == [OWNER] and "Paired" in sent[0].text  # strangers got nothing
    assert fake.get_updates_calls and not fake._updates  # what setup read is confirmed, not left for the bot

    settings = load_settings()  # the bot as it starts next: from the file setup wrote
    assert settings.telegram.allowed_user_ids == [OWNER]
    with BotThread(build_application(settings)):
        mark = fake.mark()
        fake.send_text(STRANGER, "/recall anything")
        assert Owner(fake, OWNER).says("/help")[0].chat_id == OWNER
        assert all(c.chat_id != STRANGER for c in fake.since(mark) if c.chat_id is not None)


def test_a_token_telegram_refuses_is_one_line_and_writes_nothing(home: Path, fake: FakeTelegram) -> None:
    setup = Setup()
    setup.paste("123456789:not-the-token")
    status, out, err = setup.finish()
    assert status == 1 and err.splitlines() == [
        "eywa-bot: Telegram refused that token: copy it again from @BotFather (/mybots, API Token); nothing was "
        "written"]
    assert not config_of(home).exists()
    setup = Setup()
    setup.paste("not a token")
    assert setup.finish()[0] == 1 and not config_of(home).exists()


def test_a_code_that_expires_before_the_owner_sends_it_writes_nothing(home: Path, fake: FakeTelegram) -> None:
    elsewhere = home / "elsewhere" / "eywa.yaml"  # a --config file that does not exist yet is no error: setup makes it
    setup = Setup("--code-minutes", "0.03", before=("--config", str(elsewhere)))
    setup.paste(TOKEN)
    code = setup.until(r"/start (\d{6})$").group(1)
    status, out, err = setup.finish()
    assert status == 1 and err.splitlines() == [
        "eywa-bot: the pairing code expired before the right /start CODE arrived: run `eywa-bot setup` again; "
        "nothing was written"]
    fake.send_text(OWNER, f"/start {code}")  # too late: nobody is listening for it
    assert not config_of(home).exists() and not elsewhere.exists()


def test_eywa_bot_without_a_token_off_a_terminal_says_to_run_setup(home: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "eywa.bot.main"], cwd=ROOT, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stderr.splitlines() == [
        "eywa-bot: no Telegram bot token: run `eywa-bot setup` on a terminal (or set TELEGRAM_BOT_TOKEN to the "
        "token @BotFather gave)"]


def test_eywa_bot_without_a_token_on_a_terminal_offers_setup(home: Path) -> None:
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(ROOT)
        os.execve(sys.executable, [sys.executable, "-m", "eywa.bot.main"], dict(os.environ))
    screen = b""
    while b"[Y/n]" not in screen:
        screen += os.read(fd, 4096)
    os.write(fd, b"n\n")
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        screen += chunk
    _, status = os.waitpid(pid, 0)
    text = screen.decode()
    assert "No Telegram bot token yet. Pair a bot now (eywa-bot setup)? [Y/n]" in text
    assert "no Telegram bot token: run `eywa-bot setup` when you have one" in text
    assert os.waitstatus_to_exitcode(status) == 1 and not config_of(home).exists()
