"""Who may use the bot, and what owners may feed it: every kind of update from a stranger gets nothing
and is logged by user id without its content (even with --log-level DEBUG); ids, paths and queries from
the owner are refused or bounded (bot, CLI, MCP); the bot token and the API keys never show in a log
line or a message, whatever fails."""

from __future__ import annotations

import asyncio
import io
import logging
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from eywa.bot.app import build_application
from eywa.bot.main import CONTENT_LOGGERS, NOISY_LOGGERS, configure_logging, log_secrets, main
from eywa.cli.main import main as cli_main
from eywa.core.api import Eywa
from eywa.core.config.settings import Settings

from .conftest import clean_bot_env
from .fake_anthropic import Fail, FakeAnthropic
from .fake_telegram import MAX_TEXT, BotThread, Call, FakeTelegram, Owner, StubTranscriber, bot_settings, button
from .secrets_corpus import B64URL, body, write_corpus

OWNER, STRANGER = 42, 666
NOW = "2026-02-17T12:00:00Z"
_rng = random.Random(2025)
BOT_TOKEN = f"{_rng.randrange(10**8, 10**10)}:AA{body(_rng, 33, B64URL)}"
API_KEY = "sk-" + "ant-api03-" + body(_rng, 93, B64URL) + "AA"
CONFIGURED = ("", *NOISY_LOGGERS, *CONTENT_LOGGERS)  # the loggers configure_logging sets a level on
WINDOW = 12
LONG_QUERY = " ".join(f"word{n} staging" for n in range(800))[:10_000]


@dataclass
class World:
    fake: FakeTelegram
    runner: BotThread
    settings: Settings
    owner: Owner
    log: io.StringIO
    session_ids: list[str]

    def settled(self, mark: int) -> list[Call]:
        """The owner's /help is answered: every update before it is handled. What the bot did since
        `mark`, the /help answer left out."""
        self.fake.send_text(OWNER, "/help")
        calls = self.fake.wait_for(lambda calls: any(c.text.startswith("Eywa finds") for c in calls), mark)
        return [c for c in calls if not c.text.startswith("Eywa finds")]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("access")
    projects = root / "projects"
    corpus = write_corpus(projects)
    log = io.StringIO()
    levels = {name: logging.getLogger(name).level for name in CONFIGURED}
    with pytest.MonkeyPatch.context() as mp, FakeTelegram(BOT_TOKEN) as fake:
        clean_bot_env(mp, root, NOW)
        mp.setenv("ANTHROPIC_API_KEY", API_KEY)
        mp.setenv("EYWA_LLM__BACKEND", "deterministic")  # the key is only there to be kept out of the log
        settings = bot_settings(fake, root / "data", projects)
        eywa = Eywa(settings)
        eywa.ingest()
        eywa.close()
        handler = configure_logging("DEBUG", log_secrets(settings), log)  # what `eywa-bot --log-level DEBUG` does
        try:
            with BotThread(build_application(settings, transcriber=StubTranscriber())) as runner:
                yield World(fake, runner, settings, Owner(fake, OWNER), log, corpus.session_ids)
        finally:
            logging.getLogger().removeHandler(handler)
            for name, level in levels.items():
                logging.getLogger(name).setLevel(level)


# --- strangers -------------------------------------------------------------------------------------------


def test_a_stranger_gets_nothing_for_any_update_type_and_the_log_names_only_the_user_id(world: World) -> None:
    fake = world.fake
    (owners,) = world.owner.says(f"/show {world.session_ids[0][:8]}")
    words = [f"stranger-words-{n}-{body(_rng, 10)}" for n in range(12)]
    document = {"file_id": "doc-1", "file_unique_id": "doc-1", "file_name": f"{words[3]}.txt", "file_size": 10}
    photo = [{"file_id": "ph-1", "file_unique_id": "ph-1", "width": 90, "height": 90, "file_size": 900}]
    channel = {"id": -100777, "type": "channel", "title": "news"}
    lines_before = world.log.getvalue().count("\n")
    mark = fake.mark()
    fake.send_text(STRANGER, f"/recall {words[0]}")
    fake.send_text(STRANGER, words[1])
    fake.send_text(STRANGER, f"/show {world.session_ids[0][:8]}")
    fake.send_voice(STRANGER, b"OggS\x00\x02fake", duration=3)
    fake.push(message=fake.message_from(STRANGER, document=document, caption=words[2]))
    fake.push(message=fake.message_from(STRANGER, photo=photo, caption=words[4]))
    fake.push(edited_message={**fake.message_from(STRANGER, text=words[5]), "edit_date": int(time.time())})
    fake.send_text(STRANGER, words[6], chat_id=-100555)  # in a group the bot is in
    pressed = fake.press(STRANGER, owners.result, button(owners, "File"))
    fake.inline_query(STRANGER, words[7])
    fake.push(chosen_inline_result={"result_id": world.session_ids[0], "from": fake.user(STRANGER),
                                    "query": words[8]})
    fake.push(channel_post={"message_id": 1, "date": int(time.time()), "chat": channel, "sender_chat": channel,
                            "text": words[9]})
    fake.push(edited_channel_post={"message_id": 1, "date": int(time.time()), "edit_date": int(time.time()),
                                   "chat": channel, "sender_chat": channel, "text": words[10]})
    fake.push(my_chat_member={"chat": {"id": -100555, "type": "group", "title": words[11]},
                              "from": fake.user(STRANGER), "date": int(time.time()),
                              "old_chat_member": {"status": "left", "user": fake.user(123456789)},
                              "new_chat_member": {"status": "member", "user": fake.user(123456789)}})
    fake.push(poll_answer={"poll_id": "p1", "user": fake.user(STRANGER), "option_ids": [0],
                           "option_persistent_ids": ["o1"]})
    assert world.settled(mark) == []  # no request at all: no reply, no getFile, no answer to the button
    assert fake.unanswered_callback(pressed)
    log = "\n".join(world.log.getvalue().splitlines()[lines_before:])
    ignored = [line for line in log.splitlines() if "ignored an update from" in line]
    assert sum(f"user id {STRANGER}" in line for line in ignored) == 13
    assert sum("no user" in line for line in ignored) == 2  # the channel posts
    assert [w for w in words if w in log] == []


def test_updates_the_library_cannot_parse_are_logged_without_their_content() -> None:
    stream = io.StringIO()
    levels = {name: logging.getLogger(name).level for name in CONFIGURED}
    handler = configure_logging("INFO", [BOT_TOKEN], stream)
    try:  # what PTB logs when an update has a shape it does not know (its _bot.py, get_updates)
        logging.getLogger("telegram.ext.ExtBot").critical(
            "Error while parsing updates! Received data was %r", [{"message": {"text": "stranger-words-x"}}])
    finally:
        logging.getLogger().removeHandler(handler)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
    assert "Error while parsing updates! Received data was (left out of the log)" in stream.getvalue()
    assert "stranger-words-x" not in stream.getvalue()


# --- what owners type ------------------------------------------------------------------------------------


def test_show_with_a_path_is_refused_without_touching_the_file_system(world: World) -> None:
    for wanted in ("../../etc/passwd", "/etc/passwd", "..%2F..%2Fetc%2Fpasswd", "%", "_", "a'--"):
        mark = world.fake.mark()
        world.fake.send_text(OWNER, f"/show {wanted}")
        (reply,) = world.settled(mark)
        assert reply.method == "sendMessage" and reply.text.startswith("No session has the id")
        assert "root:" not in reply.text and not reply.buttons


def test_show_with_a_one_character_prefix_is_bounded(world: World) -> None:
    mark = world.fake.mark()
    world.fake.send_text(OWNER, f"/show {world.session_ids[0][0]}")
    replies = [c for c in world.settled(mark) if c.method in ("sendMessage", "sendDocument")]
    assert len(replies) == 1 and len(replies[0].buttons) <= 10  # one handoff, or a list of ten at most


def test_a_ten_thousand_character_query_gets_a_bounded_answer_everywhere(world: World) -> None:
    for text in (f"/recall {LONG_QUERY}", LONG_QUERY, "zqxv " * 2000):  # the last matches nothing
        mark = world.fake.mark()
        world.fake.send_text(OWNER, text)
        replies = [c for c in world.settled(mark) if c.method in ("sendMessage", "sendDocument")]
        assert replies and all(c.ok for c in replies)
        assert all(len(c.text) <= MAX_TEXT for c in replies) and replies[0].method == "sendMessage"
    mark = world.fake.mark()
    world.fake.inline_query(OWNER, LONG_QUERY)
    (answer,) = world.fake.wait_for(lambda calls: any(c.method == "answerInlineQuery" for c in calls), mark)
    assert answer.ok and len(answer.params["results"]) <= 5


def test_cli_show_refuses_a_path(world: World, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("EYWA_DATA_DIR", str(world.settings.data_dir))
    monkeypatch.setenv("EYWA_PROJECTS_DIR", str(world.settings.projects_dir))
    assert cli_main(["show", "../../etc/passwd"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "not a session id" in err and "root:" not in err


def test_mcp_tools_refuse_a_path_and_bound_a_long_query(world: World) -> None:
    from mcp.server.mcpserver.exceptions import ToolError

    from eywa.claude_code.mcp_server import build_server

    server = build_server(world.settings, cwd="/home/ana/src/quokka")
    with pytest.raises(ToolError, match="not a session id"):
        asyncio.run(server.call_tool("eywa_extract", {"session_id": "../../etc/passwd"}))
    answer = asyncio.run(server.call_tool("eywa_get", {"query": LONG_QUERY}))
    text = "".join(block.text for block in answer.content)
    assert text.startswith("## Eywa: ") and LONG_QUERY[:200] not in text


# --- the token and the keys ------------------------------------------------------------------------------


def test_bot_api_errors_and_dropped_connections_never_show_the_token(world: World) -> None:
    fake = world.fake
    mark = fake.mark()
    fake.fail_next("sendMessage", code=500, description=f"Internal Server Error for bot{BOT_TOKEN}",
                   retry_after=None)
    fake.fail_next("sendMessage", code=502, description="Bad Gateway", retry_after=None)
    fake.drop_next("sendMessage")
    fake.fail_next("sendMessage", code=400, description=f"Bad Request: chat not found ({BOT_TOKEN})",
                   retry_after=None)
    fake.send_text(OWNER, "/status")
    calls = world.settled(mark)
    assert [c.ok for c in calls if c.method == "sendMessage"][:4] == [False, False, False, False]
    log = world.log.getvalue()
    assert "handling an update failed" in log and "Chat not found (<token>)" in log  # PTB lower-cased it
    sorry = [c.text for c in calls if c.ok and c.chat_id == OWNER]
    assert sorry == ["Sorry, that failed (BadRequest); the details are in the bot's log."]
    text = (log + "".join(c.text + str(c.params) for c in fake.calls)).lower()
    assert BOT_TOKEN.lower() not in text and BOT_TOKEN.split(":")[1][:WINDOW].lower() not in text
    assert API_KEY.lower() not in text


def test_a_rejected_token_at_start_is_a_clear_message_without_the_token(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    levels = {name: logging.getLogger(name).level for name in CONFIGURED}
    handlers = list(logging.getLogger().handlers)
    with FakeTelegram(BOT_TOKEN) as fake:
        clean_bot_env(monkeypatch, tmp_path, NOW)
        wrong = f"{_rng.randrange(10**8, 10**10)}:AA{body(_rng, 33, B64URL)}"
        for name, value in (("TELEGRAM_BOT_TOKEN", wrong), ("EYWA_TELEGRAM__ALLOWED_USER_IDS", "[42]"),
                            ("EYWA_TELEGRAM__API_BASE_URL", fake.base_url),
                            ("EYWA_TELEGRAM__FILE_BASE_URL", fake.base_file_url),
                            ("EYWA_DATA_DIR", str(tmp_path / "data")), ("EYWA_PROJECTS_DIR", str(tmp_path))):
            monkeypatch.setenv(name, value)
        try:
            assert main(["--log-level", "DEBUG"]) == 1
        finally:
            for handler in set(logging.getLogger().handlers) - set(handlers):
                logging.getLogger().removeHandler(handler)
            for name, level in levels.items():
                logging.getLogger(name).setLevel(level)
    out, err = capsys.readouterr()
    assert "rejected the bot token" in err
    assert wrong not in out + err and wrong.split(":")[1] not in out + err


@pytest.mark.parametrize(("status", "kind"), [(401, "authentication_error"), (500, "api_error")])
def test_anthropic_errors_never_show_the_api_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture,
                                                status: int, kind: str) -> None:
    server = FakeAnthropic(API_KEY)
    try:
        clean_bot_env(monkeypatch, tmp_path, NOW)
        projects = tmp_path / "projects"
        session_id = write_corpus(projects).session_ids[0]
        for name, value in (("ANTHROPIC_API_KEY", API_KEY), ("EYWA_LLM__BASE_URL", server.base_url),
                            ("EYWA_LLM__BACKOFF_BASE_SECONDS", "0.001"), ("EYWA_DATA_DIR", str(tmp_path / "data")),
                            ("EYWA_PROJECTS_DIR", str(projects))):
            monkeypatch.setenv(name, value)
        # A proxy that echoes the key it was given, as some do in their error messages.
        server.script.extend(Fail(status, kind, f"key {API_KEY} is not valid here") for _ in range(8))
        caplog.set_level(logging.DEBUG)
        code = cli_main(["extract", session_id])
    finally:
        server.close()
    out, err = capsys.readouterr()
    assert server.message_requests and str(status) in out + err + caplog.text
    assert code == 1  # the run stops: a 401 at once, a 500 after its retries
    for text in (out, err, caplog.text):
        assert API_KEY not in text and API_KEY[14:40] not in text


def test_voice_service_errors_shown_to_the_owner_never_show_its_key() -> None:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from threading import Thread

    from eywa.bot.speech.transcribe import VoiceError, transcribe_openai
    from eywa.core.config.settings import VoiceSettings

    key = "sk-" + "proj-" + body(_rng, 120, B64URL)

    class EchoingService(BaseHTTPRequestHandler):  # an OpenAI-compatible server quoting the key it refuses
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            data = f'{{"error": {{"message": "Incorrect API key provided: {key}"}}}}'.encode()
            self.send_response(401)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), EchoingService)
    Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    settings = VoiceSettings(backend="openai", openai_base_url=f"http://127.0.0.1:{server.server_address[1]}/v1",
                             openai_api_key=key)
    try:
        with pytest.raises(VoiceError) as caught:
            transcribe_openai(b"OggS-fake", [], settings)
    finally:
        server.shutdown()
        server.server_close()
    assert "HTTP 401: Incorrect API key provided: <api key>" in str(caught.value)
    assert key[20:40] not in str(caught.value)
