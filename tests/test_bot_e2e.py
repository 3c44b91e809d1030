"""The bot end to end: its real Application polls a fake Bot API server over real HTTP on 127.0.0.1,
on an index of real transcripts (the claude-code-log part of the corpus, and one written here whose prompt
is markup), with "now" pinned."""

from __future__ import annotations

import contextlib
import datetime as dt
import re
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from telegram.ext import Application

from eywa.bot.app import EywaBot, build_application
from eywa.bot.handlers.buttons import result_buttons
from eywa.bot.send import send_html
from eywa.bot.speech.hearing import VoiceFailed
from eywa.core.api import Eywa, HandoffRecord

from .conftest import CORPUS, clean_bot_env, write_jsonl
from .fake_telegram import BotThread, Call, FakeTelegram, Owner, StubTranscriber, bot_settings, button

PROJECTS = CORPUS / "claude-code-log" / "projects"
OWNER, STRANGER = 42, 666
NOW = "2026-02-17T12:00:00Z"
# date, projects, duration, status (every corpus handoff has one), machine, id
META = (r"\w{3} \d{2} \w{3} \d{4} · [^·]+ · (\d+h )?\d+m · (done|partial|abandoned|exploratory) · on [\w.-]+ · "
        r"[0-9a-f]{8}")
OGG = b"OggS\x00\x02fake-opus-bytes"


@dataclass
class World:
    fake: FakeTelegram
    runner: BotThread
    app: Application
    transcriber: StubTranscriber
    owner: Owner
    data: Path

    @property
    def bot(self) -> EywaBot:
        return self.app.bot_data["eywa_bot"]


MARKUP_ID = "5e55a9e0-0000-4000-8000-00000000beef"
MARKUP_PROMPT = "Escape <b>, </i> & \"quotes\" in the digest -> don't let Telegram reject it"


def projects_folder(home: Path) -> Path:
    """The real projects (linked, read in place) and one session, long ago, whose prompt is markup."""
    projects = home / "projects"
    for source in (path for path in PROJECTS.rglob("*") if path.is_file()):
        target = projects / source.relative_to(PROJECTS)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(source)
    base = {"sessionId": MARKUP_ID, "cwd": "/home/me/markup", "timestamp": "2024-01-02T10:00:00Z"}
    write_jsonl(projects / "-home-me-markup" / f"{MARKUP_ID}.jsonl", [
        {**base, "type": "user", "uuid": "u1", "message": {"role": "user", "content": MARKUP_PROMPT}},
        {**base, "type": "assistant", "uuid": "a1", "parentUuid": "u1",
         "message": {"role": "assistant", "id": "m1", "model": "claude-opus-4-6",
                     "content": [{"type": "text", "text": "Escaped with html.escape before sending."}]}},
    ])
    return projects


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    home = tmp_path_factory.mktemp("bot-home")
    with pytest.MonkeyPatch.context() as mp:
        clean_bot_env(mp, home, NOW)
        with FakeTelegram() as fake:
            settings = bot_settings(fake, home / "data", projects_folder(home))
            eywa = Eywa(settings)
            eywa.ingest()
            eywa.close()
            transcriber = StubTranscriber()
            app = build_application(settings, transcriber=transcriber)
            with BotThread(app) as runner:
                yield World(fake, runner, app, transcriber, Owner(fake, OWNER), home / "data")


def entity_types(call: Call) -> set[str]:
    return {e["type"] for e in call.result.get("entities", [])}


# --- recall --------------------------------------------------------------------------------------------


def test_command_menu_is_set_at_start(world: World) -> None:
    names = [c["command"] for c in world.fake.commands]
    assert names == ["recall", "last", "show", "status", "ingest", "digest", "voice", "help"]


def test_recall_command_sends_each_top_handoff_as_one_formatted_message_with_buttons(world: World) -> None:
    replies = world.owner.says("/recall cache version tests", replies=3)
    for reply in replies:
        headline, meta = reply.text.split("\n")[:2]
        assert headline and re.fullmatch(META, meta), meta
        assert "What Happened" in reply.text
        assert {"bold", "code"} <= entity_types(reply)  # Telegram parsed our HTML
        assert [b["text"] for b in reply.buttons] == ["More", "File", "Continue", "Forget"]
        assert all(len(b["callback_data"].encode()) <= 64 for b in reply.buttons)


def test_plain_text_message_is_a_recall(world: World) -> None:
    by_text = world.owner.says("cache version tests", replies=3)
    by_command = world.owner.says("/recall cache version tests", replies=3)
    assert [r.text for r in by_text] == [r.text for r in by_command]


def test_headlines_with_markup_characters_are_escaped_not_rejected(world: World) -> None:
    (reply,) = world.owner.says(f"/show {MARKUP_ID[:8]}")
    assert reply.text.startswith("Escape <b>, </i> & \"quotes\" in the digest")  # as typed; Telegram took the HTML
    assert reply.params["parse_mode"] == "HTML" and "Escape &lt;b&gt;, &lt;/i&gt; &amp;" in reply.params["text"]


def test_more_pages_to_the_next_results_and_answers_the_button(world: World) -> None:
    first = world.owner.says("tests lint", replies=3)
    query_id, second = world.owner.presses(first[0], button(first[0], "More"), replies=3)
    assert not world.fake.unanswered_callback(query_id)
    assert not {r.text for r in first} & {r.text for r in second}
    query_id, third = world.owner.presses(second[-1], button(second[-1], "More"), replies=3)
    assert not {r.text for r in first + second} & {r.text for r in third}


def meta_day(reply: Call) -> dt.date:
    """The date on a handoff message's second line ("Mon 29 Sep 2025 · ...")."""
    return dt.datetime.strptime(reply.text.split("\n")[1].split(" · ")[0], "%a %d %b %Y").date()


def test_a_days_filter_is_said_first_and_holds_on_every_more_page(world: World) -> None:
    note, *first = world.owner.says("/recall 150d code", replies=4)
    assert note.text == "Sessions since Sun 21 Sep 2025:"
    _, second = world.owner.presses(first[-1], button(first[-1], "More"), replies=3)
    _, third = world.owner.presses(second[-1], button(second[-1], "More"), replies=3)
    shown = first + second + third
    assert len({r.text for r in shown}) == 9
    assert all(meta_day(r) >= dt.date(2025, 9, 21) for r in shown)  # without the filter, July's sessions match too
    assert all(len(b["callback_data"].encode()) <= 64 for r in shown for b in r.buttons)


def test_time_words_say_which_days_come_first(world: World) -> None:
    note, *replies = world.owner.says("the tokenizer work in September", replies=4)
    assert note.text == "Sessions in September 2025 first:"
    assert meta_day(replies[0]).month == 9


def test_a_query_matching_nothing_says_so_then_shows_the_latest(world: World) -> None:
    note, *latest = world.owner.says("/recall zanzibar quokka", replies=4)
    assert note.text == "No session matches “zanzibar quokka”. The latest sessions:"
    days = [meta_day(r) for r in latest]
    assert days == sorted(days, reverse=True)


def test_file_button_sends_the_handoff_as_a_markdown_document(world: World) -> None:
    reply = world.owner.says("/show fe869ecb")[0]
    _, (document,) = world.owner.presses(reply, button(reply, "File"))
    assert document.method == "sendDocument"
    filename, data = world.fake.file(document)
    text = data.decode()
    assert filename.endswith(".md") and text.startswith("---\nsession_id:")
    assert reply.text.split("\n")[0] in text  # the headline


def test_continue_button_sends_one_copyable_prompt_for_a_new_session(world: World) -> None:
    reply = world.owner.says("/show fe869ecb")[0]
    _, (prompt,) = world.owner.presses(reply, button(reply, "Continue"))
    session_id = prompt.text.split("Session id: ")[1].split()[0]
    assert len(session_id) == 36 and reply.text.split("\n")[1].endswith(session_id[:8])
    for part in ("Continue from my earlier Claude Code session", "What happened:", "Open threads:",
                 "Key files:", "Handoff file:"):
        assert part in prompt.text
    (entity,) = prompt.result["entities"]
    assert entity["type"] == "pre" and entity["offset"] == 0  # one block: Telegram offers to copy it


def test_expired_button_is_answered_not_ignored(world: World) -> None:
    reply = world.owner.says("/show fe869ecb")[0]
    mark = world.fake.mark()
    query_id = world.fake.press(OWNER, reply.result, "f:nosuchtk:0")
    world.fake.wait_for(lambda calls: any(c.method == "answerCallbackQuery" for c in calls), mark)
    (answer,) = world.fake.since(mark, "answerCallbackQuery")
    assert "expired" in answer.params["text"] and not world.fake.unanswered_callback(query_id)


def test_button_data_keeps_the_format_earlier_releases_sent(world: World) -> None:
    # Buttons already in users' chats carry "kind:token:index": each kind's handler must still read it.
    reply = world.owner.says("/show fe869ecb")[0]
    data = {b["text"]: b["callback_data"] for b in reply.buttons}
    assert re.fullmatch(r"f:[A-Za-z0-9_-]{1,40}:0", data["File"]) and all(len(d.encode()) <= 64 for d in data.values())
    token = data["File"].split(":")[1]
    assert data["Continue"] == f"c:{token}:0"
    _, (opened,) = world.owner.presses(reply, f"o:{token}:0")  # a list's number button, written by hand
    assert opened.text == reply.text and [b["text"] for b in opened.buttons] == ["File", "Continue", "Forget"]
    mark = world.fake.mark()
    query_id = world.fake.press(OWNER, reply.result, f"z:{token}:0")  # a kind no handler knows
    world.fake.wait_for(lambda calls: any(c.method == "answerCallbackQuery" for c in calls), mark)
    (answer,) = world.fake.since(mark, "answerCallbackQuery")
    assert "expired" in answer.params["text"] and not world.fake.unanswered_callback(query_id)


# --- voice ---------------------------------------------------------------------------------------------


def test_voice_note_is_downloaded_transcribed_with_the_index_vocabulary_and_recalled(world: World) -> None:
    world.transcriber.reply = "cache version tests"
    before = len(world.transcriber.calls)
    mark = world.fake.mark()
    world.fake.send_voice(OWNER, OGG, duration=4)
    heard, *results = world.fake.wait_messages(4, mark, OWNER)
    ogg, hotwords = world.transcriber.calls[before]
    assert ogg == OGG  # getFile + the file download, token percent-encoded in the URL
    assert "claude-code-log" in hotwords and len(hotwords) > 5
    assert heard.text == "heard: cache version tests"
    assert [r.text for r in results] == [r.text for r in world.owner.says("/recall cache version tests", 3)]
    assert [c.method for c in world.fake.since(mark)][:2] == ["sendChatAction", "getFile"]


@pytest.mark.slow  # real speech through faster-whisper
def test_real_speech_through_the_real_transcriber_finds_the_project(world: World) -> None:
    from eywa.bot.speech import hearing

    speech = (Path(__file__).parent / "fixtures" / "voice" / "claude_code_log.oga").read_bytes()
    stub, world.bot.transcriber = world.bot.transcriber, hearing.transcriber(world.bot.settings)
    try:
        mark = world.fake.mark()
        world.fake.send_voice(OWNER, speech, duration=3)
        heard, *results = world.fake.wait_messages(4, mark, OWNER, timeout=120)  # heard + 3 results
    finally:
        world.bot.transcriber = stub
    assert heard.text.startswith("heard: ") and "claude-code-log" in heard.text
    assert results and "claude-code-log" in results[0].text


def test_too_long_voice_note_is_refused_before_downloading(world: World) -> None:
    mark = world.fake.mark()
    world.fake.send_voice(OWNER, OGG, duration=600)
    (reply,) = world.fake.wait_messages(1, mark, OWNER)
    assert "600 s" in reply.text and "60 s at most" in reply.text
    assert not world.fake.since(mark, "getFile")


def test_silent_voice_note_gets_a_clear_reply(world: World) -> None:
    world.transcriber.reply = "  "
    mark = world.fake.mark()
    world.fake.send_voice(OWNER, OGG, duration=2)
    (reply,) = world.fake.wait_messages(1, mark, OWNER)
    assert "heard no words" in reply.text


def test_undecodable_voice_note_gets_the_voice_modules_message(world: World) -> None:
    world.transcriber.reply = VoiceFailed("I could not decode that audio (not OGG/Opus?).")
    mark = world.fake.mark()
    world.fake.send_voice(OWNER, b"not audio", duration=2)
    (reply,) = world.fake.wait_messages(1, mark, OWNER)
    assert reply.text == "I could not decode that audio (not OGG/Opus?)."


# --- inline, last, show, status --------------------------------------------------------------------------


def test_inline_query_lists_matching_handoffs_whose_choice_posts_the_continue_prompt(world: World) -> None:
    mark = world.fake.mark()
    world.fake.inline_query(OWNER, "cache version")
    (answer,) = world.fake.wait_for(lambda calls: any(c.method == "answerInlineQuery" for c in calls), mark)
    assert answer.ok and answer.params["is_personal"] is True and 0 < answer.params["cache_time"] <= 60
    results = answer.params["results"]
    assert 1 <= len(results) <= 5 and all(r["type"] == "article" and r["title"] for r in results)
    assert all(r["description"][:2].isdigit() for r in results)  # the date
    content = results[0]["input_message_content"]
    assert content["parse_mode"] == "HTML" and content["message_text"].startswith("<pre>Continue from")
    assert results[0]["id"] in content["message_text"]  # the session id, in the prompt


def test_an_inline_query_matching_nothing_says_its_sessions_are_the_latest(world: World) -> None:
    mark = world.fake.mark()
    world.fake.inline_query(OWNER, "zanzibar quokka")
    (answer,) = world.fake.wait_for(lambda calls: any(c.method == "answerInlineQuery" for c in calls), mark)
    results = answer.params["results"]
    assert results and all(r["description"].startswith("no match, latest · ") for r in results)


def test_last_lists_sessions_one_line_each_with_buttons_to_open_one(world: World) -> None:
    (listing,) = world.owner.says("/last 4")
    lines = listing.text.split("\n")
    assert lines[0] == "Latest 4 sessions" and [line[:3] for line in lines[1:]] == ["1. ", "2. ", "3. ", "4. "]
    assert [b["text"] for b in listing.buttons] == ["1", "2", "3", "4"]
    _, (opened,) = world.owner.presses(listing, button(listing, "2"))
    assert lines[2].startswith("2. " + opened.text.split("\n")[0] + " · ")  # the second one, now in full
    assert "What Happened" in opened.text and [b["text"] for b in opened.buttons] == ["File", "Continue", "Forget"]


def test_last_1_shows_the_newest_handoff_in_full(world: World) -> None:
    (newest,) = world.owner.says("/last 1")
    (listing,) = world.owner.says("/last")
    assert listing.text.split("\n")[1].startswith("1. " + newest.text.split("\n")[0] + " · ")
    assert "Open Threads" in newest.text


def test_show_finds_a_handoff_by_prefix_and_lists_an_ambiguous_one(world: World) -> None:
    (one,) = world.owner.says("/show 937c6e6b")
    with contextlib.closing(sqlite3.connect(world.data / "index.sqlite3")) as conn:
        (headline,) = conn.execute("SELECT headline FROM handoffs WHERE short_id = '937c6e6b'").fetchone()
    assert one.text.startswith(headline.replace("`", "")) and "937c6e6b" in one.text
    (unknown,) = world.owner.says("/show ffffffff")
    assert "No session has the id" in unknown.text
    ambiguous_prefix = "9"  # several ids start with it in this corpus
    (choice,) = world.owner.says(f"/show {ambiguous_prefix}")
    assert "matches several sessions" in choice.text and len(choice.buttons) >= 2


def test_status_tells_what_is_indexed_and_what_is_scheduled(world: World) -> None:
    (status,) = world.owner.says("/status")
    for part in ("Sessions indexed: 31 (28 with work", "Last ingest:", "Scheduled ingest: off", "Bad lines skipped: 0",
                 "Extractor in use: deterministic (handoffs written by: deterministic 31)", "Daily digest here: off",
                 "LLM backend (llm.backend auto): no API key and "):
        assert part in status.text


# --- digest --------------------------------------------------------------------------------------------


def test_digest_command_sends_sessions_since_the_last_digest_grouped_by_project(world: World) -> None:
    (digest,) = world.owner.says("/digest", chat_id=-1001)
    lines = digest.text.split("\n")
    assert lines[0].startswith("Digest: 1 session since Mon 16 Feb 12:00")  # the last day, by default
    with contextlib.closing(sqlite3.connect(world.data / "index.sqlite3")) as conn:
        (headline,) = conn.execute("SELECT headline FROM handoffs WHERE short_id = '03eb5929'").fetchone()
    assert lines[2] == "project (1)" and lines[3].startswith(f"• {headline} · 17 Feb")
    (again,) = world.owner.says("/digest", chat_id=-1001)
    assert again.text.startswith("No sessions since")  # the clock is pinned: nothing new since


def test_digest_on_schedule_is_sent_at_the_chosen_time_and_can_be_turned_off(world: World) -> None:
    (confirm,) = world.owner.says("/digest 21:30")
    assert "21:30" in confirm.text
    (job,) = world.app.job_queue.get_jobs_by_name(f"digest:{OWNER}")
    assert job.next_t.astimezone(world.bot.settings.zone).strftime("%H:%M") == "21:30"
    world.bot.state.mark_digest_sent(OWNER, dt.datetime(2025, 11, 17, 20, 0, tzinfo=dt.UTC))
    mark = world.fake.mark()
    world.runner.run(job.run(world.app))  # what the scheduler does at 21:30
    (digest,) = world.fake.wait_messages(1, mark, OWNER)
    lines = digest.text.split("\n")
    assert lines[0] == "Digest: 7 sessions since Mon 17 Nov 20:00"  # since the last digest
    sessions, threads = digest.text.split("\n\nOpen threads\n")
    assert lines[2] == "claude_p (4)" and sessions.count("\n• ") == 7
    assert threads.split("\n") == [  # the open threads by project, each naming its session
        "claude_p", "• Not run: claude -p, held by the permission rules (2b4ed4c0)",  # the session facts
        "deep-manifest", "• Tests not rerun: pytest --cov-fail-under=99 failed; only pytest passed after (a7da6a22)",
        "• Not pushed: branch ahead of 'origin/master' by 4 commits (a7da6a22)",
        "• Next: Ready for git push when you want to publish! (a7da6a22)",
        "jssoundrecorder", "• Still running: pnpm dev, started in the background and never stopped (7acd37a8)",
        "• In progress: Test recording with new AudioWorklet implementation (7acd37a8)",
        "• To do: Test drone synth with new AudioWorklet implementation (7acd37a8)",
        "• To test (5 steps): Open browser console to check for any errors (7acd37a8)"]
    mark = world.fake.mark()
    world.runner.run(job.run(world.app))  # nothing new since: nothing is sent
    world.owner.says("/help")
    assert [c.text.split("\n")[0] for c in world.fake.since(mark, "sendMessage")] == ["Eywa finds your past "
                                                                                      "Claude Code sessions."]
    (off,) = world.owner.says("/digest off")
    assert "off" in off.text and not world.app.job_queue.get_jobs_by_name(f"digest:{OWNER}")


# --- safety --------------------------------------------------------------------------------------------


def test_a_stranger_gets_no_reply_and_no_data_for_any_kind_of_update(world: World) -> None:
    owners_message = world.owner.says("/show fe869ecb")[0]
    heard_before = len(world.transcriber.calls)
    mark = world.fake.mark()
    world.fake.send_text(STRANGER, "/start")
    world.fake.send_text(STRANGER, "/recall github action")
    world.fake.send_text(STRANGER, "github action")
    world.fake.send_text(STRANGER, "/last")
    world.fake.send_voice(STRANGER, OGG, duration=3)
    pressed = world.fake.press(STRANGER, owners_message.result, button(owners_message, "File"))
    world.fake.inline_query(STRANGER, "github")
    (help_reply,) = world.owner.says("/help")  # updates are handled in order: the stranger's are done
    assert [c.method for c in world.fake.since(mark)] == ["sendMessage"]
    assert help_reply.chat_id == OWNER
    assert world.fake.unanswered_callback(pressed)
    assert len(world.transcriber.calls) == heard_before


def test_flood_limit_is_waited_out_and_the_reply_still_arrives(world: World) -> None:
    world.fake.fail_next("sendMessage", code=429, retry_after=1)
    mark = world.fake.mark()
    (reply,) = world.owner.says("/help")
    attempts = world.fake.since(mark, "sendMessage")
    assert [a.ok for a in attempts] == [False, True] and "Too Many Requests" in attempts[0].error
    assert reply.text.startswith("Eywa finds")


def test_a_network_drop_is_retried(world: World) -> None:
    world.fake.fail_next("sendMessage", code=502, description="Bad Gateway", retry_after=None)
    mark = world.fake.mark()
    (reply,) = world.owner.says("/help")
    assert [a.ok for a in world.fake.since(mark, "sendMessage")] == [False, True]
    assert reply.text.startswith("Eywa finds")


def test_a_failing_handler_tells_the_owner_briefly_and_the_bot_goes_on(world: World,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> list[HandoffRecord]:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(world.bot.eywa, "recall", broken)
    (sorry,) = world.owner.says("anything")
    assert sorry.text == "Sorry, that failed (RuntimeError); the details are in the bot's log."
    monkeypatch.undo()
    assert len(world.owner.says("github action", replies=3)) == 3


def test_html_telegram_refuses_is_resent_as_plain_text(world: World) -> None:
    mark = world.fake.mark()
    world.runner.run(send_html(world.app.bot, OWNER, "<b>unclosed & <i>bad</b>"))
    first, second = world.fake.since(mark, "sendMessage")
    assert not first.ok and "can't parse entities" in first.error
    assert second.ok and second.text == "unclosed & bad"


def test_text_too_long_for_a_message_is_sent_as_a_document(world: World) -> None:
    mark = world.fake.mark()
    world.runner.run(send_html(world.app.bot, OWNER, "word " * 1000))
    refused, document = world.fake.since(mark)
    assert refused.error == "Bad Request: message is too long" and document.method == "sendDocument"


def _long_record(tmp_path: Path, sections: int, bullets: int) -> HandoffRecord:
    body = "# A long session\n\n" + "\n\n".join(
        f"## Part {s}\n" + "\n".join(f"- bullet {s}.{b} " + "x" * 80 for b in range(bullets))
        for s in range(sections))
    return HandoffRecord(session_id="11111111-2222-3333-4444-555555555555", short_id="11111111",
                         date=dt.date(2026, 2, 16), headline="A long session", projects=["big"], keywords=[],
                         substance=2, duration_min=90, model="m", body=body, path=tmp_path / "missing.md")


def test_long_handoff_is_split_on_section_boundaries_with_buttons_under_the_last(world: World,
                                                                                 tmp_path: Path) -> None:
    record = _long_record(tmp_path, sections=4, bullets=12)  # ~4,400 characters
    mark = world.fake.mark()
    world.runner.run(world.bot.send_handoff(OWNER, record, result_buttons("tok", 0, more=False)))
    first, second = world.fake.wait_messages(2, mark, OWNER)
    assert first.text.startswith("A long session") and second.text.startswith("Part ")
    assert not first.buttons and [b["text"] for b in second.buttons] == ["File", "Continue", "Forget"]


def test_handoff_too_long_for_a_few_messages_is_sent_as_one_markdown_document(world: World,
                                                                            tmp_path: Path) -> None:
    record = _long_record(tmp_path, sections=10, bullets=20)  # ~19,000 characters
    mark = world.fake.mark()
    world.runner.run(world.bot.send_handoff(OWNER, record, result_buttons("tok", 0, more=False)))
    (document,) = world.fake.wait_messages(1, mark, OWNER)
    filename, data = world.fake.file(document)
    assert filename == "2026-02-16-11111111.md" and data.decode() == record.body
    assert document.text.startswith("A long session")  # the caption


# --- a bot of its own: first ingest, scheduled ingest, restart -------------------------------------------


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[tuple[FakeTelegram, Path]]:
    with pytest.MonkeyPatch.context() as mp:
        clean_bot_env(mp, tmp_path, NOW)
        with FakeTelegram() as fake:
            yield fake, tmp_path / "data"


def test_ingest_command_builds_the_index_editing_one_message_while_the_bot_keeps_answering(
        fresh: tuple[FakeTelegram, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    fake, data = fresh
    app = build_application(bot_settings(fake, data, PROJECTS))
    owner = Owner(fake, OWNER)
    release = threading.Event()
    real = EywaBot._ingest_in_thread

    def held(self: EywaBot, progress: object) -> object:
        release.wait(30)  # the ingest is in its worker thread until the test lets it go
        return real(self, progress)

    monkeypatch.setattr(EywaBot, "_ingest_in_thread", held)
    with BotThread(app):
        (no_index,) = owner.says("github action")
        assert no_index.text.startswith("No index yet: /ingest")
        (started,) = owner.says("/ingest")
        assert started.text == "Ingesting new transcripts…"
        (help_reply,) = owner.says("/help")  # answered while the ingest runs
        assert help_reply.text.startswith("Eywa finds")
        mark = fake.mark()
        release.set()
        # On a busy machine the ingest outlasts the progress interval: "Ingesting… N/51 sessions" edits come first.
        edits = [c for c in fake.wait_for(lambda calls: any(c.method == "editMessageText" and c.text.startswith(
            "Ingest done") for c in calls), mark) if c.method == "editMessageText"]
        assert {e.params["message_id"] for e in edits} == {started.result["message_id"]}
        done = next(n for n, e in enumerate(edits) if e.text.startswith("Ingest done"))
        assert all(e.text.startswith("Ingesting… ") for e in edits[:done]), [e.text for e in edits]
        assert edits[done].text.startswith("Ingest done: 99 files, 99 new or changed; 30 sessions updated")
        assert len(owner.says("github action", replies=3)) == 3


def test_scheduled_ingest_runs_in_a_worker_thread_and_shows_in_status(fresh: tuple[FakeTelegram, Path]) -> None:
    fake, data = fresh
    app = build_application(bot_settings(fake, data, PROJECTS, ingest_every_minutes=30))
    with BotThread(app) as runner:
        (job,) = app.job_queue.get_jobs_by_name("ingest")
        runner.run(job.run(app))
        (status,) = Owner(fake, OWNER).says("/status")
        assert "Sessions indexed: 30 (27 with work" in status.text and "Next scheduled ingest:" in status.text
        assert "(every 30 min)" in status.text and "Last scheduled ingest: ok" in status.text


def test_digest_schedules_are_rebuilt_from_storage_at_start(fresh: tuple[FakeTelegram, Path]) -> None:
    fake, data = fresh
    settings = bot_settings(fake, data, PROJECTS, digest_time="08:15").model_copy(update={"timezone": "Europe/Berlin"})
    owner = Owner(fake, OWNER)
    with BotThread(build_application(settings)) as runner:
        (default,) = runner.app.job_queue.get_jobs_by_name(f"digest:{OWNER}")
        assert default.next_t.astimezone(settings.zone).strftime("%H:%M") == "08:15"  # the configured default
        owner.says("/digest 07:05", chat_id=-2002)
        owner.says("/digest off")
    restarted = build_application(settings)
    with BotThread(restarted):
        jobs = restarted.job_queue
        assert not jobs.get_jobs_by_name(f"digest:{OWNER}")  # "off" outlived the restart
        (group,) = jobs.get_jobs_by_name("digest:-2002")
        assert group.next_t.astimezone(settings.zone).strftime("%H:%M") == "07:05"
