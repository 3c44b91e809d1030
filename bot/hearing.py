"""The one door to voice transcription (bot/voice.py, written separately): imported lazily, so the bot
starts without the speech stack, and its `VoiceError` turned into a message for the owner.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

Transcriber = Callable[[bytes, list[str]], str]
log = logging.getLogger("eywa.bot")


class VoiceFailed(Exception):
    """The voice note could not be turned into words; the message says why, for the owner."""


def transcribe(ogg: bytes, hotwords: list[str]) -> str:
    """OGG/Opus bytes to a query, biased toward `hotwords` (the index's vocabulary) and corrected to it
    by the voice module's `correct_query` when it has one. CPU-bound: the bot runs it in a worker thread."""
    try:
        from bot import voice
    except ImportError as exc:
        raise VoiceFailed(f"Voice notes are not available on this install ({exc}); type the words instead.") from exc
    try:
        text = voice.transcribe(ogg, hotwords)
    except voice.VoiceError as exc:
        raise VoiceFailed(str(exc) or "I could not make out that voice note; type the words instead.") from exc
    correct = getattr(voice, "correct_query", None)
    if correct is None or not text.strip():
        return text
    try:
        return correct(text, hotwords)
    except TypeError:  # a different signature than (text, vocabulary): the transcript is still good
        log.warning("bot.voice.correct_query(text, vocabulary) failed; using the transcript as heard", exc_info=True)
        return text
