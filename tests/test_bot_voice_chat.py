"""Voice queries end to end, after transcription: the "heard:" buttons with other readings, the spoken
answer (a real OGG/Opus voice note the fake Bot API decodes), `/voice on|off` across a restart, a
missing synthesiser; and typed queries, which never go through the spoken recall.

The bot's real Application polls the fake Bot API over HTTP on 127.0.0.1; the transcriber is a stub
(tests/test_voice.py proves the real one) so each test controls what was heard, word probabilities
included. The index is made of handoffs written here, where "giant leeks" (a garden) and "gitleaks"
(a secret scanner) are different sessions.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from eywa.bot.app import build_application
from eywa.bot.speech.hearing import Hearing
from eywa.core.api import Eywa
from eywa.core.config.settings import load_settings

from .conftest import clean_bot_env
from .fake_telegram import BotThread, Call, FakeTelegram, Owner, StubTranscriber, button
from .tools import debian

OWNER = 42
NOW = "2026-02-17T12:00:00Z"
OGG = b"OggS\x00\x02fake-opus-bytes"
GARDEN, SCANNER, PLOTS = "a1a1a1a1-0000-4000-8000-000000000001", "b2b2b2b2-0000-4000-8000-000000000002", \
    "c3c3c3c3-0000-4000-8000-000000000003"
LOG_VIEWER = "d4d4d4d4-0000-4000-8000-000000000004"
# A driver's question as tiny.en hears it: "gitleaks" written as two words it knows, unsure of both.
LEEKS = Hearing("the giant leeks config for the fake stripe key", raw="the giant leeks config for the fake stripe key",
                words=[("the", 0.3), ("giant", 0.31), ("leeks", 0.42), ("config", 0.9), ("for", 0.9), ("the", 0.9),
                       ("fake", 0.9), ("stripe", 0.8), ("key", 0.9)])


def _handoff(session_id: str, day: str, project: str, headline: str, keywords: str, happened: str,
             threads: str = "None.") -> str:
    return (f"---\nsession_id: {session_id}\ndate: {day}\nduration: 40m\nmodel: claude-opus-4-6\n"
            f"headline: {headline}\nprojects: [{project}]\nkeywords: [{keywords}]\nsubstance: 2\n---\n"
            f"# {headline}\n\n## What Happened\n- {happened}\n\n## Open Threads\n{threads}\n")


def write_handoffs(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "garden.md").write_text(_handoff(
        GARDEN, "2026-02-10", "allotment", "Giant leeks config for the allotment planner",
        "giant-leeks, allotment-planner", "Set the giant leeks config: spacing, the fake frost date, the key beds."))
    (folder / "scanner.md").write_text(_handoff(
        SCANNER, "2026-02-12", "cli", "Gitleaks allow-list for the test secrets file", "gitleaks, test-secrets",
        "Gitleaks flagged the fake Stripe key in test-secrets.txt; the config got an allow-list entry.",
        "- Ask security whether the gitleaks baseline belongs in CI"))
    (folder / "plots.md").write_text(_handoff(
        PLOTS, "2026-02-14", "notebooks", "Plot code log scale axes", "plot-axes, log-scale",
        "The plot code draws log scale axes for the latency charts."))
    (folder / "viewer.md").write_text(_handoff(
        LOG_VIEWER, "2026-02-15", "claude-code-log", "Cache the rendered transcripts", "cache-version",
        "claude-code-log keeps a cache of rendered pages, keyed by its version."))
    return folder


@dataclass
class World:
    fake: FakeTelegram
    home: Path
    transcriber: StubTranscriber
    owner: Owner

    def settings(self, **voice: object) -> object:
        telegram = {"token": self.fake.token, "allowed_user_ids": [OWNER], "api_base_url": self.fake.base_url,
                    "file_base_url": self.fake.base_file_url, "ingest_every_minutes": 0, "digest_time": ""}
        return load_settings(data_dir=self.home / "data", projects_dir=self.home / "projects", telegram=telegram,
                             voice=voice)

    def bot(self, **voice: object) -> BotThread:
        return BotThread(build_application(self.settings(**voice), transcriber=self.transcriber))

    def voice_query(self, heard: Hearing | str, replies: int) -> list[Call]:
        self.transcriber.reply = heard
        mark = self.fake.mark()
        self.fake.send_voice(OWNER, OGG, duration=4)
        return self.fake.wait_messages(replies, mark, OWNER)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with pytest.MonkeyPatch.context() as mp:
        clean_bot_env(mp, tmp_path, NOW)
        (tmp_path / "projects").mkdir()
        with FakeTelegram() as fake:
            w = World(fake, tmp_path, StubTranscriber(), Owner(fake, OWNER))
            eywa = Eywa(w.settings())  # type: ignore[arg-type]
            eywa.reindex(write_handoffs(tmp_path / "originals"))
            eywa.close()
            yield w


# --- the "heard:" buttons ------------------------------------------------------------------------------


def test_uncertain_words_get_a_button_whose_reading_finds_another_session(world: World) -> None:
    with world.bot():
        heard, *results = world.voice_query(LEEKS, 4)
        assert heard.text == f"heard: {LEEKS.text}"
        assert 1 <= len(heard.buttons) <= 3
        assert all(len(b["callback_data"].encode()) <= 64 for b in heard.buttons)
        assert "Giant leeks" in results[0].text  # what was heard, taken at its word
        mark = world.fake.mark()
        query_id = world.fake.press(OWNER, heard.result, button(heard, "gitleaks"))
        again, *other = world.fake.wait_messages(4, mark, OWNER)
        assert again.text == "heard: the gitleaks config for the fake stripe key"
        assert "Gitleaks allow-list" in other[0].text  # the tap re-ran recall on that reading
        assert not world.fake.unanswered_callback(query_id)


def test_a_correction_that_changed_words_offers_what_was_heard(world: World) -> None:
    corrected = Hearing("claude-code-log cache", raw="plot code log cache",
                        words=[("plot", 0.9), ("code", 0.9), ("log", 0.9), ("cache", 0.9)])
    with world.bot():
        heard, first, *_ = world.voice_query(corrected, 2)
        assert "Cache the rendered transcripts" in first.text
        mark = world.fake.mark()
        world.fake.press(OWNER, heard.result, button(heard, "plot"))
        again, other = world.fake.wait_messages(2, mark, OWNER)
        assert again.text == "heard: plot code log cache"
        assert "Plot code log scale axes" in other.text


def test_a_sure_hearing_gets_no_buttons(world: World) -> None:
    sure = Hearing("gitleaks allow list", raw="gitleaks allow list",
                   words=[("gitleaks", 0.95), ("allow", 0.97), ("list", 0.99)])
    with world.bot():
        heard, first = world.voice_query(sure, 2)
        assert heard.buttons == [] and "Gitleaks allow-list" in first.text


def test_an_expired_reading_button_is_answered(world: World) -> None:
    with world.bot():
        heard, *_ = world.voice_query(LEEKS, 2)
        query_id = world.fake.press(OWNER, heard.result, "h:nosuchtk:0")
        world.fake.wait_for(lambda calls: any(c.method == "answerCallbackQuery" for c in calls))
        assert not world.fake.unanswered_callback(query_id)


# --- the spoken answer ----------------------------------------------------------------------------------


def _answered_voice(call: Call) -> bool:
    """A sendVoice the fake has finished with (a call is listed as soon as it arrives)."""
    return call.method == "sendVoice" and (call.result is not None or not call.ok)


def _voice_notes(world: World, mark: int) -> list[Call]:
    return [c for c in world.fake.since(mark, "sendVoice") if c.ok]


@pytest.mark.slow  # flite speaks the answer
def test_voice_on_sends_a_short_real_voice_note_after_the_unchanged_text_answer(world: World) -> None:
    debian("flite", command="flite")
    with world.bot():
        texts_off = [c.text for c in world.voice_query(LEEKS, 4)]
        assert world.owner.says("/voice on")[0].text.startswith("Spoken answers are on")
        mark = world.fake.mark()
        texts_on = [c.text for c in world.voice_query(LEEKS, 4)]
        calls = world.fake.wait_for(lambda calls: any(_answered_voice(c) for c in calls), mark, timeout=30)
    assert texts_on == texts_off  # the text answer is unchanged
    (note,) = [c for c in calls if c.method == "sendVoice"]
    assert note.ok, note.error  # the fake decoded it as OGG/Opus
    assert 2 < note.result["decoded_seconds"] < 20
    last_text = max(c.at for c in calls if c.method == "sendMessage")
    assert note.at > last_text  # after the text, never before
    from eywa.bot.speech import transcribe as voice

    _, data = note.files["voice"]
    said = voice.recognize(voice.decode(data), []).text.lower()
    assert "found three sessions" in said and "allotment planner" in said  # the count, the best one's headline


def _spoken_answers_to(world: World, *asked: Hearing | str) -> int:
    """Voice queries one after another, then one more with spoken answers on: how many voice notes came
    for those before it (a note comes after its query's text, so the last one's arriving closes them)."""
    mark = world.fake.mark()
    for heard in asked:
        if isinstance(heard, Hearing):
            world.voice_query(heard, 4)
        else:
            world.owner.says(heard)
    world.owner.says("/voice on")
    world.voice_query(LEEKS, 4)
    world.fake.wait_for(lambda calls: any(_answered_voice(c) for c in calls[len(calls) - 6 :]), mark, timeout=30)
    notes = _voice_notes(world, mark)
    assert notes and notes[-1].ok
    return len(notes) - 1


def test_voice_setting_is_kept_across_a_restart(world: World) -> None:
    debian("flite", command="flite")
    with world.bot():
        world.owner.says("/voice on")
    with world.bot():
        mark = world.fake.mark()
        world.voice_query(LEEKS, 4)
        world.fake.wait_for(lambda calls: any(_answered_voice(c) and c.ok for c in calls), mark, timeout=30)
        assert world.owner.says("/voice off")[0].text.startswith("Spoken answers are off")
    with world.bot():
        assert _spoken_answers_to(world, LEEKS) == 0


def test_configured_spoken_answers_apply_to_a_chat_that_never_chose(world: World) -> None:
    debian("flite", command="flite")
    with world.bot(spoken_answers=True):
        mark = world.fake.mark()
        world.voice_query(LEEKS, 4)
        world.fake.wait_for(lambda calls: any(_answered_voice(c) and c.ok for c in calls), mark, timeout=30)
        world.owner.says("/voice off")
        assert _spoken_answers_to(world, LEEKS) == 0


def test_a_typed_query_gets_no_spoken_answer(world: World) -> None:
    debian("flite", command="flite")
    with world.bot(spoken_answers=True):
        assert _spoken_answers_to(world, "gitleaks allow list") == 0


def test_a_missing_synthesiser_means_text_only_and_one_line_in_the_log(world: World,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    with world.bot(spoken_answers=True, synthesizer="eywa-no-such-synthesiser"), caplog.at_level(logging.INFO):
        mark = world.fake.mark()
        first = [c.text for c in world.voice_query(LEEKS, 4)]
        second = [c.text for c in world.voice_query(LEEKS, 4)]
        reply = world.owner.says("/voice")[0].text
    assert first == second and len(first) == 4
    assert _voice_notes(world, mark) == [] and not world.fake.since(mark, "sendVoice")
    lines = [r for r in caplog.records if "eywa-no-such-synthesiser" in r.getMessage()]
    assert len(lines) == 1 and "text only" in lines[0].getMessage()
    assert "not installed" in reply


# --- typed queries ----------------------------------------------------------------------------------------


def test_a_typed_query_never_goes_through_the_spoken_side(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    from eywa.bot.speech import readings as spoken

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a typed query reached the spoken side")

    for name in ("readings", "matches"):
        monkeypatch.setattr(spoken, name, refuse)
    eywa = Eywa(world.settings())  # type: ignore[arg-type]
    try:
        expected = [r.headline for r in eywa.recall("giant leeks config")]
    finally:
        eywa.close()
    with world.bot():
        results = world.owner.says("giant leeks config", len(expected))
    assert [r.text.splitlines()[0] for r in results] == expected
