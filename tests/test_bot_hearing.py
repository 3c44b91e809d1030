"""The bot's one door to bot/speech/transcribe.py: a stand-in voice module proves what passes through it."""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass

import pytest

from eywa.bot import speech
from eywa.bot.speech import hearing


class VoiceError(Exception):
    pass


@dataclass
class Heard:
    text: str
    words: list[tuple[str, float]]


def install_voice(monkeypatch: pytest.MonkeyPatch, module: types.ModuleType | None) -> None:
    monkeypatch.setitem(sys.modules, "eywa.bot.speech.transcribe", module)  # None makes the import fail
    if module is None:
        monkeypatch.delattr(speech, "transcribe", raising=False)
    else:
        monkeypatch.setattr(speech, "transcribe", module, raising=False)


SETTINGS = object()  # stands for the bot's Settings: only passed through


def voice_module(transcribe: object, correct_query: object = lambda text, words: text) -> types.ModuleType:
    """A stand-in eywa.bot.speech.transcribe whose `transcribe` returns text (wrapped as the real module's `Heard`)."""
    module = types.ModuleType("eywa.bot.speech.transcribe")
    module.VoiceError = VoiceError  # type: ignore[attr-defined]
    module.transcribe = lambda *args: Heard(transcribe(*args), [("word", 0.5)])  # type: ignore[attr-defined]
    module.correct_query = correct_query  # type: ignore[attr-defined]
    module.unfamiliar = lambda terms: [t for t in terms if t != "review"]  # type: ignore[attr-defined]
    return module


def test_audio_hotwords_and_settings_reach_the_voice_module_and_its_correction_applies(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[bytes, list[str], object]] = []

    def transcribe(ogg: bytes, hotwords: list[str], settings: object) -> str:
        seen.append((ogg, hotwords, settings))
        return "bracket os telegram"

    install_voice(monkeypatch, voice_module(transcribe, lambda text, words: text.replace("bracket os", words[0])))
    heard = hearing.transcriber(SETTINGS)(b"OggS", ["review", "pratchett-os"])
    assert heard == hearing.Hearing("pratchett-os telegram", raw="bracket os telegram", words=[("word", 0.5)])
    assert seen == [(b"OggS", ["pratchett-os"], SETTINGS)]  # only the words the speech model may not know


def test_voice_error_becomes_a_message_for_the_owner(monkeypatch: pytest.MonkeyPatch) -> None:
    def transcribe(ogg: bytes, hotwords: list[str], settings: object) -> str:
        raise VoiceError("That voice note could not be decoded.")

    install_voice(monkeypatch, voice_module(transcribe))
    with pytest.raises(hearing.VoiceFailed, match="could not be decoded"):
        hearing.transcriber(SETTINGS)(b"junk", [])


def test_missing_voice_module_says_voice_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    install_voice(monkeypatch, None)
    with pytest.raises(hearing.VoiceFailed, match="not available on this install"):
        hearing.transcriber(SETTINGS)(b"OggS", [])
