"""The one door to voice transcription (bot/voice.py, written separately): imported lazily, so the bot
starts without the speech stack, and its `VoiceError` turned into a message for the owner.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.config import Settings

Transcriber = Callable[[bytes, list[str]], str]


class VoiceFailed(Exception):
    """The voice note could not be turned into words; the message says why, for the owner."""


def transcriber(settings: Settings) -> Transcriber:
    """The transcriber the bot uses: bot/voice.py with the bot's own settings (model, limits, backend)."""

    def transcribe(ogg: bytes, hotwords: list[str]) -> str:
        """OGG/Opus bytes to a query, biased toward `hotwords` (the index's vocabulary) and matched
        against it. CPU-bound: the bot runs it in a worker thread."""
        try:
            from bot import voice
        except ImportError as exc:
            raise VoiceFailed(f"Voice notes are not available on this install ({exc}); type the words instead.") \
                from exc
        hotwords = voice.unfamiliar(hotwords)
        try:
            text = voice.transcribe(ogg, hotwords, settings)
        except voice.VoiceError as exc:
            raise VoiceFailed(str(exc) or "I could not make out that voice note; type the words instead.") from exc
        return voice.correct_query(text, hotwords) if text.strip() else text

    return transcribe
