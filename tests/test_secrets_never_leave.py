"""Secrets never leave: a corpus seeded with 27 kinds of fake secrets in every part of a transcript
(tests/secrets_corpus.py) goes through everything Eywa does with a transcript: the deterministic
ingest, the LLM extraction against the fake Anthropic API (whose model echoes the transcript back into
the handoff, as a careless model might), and the bot's flows against the fake Bot API (recall, More,
File, Continue, /show, /last, inline, digest, voice), with every logger at DEBUG. Then no 12-character
window of any secret's random part may be found, in any letter case, in any file under the data
directory (SQLite files and their -wal included; the deterministic handoffs are checked before the LLM
replaced them), in any request the fake Bot API or the fake Anthropic API received, or in the logs.
Near-misses (SHAs, UUIDs, image headers, hex) must come through untouched."""

from __future__ import annotations

import io
import json
import logging
import os
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from eywa.bot.app import build_application
from eywa.bot.main import configure_logging, log_secrets
from eywa.core.api import Eywa
from eywa.core.config.settings import Settings

from .conftest import json_strings
from .fake_anthropic import FakeAnthropic
from .fake_telegram import BotThread, Call, FakeTelegram, StubTranscriber, bot_settings
from .secrets_corpus import B64URL, KINDS, PLACEMENTS, SecretsCorpus, body, write_corpus

OWNER = 42
NOW = "2026-02-17T12:00:00Z"
WINDOW = 12
_rng = random.Random(1107)
BOT_TOKEN = f"{_rng.randrange(10**8, 10**10)}:AA{body(_rng, 33, B64URL)}"
API_KEY = "sk-" + "ant-api03-" + body(_rng, 93, B64URL) + "AA"
LOGGERS_AT_DEBUG = ("", "httpx", "httpcore", "anthropic", "telegram", "apscheduler", "eywa")


def echoing_answer(request: dict[str, Any]) -> dict[str, Any]:
    """A handoff made of the transcript's own lines, the ones that held secrets first: whatever the
    model was sent comes back into the index, the files and the bot's messages."""
    text = "\n".join(json_strings(request.get("messages", [])))
    lines = [line.strip() for line in text.splitlines() if len(line.strip()) >= 8]
    lines.sort(key=lambda line: ("REDACTED" not in line and "=" not in line and "://" not in line))
    bullets = [line[:380] for line in lines[:16]] or ["nothing was said", "nothing was done"]
    return {
        "headline": ("Echo: " + bullets[0])[:118],
        "projects": ["quokka"],
        "keywords": ["staging-deploy", "quokka", "secrets", "exporter", "smoke-test"],
        "substance": 2,
        "what_happened": bullets[:5],
        "status": "partial",
        "decisions": bullets[4:6],
        "insights": [{"topic": f"Echo {n}", "explanation": line[:350]} for n, line in enumerate(bullets[5:9])],
        "key_files": [{"path": "config/local.env", "change": line[:350]} for line in bullets[9:12]],
        "open_threads": bullets[12:16],
    }


class RawRecords(logging.Handler):
    """Every record as logged, before any formatter could hide something: message, arguments, traceback."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.name} {record.getMessage()}")
        if record.exc_info:
            self.lines.append(logging.Formatter().formatException(record.exc_info))


@dataclass
class Run:
    corpus: SecretsCorpus
    settings: Settings
    deterministic_files: dict[str, bytes]
    files: dict[str, bytes]
    telegram: FakeTelegram
    anthropic: FakeAnthropic
    raw_log: list[str]
    log_text: str
    sinks: dict[str, str] = field(default_factory=dict)


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _bot_flows(fake: FakeTelegram, transcriber: StubTranscriber, session_ids: list[str]) -> None:
    def settled(mark: int) -> list[Call]:
        """What the bot sent since `mark`, once it has answered a /help sent now (updates are handled
        in order, so everything before is answered too)."""
        fake.send_text(OWNER, "/help")
        calls = fake.wait_for(lambda calls: any(c.text.startswith("Eywa finds") for c in calls), mark)
        return [c for c in calls if c.ok and c.method in ("sendMessage", "sendDocument")
                and not c.text.startswith("Eywa finds")]

    def ask(text: str) -> list[Call]:
        mark = fake.mark()
        fake.send_text(OWNER, text)
        return settled(mark)

    def press_all(messages: list[Call]) -> None:
        mark = fake.mark()
        for message in messages:
            for choice in message.buttons:
                fake.press(OWNER, message.result, choice["callback_data"])
        settled(mark)

    press_all(ask("/recall staging deploy 401 config")[:3])
    ask("quokka exporter credentials")
    for session_id in session_ids:
        press_all([m for m in ask(f"/show {session_id[:8]}") if m.buttons])
    ask("/last 10")
    ask("/last 1")
    ask("/digest")
    ask("/status")
    mark = fake.mark()
    fake.inline_query(OWNER, "staging deploy")
    fake.wait_for(lambda calls: any(c.method == "answerInlineQuery" for c in calls), mark)
    transcriber.reply = "staging deploy config"
    mark = fake.mark()
    fake.send_voice(OWNER, b"OggS\x00\x02fake-opus-bytes", duration=3)
    fake.wait_messages(2, mark, OWNER)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    root = tmp_path_factory.mktemp("secrets")
    data, projects, home = root / "data", root / "projects", root / "home"
    projects.mkdir()
    home.mkdir()
    corpus = write_corpus(projects)
    raw = RawRecords()
    log_stream = io.StringIO()
    saved = {name: logging.getLogger(name).level for name in LOGGERS_AT_DEBUG}
    with pytest.MonkeyPatch.context() as mp, FakeTelegram(BOT_TOKEN) as telegram:
        for name in list(os.environ):
            if name.startswith(("EYWA_", "ANTHROPIC_", "OPENAI_")) or name == "TELEGRAM_BOT_TOKEN":
                mp.delenv(name)
        anthropic = FakeAnthropic(API_KEY)
        anthropic.answer = echoing_answer
        mp.setenv("HOME", str(home))
        mp.setenv("EYWA_NOW", NOW)
        mp.setenv("ANTHROPIC_API_KEY", API_KEY)
        mp.setenv("EYWA_LLM__BASE_URL", anthropic.base_url)
        settings = bot_settings(telegram, data, projects)
        # The bot's own logging (bot/main.py), at DEBUG and with the chatty libraries let through too.
        handler = configure_logging("DEBUG", log_secrets(settings), log_stream)
        logging.getLogger().addHandler(raw)
        for name in LOGGERS_AT_DEBUG:
            logging.getLogger(name).setLevel(logging.DEBUG)
        try:
            eywa = Eywa(settings)
            eywa.ingest(llm=False)
            deterministic = _files(data)
            for session_id in corpus.session_ids[: len(PLACEMENTS) - 2]:  # the rest stay deterministic
                eywa.llm_pass().extract_one(session_id)
            eywa.close()
            transcriber = StubTranscriber()
            with BotThread(build_application(settings, transcriber=transcriber)):
                _bot_flows(telegram, transcriber, corpus.session_ids)
        finally:
            logging.getLogger().removeHandler(raw)
            logging.getLogger().removeHandler(handler)
            for name, level in saved.items():
                logging.getLogger(name).setLevel(level)
            anthropic.close()
        yield Run(corpus, settings, deterministic, _files(data), telegram, anthropic, raw.lines,
                  log_stream.getvalue())


def _windows(corpus: SecretsCorpus) -> dict[str, str]:
    """Every 12-character window of every secret's random parts (lower case) -> the secret's label."""
    found: dict[str, str] = {}
    for seed in corpus.seeds:
        for part in seed.made.distinctive:
            for i in range(len(part) - WINDOW + 1):
                found[part[i : i + WINDOW].lower()] = seed.label
    return found


def leaks(text: str, windows: dict[str, str]) -> set[str]:
    """Labels of the secrets that have a window in `text`, in any letter case (FTS lower-cases)."""
    low = text.lower()
    return {windows[low[i : i + WINDOW]] for i in range(len(low) - WINDOW + 1) if low[i : i + WINDOW] in windows}


def _telegram_text(fake: FakeTelegram) -> str:
    parts = []
    for call in fake.calls:
        parts.append(call.method + " " + json.dumps(call.params, ensure_ascii=False))
        parts.extend(data.decode("utf-8", "replace") for _, data in call.files.values())
    return "\n".join(parts)


def _anthropic_text(fake: FakeAnthropic) -> str:
    return "\n".join(f"{r.method} {r.path} {json.dumps(r.headers)} {r.body}" for r in fake.requests)


# --- the corpus itself --------------------------------------------------------------------------------


def test_the_corpus_plants_every_kind_in_every_placement(run: Run) -> None:
    planted = {(s.kind, s.placement) for s in run.corpus.seeds}
    every = {(kind, placement) for kind in KINDS for placement in PLACEMENTS}
    key_blocks = {kind for kind in KINDS if kind.startswith("pem-")}  # a key block has no URL form
    assert len(KINDS) >= 15 and len(key_blocks) == 6
    assert planted == every - {(kind, "url") for kind in key_blocks}
    text = "\n".join(p.read_text(encoding="utf-8") for p in run.corpus.files)
    windows = _windows(run.corpus)
    assert leaks(text, windows) == {s.label for s in run.corpus.seeds}  # every one is really there


def test_the_work_really_happened(run: Run) -> None:
    """Guards against a vacuous pass: handoffs of both extractors, messages, files and LLM calls exist."""
    assert len(run.anthropic.message_requests) == len(PLACEMENTS) - 2
    assert sum(1 for name in run.files if name.startswith("handoffs/")) == len(run.corpus.session_ids)
    sent = [c for c in run.telegram.calls if c.ok and c.method in ("sendMessage", "sendDocument")]
    assert len(sent) > 3 * len(run.corpus.session_ids) and any(c.files for c in sent)
    assert any("[REDACTED:" in c.text for c in sent)  # the secrets' places are shown, their values not
    texts = [c.text for c in sent]
    for start in ("Digest: ", "Continue from my earlier", "Echo: ", "Latest ", "heard: "):
        assert any(text.startswith(start) or f"\n{start}" in text for text in texts), start
    assert any(c.method == "answerInlineQuery" and c.ok and c.params["results"] for c in run.telegram.calls)
    assert any(b"Echo: " in data for name, data in run.files.items() if name.startswith("handoffs/"))
    # the sources read for reasons (a code comment, a GitHub reply, a PR body, a pasted review) reached a handoff
    drafted = b"".join(data for name, data in run.deterministic_files.items() if name.startswith("handoffs/"))
    for said in (b"the vault is down in staging", b"the trade-off is worth it", b"the old one expired",
                 b"Per the review: "):
        assert said in drafted, said
    assert "Calling Bot API endpoint" in run.log_text and "Request options" in run.log_text  # DEBUG was on


# --- the sinks ----------------------------------------------------------------------------------------


def test_no_secret_in_any_file_of_the_data_dir_after_the_deterministic_ingest(run: Run) -> None:
    windows = _windows(run.corpus)
    found = {name: leaks(data.decode("latin-1"), windows) for name, data in run.deterministic_files.items()}
    assert {name: labels for name, labels in found.items() if labels} == {}
    assert any(name.endswith(".sqlite3-wal") or name.endswith(".sqlite3") for name in found)


def test_no_secret_in_any_file_of_the_data_dir_after_llm_extraction_and_the_bot(run: Run) -> None:
    windows = _windows(run.corpus)
    found = {name: leaks(data.decode("latin-1"), windows) for name, data in run.files.items()}
    assert {name: labels for name, labels in found.items() if labels} == {}
    assert {"index.sqlite3", "bot.sqlite3"} <= set(found)


def test_no_secret_reaches_the_bot_api(run: Run) -> None:
    assert leaks(_telegram_text(run.telegram), _windows(run.corpus)) == set()


def test_no_secret_reaches_the_anthropic_api(run: Run) -> None:
    assert leaks(_anthropic_text(run.anthropic), _windows(run.corpus)) == set()


def test_no_secret_in_the_logs_even_unformatted_at_debug(run: Run) -> None:
    windows = _windows(run.corpus)
    assert leaks("\n".join(run.raw_log), windows) == set()
    assert leaks(run.log_text, windows) == set()


def test_bot_token_and_api_key_never_in_the_formatted_log(run: Run) -> None:
    assert BOT_TOKEN not in run.log_text and API_KEY not in run.log_text
    assert BOT_TOKEN.split(":")[1][:WINDOW] not in run.log_text and API_KEY[14:40] not in run.log_text
    assert "<token>" in run.log_text  # the library did log them (URLs at DEBUG) and the formatter hid them


def test_bot_token_and_api_key_never_reach_telegram_messages(run: Run) -> None:
    text = "\n".join(c.text for c in run.telegram.calls) + _telegram_text(run.telegram)
    assert BOT_TOKEN not in text and API_KEY not in text


# --- what must survive --------------------------------------------------------------------------------


def test_near_misses_survive_intact_in_the_rendered_markdown(run: Run) -> None:
    (archive,) = [data.decode() for name, data in run.files.items()
                  if name.startswith("archive/") and run.corpus.near_miss_session in name]
    missing = [text for text in run.corpus.near_misses if text not in archive]
    assert missing == []
    assert "[REDACTED:" not in archive


def test_markers_stay_whole_and_urls_keep_their_hosts(run: Run) -> None:
    archives = "\n".join(data.decode() for name, data in run.files.items() if name.startswith("archive/"))
    assert "[REDACTED:[REDACTED" not in archives and "[REDACTED:" in archives
    markers = archives.count("[REDACTED:")
    assert markers == len(re.findall(r"\[REDACTED:[a-z0-9-]+\]", archives))  # each one well formed
    for host in ("@github.com/ana/quokka.git", "@api.stripe.com/v1/charges", "@db.internal:5432/quokka",
                 "https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key="):
        assert host in archives
