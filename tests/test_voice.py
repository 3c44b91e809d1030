"""Voice notes: decoding, rejection of unusable notes, recognition biased toward the index's words,
correction of mishearings, and the OpenAI-compatible backend against a fake server.

The fixtures are real speech (flite's awb voice, OGG/Opus as Telegram sends it), made by
tests/fixtures/voice/make_voice_fixtures.py. The model loads once for the module (about half a second).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eywa.bot.speech import transcribe as voice
from eywa.core.config.settings import Settings, VoiceSettings, load_settings
from eywa.core.errors import ConfigError
from eywa.core.retrieval import spoken

from .conftest import ROOT

pytestmark = pytest.mark.slow  # real speech through faster-whisper

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "voice"
# Hotwords as the bot passes them (Eywa.vocabulary: project names, then distinctive keywords).
VOCABULARY = ["cli", "claude-code-log", "pratchett-os", "eywa", "gitleaks", "posthog", "jsonl", "wingman",
              "gemini", "goreleaser", "entire-cli", "shadow-branch", "token-usage", "manual-commit",
              # keywords that are ordinary words joined: no heard phrase should be bent toward them
              "cli-integration", "checkpoint-flag", "entire-wrapper", "enable", "worktrees", "auto-commit",
              "telemetry-detached", "cli-explain", "cli-strategy", "repo-root", "chunk-size"]


def clip(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


@pytest.fixture(scope="module")
def settings() -> Settings:
    return Settings(voice=VoiceSettings())  # the defaults: local backend, bundled tiny.en, 60 s


@pytest.fixture(scope="module", autouse=True)
def model() -> Any:
    return voice.load_model()  # once for the module; transcribe() reuses it


# --- decoding and rejection ------------------------------------------------------------------------


def test_telegram_voice_note_decodes_to_16khz_mono() -> None:
    samples = voice.decode(clip("plain_query.oga"))
    assert samples.dtype == np.float32 and samples.ndim == 1
    assert 1.5 < samples.size / voice.SAMPLE_RATE < 4  # flite says the query in about 2.5 s
    assert voice.loudness(samples) > 10 * voice.SILENCE_RMS


def test_any_container_pyav_reads_is_resampled_and_downmixed() -> None:
    import av

    # One second of a 440 Hz tone, 44.1 kHz stereo WAV: not what Telegram sends, still a voice note.
    tone = (0.3 * np.sin(2 * np.pi * 440 * np.arange(44_100) / 44_100) * 32767).astype(np.int16)
    out = io.BytesIO()
    with av.open(out, mode="w", format="wav") as container:
        stream = container.add_stream("pcm_s16le", rate=44_100, layout="stereo")
        frame = av.AudioFrame.from_ndarray(np.stack([tone, tone]).T.reshape(1, -1), format="s16", layout="stereo")
        frame.rate = 44_100
        for packet in [*stream.encode(frame), *stream.encode(None)]:
            container.mux(packet)
    samples = voice.decode(out.getvalue())
    assert abs(samples.size - voice.SAMPLE_RATE) < 200
    # FFmpeg's downmix adds the channels at -3 dB each: a 0.3 sine in both comes out at RMS 0.3, not 0.42.
    assert 0.25 < voice.loudness(samples) < 0.35


def test_silent_voice_note_is_rejected(settings: Settings) -> None:
    with pytest.raises(voice.VoiceError, match="heard nothing"):
        voice.transcribe(clip("silence.oga"), VOCABULARY, settings)


def test_noise_without_words_is_rejected(settings: Settings) -> None:
    # Loud enough to pass the loudness check: voice activity detection finds no speech in it.
    noise = np.random.default_rng(7).normal(0, 0.1, 3 * voice.SAMPLE_RATE).astype(np.float32)
    with pytest.raises(voice.VoiceError, match="heard nothing"):
        voice.transcribe(voice.encode_opus(noise), [], settings)


def test_voice_note_longer_than_the_limit_is_rejected(settings: Settings) -> None:
    speech = voice.decode(clip("plain_query.oga"))
    long_note = voice.encode_opus(np.tile(speech, int(61 * voice.SAMPLE_RATE / speech.size) + 1))
    with pytest.raises(voice.VoiceError, match="longer than 60 s"):
        voice.transcribe(long_note, [], settings)
    shorter_limit = Settings(voice=VoiceSettings(max_seconds=1))  # the clip lasts about 2.5 s
    with pytest.raises(voice.VoiceError, match="longer than 1 s"):
        voice.transcribe(clip("plain_query.oga"), [], shorter_limit)


@pytest.mark.parametrize(
    "data",
    [b"", b"not audio at all " * 50, b"OggS" + bytes(200), clip("plain_query.oga")[:300]],
    ids=["empty", "text", "ogg-magic-then-zeros", "cut-off-header"],
)
def test_undecodable_input_is_rejected(settings: Settings, data: bytes) -> None:
    with pytest.raises(voice.VoiceError, match="could not decode"):
        voice.transcribe(data, VOCABULARY, settings)


# --- recognition ---------------------------------------------------------------------------------------


def test_plain_query_is_transcribed(settings: Settings) -> None:
    text = voice.transcribe(clip("plain_query.oga"), [], settings).text
    assert spoken.correct_query(text, VOCABULARY).lower().strip(" ?.") == "how did we fix the wingman review"


def test_project_name_is_recognised_with_vocabulary_biasing(settings: Settings) -> None:
    plain = voice.transcribe(clip("posthog.oga"), [], settings).text
    biased = voice.transcribe(clip("posthog.oga"), VOCABULARY, settings).text
    assert "posthog" not in plain.lower()  # heard as "The post should tell a metric."
    assert "posthog" in biased.lower()


def _handoff(session_id: str, day: str, project: str, headline: str, keywords: str) -> str:
    return (f"---\nsession_id: {session_id}\ndate: {day}\nduration: 40m\nmodel: claude-opus-4-6\n"
            f"headline: {headline}\nprojects: [{project}]\nkeywords: [{keywords}]\nsubstance: 2\n---\n"
            f"# {headline}\n\n## What Happened\n- {headline}\n\n## Open Threads\nNone.\n")


def test_spoken_project_name_finds_its_session_through_the_index_vocabulary(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The bot's whole voice path: hotwords from Eywa.vocabulary, transcribe, correct_query, recall.
    from eywa.bot.speech import hearing
    from eywa.core.api import Eywa

    monkeypatch.setenv("EYWA_NOW", "2026-02-17")
    originals = tmp_path / "originals"
    originals.mkdir()
    (originals / "a1b2c3d4.md").write_text(
        _handoff("a1b2c3d4", "2026-02-10", "pratchett-os", "Tune the disc scheduler", "disc-scheduler, turtle-queue"))
    (originals / "e5f6a7b8.md").write_text(
        _handoff("e5f6a7b8", "2026-02-16", "eywa", "Wire digest into the bot", "telegram-digest, quiet-hours"))
    eywa = Eywa(load_settings(data_dir=tmp_path / "data", projects_dir=tmp_path / "projects"))
    try:
        eywa.reindex(originals)
        vocabulary = eywa.vocabulary(60)
        assert "pratchett-os" in vocabulary

        def first_hit(note: bytes, hotwords: list[str]) -> str:
            return eywa.recall(hearing.transcriber(settings)(note, hotwords).text, max_results=1)[0].short_id

        assert first_hit(clip("pratchett_os.oga"), vocabulary) == "a1b2c3d4"
        assert first_hit(clip("pratchett_os.oga"), []) != "a1b2c3d4"  # heard as "Find the project of session."
    finally:
        eywa.close()


def test_correction_recovers_what_biasing_alone_mishears(settings: Settings) -> None:
    # tiny.en hears "claude code log" as "plot code log" even when biased, and "git leaks" as "jet leaks".
    heard = voice.transcribe(clip("claude_code_log.oga"), VOCABULARY, settings).text
    assert "claude" not in heard.lower()
    assert "claude-code-log" in spoken.correct_query(heard, VOCABULARY)
    heard = voice.transcribe(clip("git_leaks.oga"), [], settings).text
    assert "gitleaks" not in heard.lower()
    assert "gitleaks" in spoken.correct_query(heard, VOCABULARY)


def test_model_is_loaded_once_and_shared_across_threads(model: Any) -> None:
    seen: list[Any] = []
    threads = [threading.Thread(target=lambda: seen.append(voice.load_model())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(m is model for m in seen) and len(seen) == 4


def test_configured_model_that_cannot_load_is_a_voice_error(tmp_path: Path) -> None:
    broken = Settings(voice=VoiceSettings(model=str(tmp_path / "no-such-model")))
    with pytest.raises(voice.VoiceError, match="not available"):
        voice.transcribe(clip("plain_query.oga"), [], broken)


def test_importing_the_module_does_not_load_the_speech_stack() -> None:
    # The bot imports eywa.bot.speech.transcribe at start; faster-whisper and PyAV take seconds and load on first use.
    code = ("import sys, eywa.bot.speech.transcribe; "
            "print(sorted({'av', 'faster_whisper', 'numpy', 'httpx'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_hotword_prompt_uses_the_spoken_form_and_respects_the_budget() -> None:
    assert voice.hotword_prompt(["claude-code-log", "pratchett_os", "gitleaks", "claude-code-log"]) == (
        "claude code log, pratchett os, gitleaks"
    )
    many = [f"term{i}" for i in range(500)]
    assert 0 < len(voice.hotword_prompt(many, budget=30).split(", ")) < 20


# --- correcting mishearings ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heard", "expected"),
    [
        ("what did I do in plot code log?", "what did I do in claude-code-log?"),
        ("what did I do in plotcode log?", "what did I do in claude-code-log?"),
        ("what did I do in Claude Caudelog", "what did I do in claude-code-log"),
        ("What did we change in jet leaks?", "What did we change in gitleaks?"),
        ("J.S.O.N.L. parsing.", "jsonl parsing."),
        ("find the pratchett o s session", "find the pratchett-os session"),
        ("there is no such thing as a retry for go releaser", "there is no such thing as a retry for goreleaser"),
        ("Handel Gemini as gemini", "Handel Gemini as gemini"),
    ],
)
def test_correct_query_fixes_known_mishearings(heard: str, expected: str) -> None:
    assert spoken.correct_query(heard, VOCABULARY) == expected


@pytest.mark.parametrize(
    "query",
    [
        "how did we fix the failing tests",
        "what did I do yesterday about the release notes",
        "fix code log rotation",
        "clearer expectations",
        "add some logging",
        "update the readme",
        "make sure we use the correct session id",
        "remove the start command",
        "the token usage report",
        # commit subjects as tiny.en heard them on bench/voice_quality.py, once wrongly rewritten
        "also use new package and integration tests",
        "copy check points from forks on PR merge violations",
        "better wrapper",
        "when already enabled, ask if repo or local settings file should be updated",
        "document, known limitations checkpoint demand, worktree gc corruption",
        "make sure we compare the right parts of commit hashes",
        "aggressive timos to post your telemetry to avoid gli latency",
        "fix explain, short overview when current session has no check points",
        "make sure we initialize with a default strategy",
        "make sure we don't overwrite any other settings",
        "",
    ],
)
def test_correct_query_leaves_ordinary_queries_alone(query: str) -> None:
    assert spoken.correct_query(query, VOCABULARY) == query


# --- configuration -----------------------------------------------------------------------------------


def test_voice_settings_defaults_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.upper().startswith("EYWA_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(ROOT / "no-home"))  # no ~/.eywa/config.yaml either
    v = load_settings().voice
    assert (v.backend, v.model, v.max_seconds, v.openai_model) == ("local", "", 60, "whisper-1")
    monkeypatch.setenv("EYWA_VOICE__BACKEND", "openai")
    monkeypatch.setenv("EYWA_VOICE__OPENAI_API_KEY", "sk-secret")
    v = load_settings().voice
    assert v.backend == "openai" and v.openai_api_key.get_secret_value() == "sk-secret"
    assert "sk-secret" not in repr(v)
    monkeypatch.setenv("EYWA_VOICE__BACKEND", "cloud")
    with pytest.raises(ConfigError, match=r"voice\.backend.*EYWA_VOICE__BACKEND"):
        load_settings()


# --- the OpenAI-compatible backend -------------------------------------------------------------------


class _FakeTranscriptionServer(BaseHTTPRequestHandler):
    """POST /v1/audio/transcriptions as OpenAI defines it; remembers each request."""

    requests: list[dict[str, Any]] = []
    reply: tuple[int, dict[str, Any]] = (200, {"text": "how did we fix the wingman review"})

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
        status, payload = self.reply
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def fake_openai() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeTranscriptionServer)
    _FakeTranscriptionServer.requests = []
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _openai_settings(base_url: str) -> Settings:
    return Settings(voice=VoiceSettings(backend="openai", openai_base_url=base_url, openai_api_key="sk-test",
                                        openai_model="whisper-large-v3"))


def test_openai_backend_posts_the_note_with_model_key_and_hotwords(fake_openai: str) -> None:
    _FakeTranscriptionServer.reply = (200, {"text": " how did we fix the wingman review "})
    heard = voice.transcribe(clip("plain_query.oga"), ["claude-code-log", "wingman"], _openai_settings(fake_openai))
    assert heard.text == "how did we fix the wingman review" and heard.words == []
    (request,) = _FakeTranscriptionServer.requests
    assert request["path"] == "/v1/audio/transcriptions"
    assert request["headers"]["Authorization"] == "Bearer sk-test"
    assert request["headers"]["Content-Type"].startswith("multipart/form-data")
    body = request["body"]
    assert b'name="model"\r\n\r\nwhisper-large-v3' in body
    assert b'name="prompt"\r\n\r\nclaude code log, wingman' in body
    assert b'filename="voice.ogg"' in body and clip("plain_query.oga") in body


def test_openai_backend_errors_become_voice_errors(fake_openai: str) -> None:
    _FakeTranscriptionServer.reply = (401, {"error": {"message": "Incorrect API key provided"}})
    with pytest.raises(voice.VoiceError, match="HTTP 401: Incorrect API key"):
        voice.transcribe(clip("plain_query.oga"), [], _openai_settings(fake_openai))
    _FakeTranscriptionServer.reply = (200, {"text": ""})
    with pytest.raises(voice.VoiceError, match="heard nothing"):
        voice.transcribe(clip("plain_query.oga"), [], _openai_settings(fake_openai))


def test_openai_backend_unreachable_is_a_voice_error() -> None:
    import socket

    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(voice.VoiceError, match="could not be reached"):
        voice.transcribe(clip("plain_query.oga"), [], _openai_settings(f"http://127.0.0.1:{port}/v1"))


def test_openai_backend_still_rejects_silence_locally(fake_openai: str) -> None:
    with pytest.raises(voice.VoiceError, match="heard nothing"):
        voice.transcribe(clip("silence.oga"), [], _openai_settings(fake_openai))
    assert _FakeTranscriptionServer.requests == []  # nothing was sent, nothing was paid for


def test_only_words_whisper_may_not_know_are_kept_for_biasing() -> None:
    assert voice.unfamiliar(["review", "logic", "gitleaks", "claude-code-log", "shadow-branch", "jsonl"]) == [
        "gitleaks", "claude-code-log", "jsonl"]


def test_punctuation_said_aloud_between_words_is_written() -> None:
    assert spoken.write_symbols("merge origin slash main into feat slash gemini") == \
        "merge origin/main into feat/gemini"
    assert spoken.write_symbols("store transcript underscore path") == "store transcript_path"
    assert spoken.write_symbols("slash commands, a slash") == "slash commands, a slash"  # not between two words
    assert spoken.correct_query("fixed test slash compilation", VOCABULARY) == "fixed test/compilation"


def test_index_vocabulary_follows_what_another_process_indexes(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from eywa.core.api import Eywa

    monkeypatch.setenv("EYWA_NOW", "2026-02-17")
    originals = tmp_path / "originals"
    originals.mkdir()
    (originals / "a1b2c3d4.md").write_text(
        _handoff("a1b2c3d4", "2026-02-10", "pratchett-os", "Tune the disc scheduler", "disc-scheduler"))
    settings = load_settings(data_dir=tmp_path / "data", projects_dir=tmp_path / "projects")
    bot, writer = Eywa(settings), Eywa(settings)  # the bot's connection, and the ingest thread's
    try:
        writer.reindex(originals)
        assert "pratchett-os" in bot.vocabulary() and "ankh-morpork" not in bot.vocabulary()
        (originals / "e5f6a7b8.md").write_text(
            _handoff("e5f6a7b8", "2026-02-16", "ankh-morpork", "Map the city", "city-map"))
        writer.reindex(originals)
        assert "ankh-morpork" in bot.vocabulary()
    finally:
        bot.close()
        writer.close()
