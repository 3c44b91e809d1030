"""The spoken answer to a voice query, for an owner who is driving: a few sentences (how many sessions
were found; for the best one its date, project, headline and first open thread) synthesised on this
machine by a speech program (flite by default, run as a program: no network) and encoded as the
OGG/Opus voice note Telegram plays (PyAV, which faster-whisper brings).

A missing synthesiser means text only, said once in the log.
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from eywa.core.api import Results
    from eywa.core.config.settings import VoiceSettings

log = logging.getLogger("eywa.bot")

# At flite's pace 45 words, with the pauses between sentences, keep the note short (bench/RESULTS.md).
MAX_WORDS = 45
HEADLINE_WORDS = 16
THREAD_WORDS = 14
SYNTH_TIMEOUT_SECONDS = 20.0
_NUMBERS = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
_missing_told: set[str] = set()
_told_lock = threading.Lock()


def _speakable(text: str, limit: int) -> str:
    """Words a synthesiser reads well: no markup, paths read as words, at most `limit` words."""
    text = re.sub(r"`+|\*+|#+|\[|\]|\(|\)|<[^>]*>", " ", text)
    text = re.sub(r"(?<=\w)[/_](?=\w)", " ", text)
    words = text.split()
    cut = " ".join(words[:limit])
    return cut.rstrip(".,;:") + ("…" if len(words) > limit else "")


def answer_text(results: Results) -> str:
    """What the voice note says about these results: the best match (best first), or the newest of a listing
    ("what did I do yesterday")."""
    listing = not results.words
    found = list(results) if listing and results.missed is None else [r for r in results if r.match]
    if not found:
        return ("I found no session then. The text shows the latest ones." if listing
                else "I found no session that matches. The text shows the latest ones.")
    count = _NUMBERS[len(found)] if len(found) < len(_NUMBERS) else str(len(found))
    best = found[0]
    project = ", ".join(best.projects[:2]) or "no project"
    parts = [f"I found {count} session{'s' if len(found) != 1 else ''}.",
             f"The {'newest' if listing else 'best'} is from {best.date:%A %-d %B}, in {project}: "
             f"{_speakable(best.headline, HEADLINE_WORDS)}."]
    threads = [t for t in best.open_threads if t.strip() and t.strip().lower() not in ("none", "none.")]
    if threads:
        parts.append(f"Open thread: {_speakable(threads[0], THREAD_WORDS)}.")
    words = " ".join(parts).split()
    return " ".join(words[:MAX_WORDS])


def synthesizer(voice: VoiceSettings) -> str | None:
    """The synthesiser's executable, or None (logged once per program) when it is not installed."""
    found = shutil.which(voice.synthesizer)
    if found is None:
        with _told_lock:
            if voice.synthesizer not in _missing_told:
                _missing_told.add(voice.synthesizer)
                log.warning("spoken answers are text only: the synthesiser %r is not installed "
                            "(apt-get install flite, or set voice.synthesizer)", voice.synthesizer)
    return found


def synthesize(text: str, voice: VoiceSettings) -> tuple[bytes, float] | None:
    """`text` spoken as an OGG/Opus voice note and its length in seconds; None without a synthesiser
    or when it fails (logged). CPU-bound: the bot runs it in a worker thread."""
    from eywa.bot.speech.transcribe import SAMPLE_RATE, VoiceError, decode, encode_opus

    program = synthesizer(voice)
    if program is None:
        return None
    with tempfile.TemporaryDirectory(prefix="eywa-say-") as tmp:
        wav = Path(tmp) / "answer.wav"
        try:
            subprocess.run([program, "-voice", voice.synthesizer_voice, "-t", text, "-o", str(wav)],
                           check=True, capture_output=True, timeout=SYNTH_TIMEOUT_SECONDS)
            samples = decode(wav.read_bytes(), max_seconds=60)
        except (OSError, subprocess.SubprocessError, VoiceError) as exc:
            log.warning("spoken answer not sent: %s failed (%s)", voice.synthesizer, type(exc).__name__)
            return None
    return encode_opus(samples), samples.size / SAMPLE_RATE
