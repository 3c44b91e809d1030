"""`eywa-bot` as its owner starts it: settings from the environment, a clear error without a token, a
warning when nobody is allowed, and logs that never show the token."""

from __future__ import annotations

import io
import logging
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from eywa.bot.app import build_application
from eywa.bot.main import NOISY_LOGGERS, configure_logging, main
from eywa.core.config.settings import load_settings
from eywa.core.errors import ConfigError

from .conftest import ROOT
from .fake_telegram import TOKEN, BotThread, FakeTelegram, bot_settings


@pytest.fixture
def clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith(("EYWA_", "ANTHROPIC_")) or name == "TELEGRAM_BOT_TOKEN":
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("EYWA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("EYWA_PROJECTS_DIR", str(tmp_path / "projects"))
    return tmp_path


def test_telegram_settings_come_from_the_environment(clean: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "111:from-botfather")
    monkeypatch.setenv("EYWA_TELEGRAM__ALLOWED_USER_IDS", "[42, 7]")
    monkeypatch.setenv("EYWA_TELEGRAM__API_BASE_URL", "http://127.0.0.1:8081/bot")
    monkeypatch.setenv("EYWA_TELEGRAM__FILE_BASE_URL", "http://127.0.0.1:8081/file/bot")
    telegram = load_settings().telegram
    assert telegram.token.get_secret_value() == "111:from-botfather"
    assert telegram.allowed_user_ids == [42, 7]
    assert (telegram.api_base_url, telegram.file_base_url) == ("http://127.0.0.1:8081/bot",
                                                              "http://127.0.0.1:8081/file/bot")
    assert "from-botfather" not in repr(load_settings()) and "from-botfather" not in str(telegram)


def test_token_precedence_eywa_variable_then_telegram_bot_token_then_file(
        clean: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = clean / "c.yaml"
    config.write_text("telegram:\n  token: '1:from-file'\n  digest_time: '07:30'\n")
    assert load_settings(config).telegram.token.get_secret_value() == "1:from-file"
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "2:from-env")
    settings = load_settings(config)
    assert settings.telegram.token.get_secret_value() == "2:from-env"
    assert settings.telegram.digest_time == "07:30"  # the rest of the file's section stays
    monkeypatch.setenv("EYWA_TELEGRAM__TOKEN", "3:eywa-env")
    assert load_settings(config).telegram.token.get_secret_value() == "3:eywa-env"


@pytest.mark.parametrize(("key", "value"), [("digest_time", "25:00"), ("ingest_every_minutes", "-1"),
                                            ("api_base_url", "api.telegram.org")])
def test_invalid_telegram_setting_names_the_key(clean: Path, monkeypatch: pytest.MonkeyPatch,
                                                key: str, value: str) -> None:
    monkeypatch.setenv(f"EYWA_TELEGRAM__{key.upper()}", value)
    with pytest.raises(ConfigError, match=f"telegram.{key}"):
        load_settings()


def test_missing_token_is_a_clear_error_at_start(clean: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 1
    err = capsys.readouterr().err
    assert "no Telegram bot token" in err and "TELEGRAM_BOT_TOKEN" in err and "@BotFather" in err


def test_log_lines_and_tracebacks_never_show_the_token() -> None:
    stream = io.StringIO()
    root = logging.getLogger()
    levels = {name: logging.getLogger(name).level for name in ("", *NOISY_LOGGERS)}
    handler = configure_logging("DEBUG", [TOKEN], stream)
    try:
        log = logging.getLogger("eywa.test")
        log.info("POST https://api.telegram.org/bot%s/getUpdates", TOKEN)
        log.info("GET https://api.telegram.org/file/bot%s/voice/1.oga", TOKEN.replace(":", "%3A"))
        try:
            raise RuntimeError(f"connect failed for /bot{TOKEN}/getMe")
        except RuntimeError:
            log.exception("failed")
        logging.getLogger("httpx").info("HTTP Request: POST /bot%s/sendMessage", TOKEN)
    finally:
        root.removeHandler(handler)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
    text = stream.getvalue()
    assert TOKEN not in text and TOKEN.replace(":", "%3A") not in text
    assert text.count("<token>") == 3 and "HTTP Request" not in text  # httpx's request log is off


def test_empty_allow_list_is_logged_at_start_and_nobody_gets_an_answer(clean: Path) -> None:
    seen = threading.Event()
    records: list[str] = []

    class Watch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())
            if "ignored an update from user id 42" in record.getMessage():
                seen.set()

    watch = Watch(logging.INFO)
    logger = logging.getLogger("eywa.bot")
    logger.addHandler(watch)
    old_level = logger.level
    logger.setLevel(logging.INFO)
    try:
        with FakeTelegram() as fake:
            with BotThread(build_application(bot_settings(fake, clean / "data", clean, allowed_user_ids=[]))):
                mark = fake.mark()
                fake.send_text(42, "/start")
                assert seen.wait(20)
                assert fake.since(mark) == []
    finally:
        logger.removeHandler(watch)
        logger.setLevel(old_level)
    assert any("allowed_user_ids is empty: the bot answers nobody" in r for r in records)


def test_eywa_bot_command_runs_against_a_local_bot_api_and_logs_no_token(clean: Path) -> None:
    script = Path(sys.executable).parent / "eywa-bot"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "eywa.bot.main"]
    with FakeTelegram() as fake:
        env = dict(os.environ, TELEGRAM_BOT_TOKEN=TOKEN, EYWA_TELEGRAM__ALLOWED_USER_IDS="[42]",
                   EYWA_TELEGRAM__API_BASE_URL=fake.base_url, EYWA_TELEGRAM__FILE_BASE_URL=fake.base_file_url,
                   EYWA_TELEGRAM__INGEST_EVERY_MINUTES="0", EYWA_TELEGRAM__DIGEST_TIME="")
        process = subprocess.Popen([*command, "--log-level", "DEBUG"], cwd=ROOT, env=env, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            fake.send_text(42, "/help")
            (reply,) = fake.wait_messages(1, 0, 42, timeout=60)
            assert reply.text.startswith("Eywa finds")
        finally:
            process.send_signal(signal.SIGINT)  # what Ctrl-C does: run_polling stops cleanly
            try:
                out, err = process.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                out, err = process.communicate()
    assert process.returncode == 0, err[-2000:]
    assert TOKEN not in out + err and TOKEN.replace(":", "%3A") not in out + err
    assert "eywa-bot @eywa_test_bot is running" in err  # PTB's DEBUG lines (URLs, updates) stay off
    assert "LLM extraction: deterministic (no API key and " in err  # which backend extracts, said at start
