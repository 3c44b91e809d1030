"""The bot's one door to bot/voice.py: a stand-in voice module proves what passes through it."""

from __future__ import annotations

import sys
import types

import pytest

import bot
from bot import hearing


class VoiceError(Exception):
    pass


def install_voice(monkeypatch: pytest.MonkeyPatch, module: types.ModuleType | None) -> None:
    monkeypatch.setitem(sys.modules, "bot.voice", module)  # None makes the import fail
    if module is None:
        monkeypatch.delattr(bot, "voice", raising=False)
    else:
        monkeypatch.setattr(bot, "voice", module, raising=False)


def voice_module(transcribe: object, correct_query: object = None) -> types.ModuleType:
    module = types.ModuleType("bot.voice")
    module.VoiceError = VoiceError  # type: ignore[attr-defined]
    module.transcribe = transcribe  # type: ignore[attr-defined]
    if correct_query is not None:
        module.correct_query = correct_query  # type: ignore[attr-defined]
    return module


def test_audio_and_hotwords_reach_the_voice_module_and_its_correction_applies(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[bytes, list[str]]] = []

    def transcribe(ogg: bytes, hotwords: list[str]) -> str:
        seen.append((ogg, hotwords))
        return "bracket os telegram"

    install_voice(monkeypatch, voice_module(transcribe, lambda text, words: text.replace("bracket os", words[0])))
    assert hearing.transcribe(b"OggS", ["pratchett-os"]) == "pratchett-os telegram"
    assert seen == [(b"OggS", ["pratchett-os"])]


def test_voice_error_becomes_a_message_for_the_owner(monkeypatch: pytest.MonkeyPatch) -> None:
    def transcribe(ogg: bytes, hotwords: list[str]) -> str:
        raise VoiceError("That voice note could not be decoded.")

    install_voice(monkeypatch, voice_module(transcribe))
    with pytest.raises(hearing.VoiceFailed, match="could not be decoded"):
        hearing.transcribe(b"junk", [])


def test_missing_voice_module_says_voice_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    install_voice(monkeypatch, None)
    with pytest.raises(hearing.VoiceFailed, match="not available on this install"):
        hearing.transcribe(b"OggS", [])
