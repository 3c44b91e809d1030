"""The one door to voice transcription (bot/speech/transcribe.py, written separately): imported lazily, so the bot
starts without the speech stack, and its `VoiceError` turned into a message for the owner.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from eywa.core.errors import EywaError

if TYPE_CHECKING:
    from eywa.core.config.settings import Settings


@dataclass
class Hearing:
    """What a voice note said: the query (corrected toward the index's words), what the recogniser
    wrote before that correction, and each word it wrote with its probability (empty when the backend
    gives none)."""

    text: str
    raw: str = ""
    words: list[tuple[str, float]] = field(default_factory=list)


Transcriber = Callable[[bytes, list[str]], Hearing]


class VoiceFailed(EywaError):
    """The voice note could not be turned into words; the message says why, for the owner."""


def transcriber(settings: Settings) -> Transcriber:
    """The transcriber the bot uses: bot/speech/transcribe.py with the bot's own settings (model, limits, backend)."""

    def transcribe(ogg: bytes, hotwords: list[str]) -> Hearing:
        """OGG/Opus bytes to a query, biased toward `hotwords` (the index's vocabulary) and matched
        against it. CPU-bound: the bot runs it in a worker thread."""
        try:
            from eywa.bot.speech import transcribe as voice
        except ImportError as exc:
            raise VoiceFailed(f"Voice notes are not available on this install ({exc}); type the words instead.") \
                from exc
        hotwords = voice.unfamiliar(hotwords)
        try:
            heard = voice.transcribe(ogg, hotwords, settings)
        except voice.VoiceError as exc:
            raise VoiceFailed(str(exc) or "I could not make out that voice note; type the words instead.") from exc
        text = voice.correct_query(heard.text, hotwords) if heard.text.strip() else heard.text
        return Hearing(text=text, raw=heard.text, words=heard.words)

    return transcribe
