"""The Forget button under a handoff: it asks first (Forget it / Keep it), only the owner's presses count,
its callback data stays under Telegram's 64 bytes, and "Forget it" removes the session as `eywa forget` does.
The real Application against the fake Bot API over HTTP on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from eywa.bot.app import build_application
from eywa.core.api import Eywa

from .conftest import clean_bot_env, link_corpus
from .fake_telegram import BotThread, FakeTelegram, Owner, StubTranscriber, bot_settings, button

OWNER, STRANGER = 42, 666
NOW = "2026-03-01T12:00:00Z"


@pytest.fixture
def bot(tmp_path: Path) -> Iterator[tuple[FakeTelegram, Owner, Path]]:
    with pytest.MonkeyPatch.context() as mp:
        clean_bot_env(mp, tmp_path, NOW)
        projects = tmp_path / "projects"
        link_corpus(projects, 4)
        with FakeTelegram() as fake:
            settings = bot_settings(fake, tmp_path / "data", projects)
            eywa = Eywa(settings)
            eywa.ingest(llm=False)
            eywa.close()
            with BotThread(build_application(settings, transcriber=StubTranscriber())):
                yield fake, Owner(fake, OWNER), tmp_path / "data"


def test_forget_asks_first_then_removes_the_session_and_a_stranger_cannot(bot) -> None:
    fake, owner, data = bot
    (shown,) = owner.says("/last 1")
    short_id = shown.text.split("· ")[-1].split()[0]
    assert all(len(b["callback_data"].encode()) <= 64 for b in shown.buttons)
    _, (question,) = owner.presses(shown, button(shown, "Forget"))
    assert question.text.startswith("Forget ") and short_id in question.text
    assert [b["text"] for b in question.buttons] == ["Forget it", "Keep it"]
    assert all(len(b["callback_data"].encode()) <= 64 for b in question.buttons)

    query = fake.press(STRANGER, question.result, button(question, "Forget it"))
    owner.says("/help")  # updates are handled in order: the stranger's press is done, and ignored
    assert fake.unanswered_callback(query)
    assert short_id in owner.says(f"/show {short_id}")[0].text.split("\n")[1]

    mark = fake.mark()
    fake.press(OWNER, question.result, button(question, "Keep it"))
    owner.says("/help")
    assert any(c.method == "editMessageText" and "Kept" in c.text for c in fake.since(mark))
    assert short_id in owner.says(f"/show {short_id}")[0].text.split("\n")[1]

    (shown,) = owner.says(f"/show {short_id}")
    _, (question,) = owner.presses(shown, button(shown, "Forget"))
    mark = fake.mark()
    fake.press(OWNER, question.result, button(question, "Forget it"))
    owner.says("/help")
    edits = [c for c in fake.since(mark) if c.method == "editMessageText"]
    assert edits and edits[-1].text.startswith(f"Forgot {short_id}") and "--undo" in edits[-1].text
    assert owner.says(f"/show {short_id}")[0].text.startswith("No session has the id")
    assert not [p for p in (data / "handoffs").rglob(f"{short_id}*")]
