"""The spoken side without a bot: heard words matched to the index's by sound and spelling (the "heard:"
readings), words the recogniser invented left out, and what the spoken answer says."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from eywa.bot.speech import answer as spoken_answer
from eywa.bot.speech import readings as spoken
from eywa.bot.speech import transcribe as voice
from eywa.core.api import HandoffRecord, Results
from eywa.core.retrieval.time_words import Window

# Index words as `Eywa.vocabulary(min_sessions=1)` gives them, ordinary ones included.
WORDS = ("gitleaks", "openclaw", "webhooks", "eventpayload", "posthog", "goreleaser", "checkpoint", "release",
         "latest", "entire", "agents", "pytest")
LEX = spoken.lexicon(tuple(voice.unfamiliar(list(WORDS))))


def sounds_like(heard: str) -> list[str]:
    return list(dict.fromkeys(m.word for m in spoken.matches(spoken.tokens_of(heard), LEX)))


def test_words_whisper_split_or_misheard_find_the_index_word() -> None:
    assert sounds_like("the giant leeks thing with the fake stripe key") == ["gitleaks"]
    assert sounds_like("the open claw integration plan") == ["openclaw"]
    assert sounds_like("removed from event poll load") == ["eventpayload"]


def test_words_heard_right_add_nothing() -> None:
    # Known English words alone, index words already heard, and their inflections are left as they are.
    assert sounds_like("latest tests for the entire agent release") == []
    assert sounds_like("the gitleaks allow list") == []
    assert spoken.lexicon(("posthog", "release")).words == ("posthog", "release")


def test_words_the_model_invented_after_the_speech_are_left_out() -> None:
    heard = [("add", 0.09), ("readme", 0.44), ("files", 0.9), ("to", 0.9), ("entire", 0.35), ("created", 0.49),
             ("locations", 0.8), ("code.", 0.0007), ("good.", 0.004)]
    assert voice.kept_text(heard) == "add readme files to entire created locations"
    said = [("ruby", 0.003), ("text", 0.9), ("font", 0.8), ("size", 0.9)]  # a first word can be as unlikely
    assert voice.kept_text(said) == "ruby text font size"


def _record(headline: str, threads: str, match: bool = True) -> HandoffRecord:
    body = f"# {headline}\n\n## What Happened\n- it happened\n\n## Open Threads\n{threads}\n"
    return HandoffRecord("b2b2b2b2-0000-4000-8000-000000000002", "b2b2b2b2", dt.date(2026, 2, 12), headline, ["cli"],
                         [], 2, 40, "claude-opus-4-6", body, Path("x.md"), score=float(match), match=match)


def _found(records: list[HandoffRecord], words: str = "gitleaks", **how: object) -> Results:
    return Results(records, words=words, today=dt.date(2026, 2, 13), **how)  # type: ignore[arg-type]


def test_spoken_answer_says_the_count_and_the_best_sessions_date_project_headline_and_first_thread() -> None:
    records = [_record("Gitleaks allow-list for `test-secrets.txt`", "- Ask security about the baseline\n- Another"),
               _record("Other", "None."), _record("Unrelated", "None.", match=False)]
    assert spoken_answer.answer_text(_found(records)) == (
        "I found two sessions. The best is from Thursday 12 February, in cli: Gitleaks allow-list for "
        "test-secrets.txt. Open thread: Ask security about the baseline.")


def test_spoken_answer_stays_short_whatever_the_handoff_says() -> None:
    long = _record(" ".join(["word"] * 60), "- " + " ".join(["thread"] * 60))
    text = spoken_answer.answer_text(_found([long] * 12))
    assert len(text.split()) <= spoken_answer.MAX_WORDS
    assert text.startswith("I found 12 sessions.")
    assert spoken_answer.answer_text(_found([_record("x", "None.", match=False)])).startswith(
        "I found no session that matches")


def test_spoken_answer_to_what_did_i_do_yesterday_tells_the_newest_of_that_day() -> None:
    yesterday = Window(dt.date(2026, 2, 12), dt.date(2026, 2, 12))
    listed = _found([_record("Gitleaks allow-list", "None.", match=False)], words="", within=yesterday)
    assert spoken_answer.answer_text(listed) == (
        "I found one session. The newest is from Thursday 12 February, in cli: Gitleaks allow-list.")
    nothing_then = _found([_record("Later work", "None.", match=False)], words="", missed=yesterday)
    assert spoken_answer.answer_text(nothing_then) == "I found no session then. The text shows the latest ones."
