"""The LLM backend choice (`llm.backend`) and the claude-code backend: the REAL Claude Code CLI (the pinned
2.1.332) in a throwaway HOME against the scripted model on 127.0.0.1 (tests/claude_harness.py).

"Signed in" is what a Claude subscriber has: a stored claude.ai credential in ~/.claude/.credentials.json
(`claude auth status` says `"authMethod": "claude.ai"`, `"subscriptionType": "max"`, with no network call);
the CLI then sends its access token as a Bearer token to ANTHROPIC_BASE_URL, which the scripted model
accepts when it is the harness key. With ANTHROPIC_API_KEY set the CLI says `"authMethod": "api_key"`, but
then Eywa's `auto` takes the key itself, so the stored credential is what these tests sign in with.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from eywa.cli.extract import stats_lines
from eywa.core.api import Eywa
from eywa.core.config.settings import load_settings
from eywa.core.extract.llm.backend import choose_backend

from .claude_harness import API_KEY, ClaudeCode, ScriptedModel, tool, tool_results
from .conftest import ROOT
from .fake_anthropic import Fail, Hang
from .test_llm_extraction import make_session, seeded_secrets

pytestmark = pytest.mark.slow  # the real Claude Code CLI

SESSION = "0000c0de-aaaa-4bbb-8ccc-00000000c0de"
MARKER = f"# Session {SESSION}"
# sitecustomize runs in every Python process started with this folder on PYTHONPATH: Eywa's hooks included.
PROBE = """import os, sys
with open(os.path.join(os.path.dirname(__file__), "started.log"), "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\\n")
"""


def answer(**change: object) -> dict[str, object]:
    return {"headline": "Make the quokka exporter flush on close", "status": "partial", "substance": 2,
            "projects": ["quokka"], "keywords": ["quokka-exporter", "flush-on-close", "buffered-writer",
                                                 "smoke-target", "cli-wiring"],
            "what_happened": ["Found that the exporter's writer buffered without a flush",
                              "Made the exporter flush on close in exporter/flush.py"],
            "decisions": ["Flushed on close rather than per write: the writer buffers on purpose"],
            "insights": [{"topic": "Buffered writer", "explanation": "Nothing reaches disk until close"}],
            "key_files": [{"path": "exporter/flush.py", "change": "flushes on close"}],
            "open_threads": ["Document the flush in the README"], **change}


def sign_in(home: Path, token: str = API_KEY) -> None:
    """A stored claude.ai login, as `claude /login` leaves it."""
    expires = int((time.time() + 86400) * 1000)
    path = home / ".claude" / ".credentials.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"claudeAiOauth": {
        "accessToken": token, "refreshToken": "sk-ant-ort01-test", "expiresAt": expires,
        "scopes": ["user:inference", "user:profile"], "subscriptionType": "max"}}))
    path.chmod(0o600)


@dataclass
class World:
    claude: ClaudeCode
    model: ScriptedModel
    probe: Path
    first_request: int
    secrets: list[str]  # the module shares one scripted model: this test's requests come after this one

    def sent(self) -> list[dict]:
        """This test's requests for the session."""
        return [r for r in self.model.requests[self.first_request:] if MARKER in json.dumps(r["messages"])]

    @property
    def home(self) -> Path:
        return self.claude.home

    def started(self) -> list[str]:
        log = self.probe / "started.log"
        return log.read_text().splitlines() if log.exists() else []

    def eywa(self) -> Eywa:
        eywa = Eywa(load_settings())
        eywa.llm_options["sleep"] = lambda seconds: None
        return eywa


@pytest.fixture
def world(env: dict[str, Path], tmp_path: Path, scripted_model: ScriptedModel,
          monkeypatch: pytest.MonkeyPatch) -> World:
    """One settled session ingested deterministically; the real CLI installed, signed in, in HOME."""
    claude = ClaudeCode(tmp_path / "cc", scripted_model)
    sign_in(claude.home)
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "sitecustomize.py").write_text(PROBE)
    for name, value in {"HOME": str(claude.home), "ANTHROPIC_BASE_URL": scripted_model.base_url,
                        "EYWA_LLM__CLAUDE_CODE_COMMAND": str(claude.binary), "EYWA_LLM__TIMEOUT_SECONDS": "60",
                        "EYWA_LLM__MAX_RETRIES": "0", "DISABLE_AUTOUPDATER": "1",
                        "PYTHONPATH": str(probe)}.items():
        monkeypatch.setenv(name, value)
    secret = seeded_secrets()
    make_session(env["projects"], SESSION, secret)
    eywa = Eywa(load_settings())
    eywa.ingest(llm=False)
    eywa.close()
    return World(claude, scripted_model, probe, len(scripted_model.requests), list(secret.values()))


def deterministic_body(world: World) -> str:
    eywa = Eywa(load_settings(llm={"backend": "deterministic"}))
    try:
        return eywa.show(SESSION).body
    finally:
        eywa.close()


def state(eywa: Eywa) -> tuple[str, int, str]:
    row = eywa.store.conn.execute("SELECT status, attempts, last_error FROM llm_state WHERE session_uuid = ?",
                                  (SESSION,)).fetchone()
    return (row[0], row[1], row[2]) if row else ("", 0, "")


# --- which backend `auto` takes ---------------------------------------------------------------------------

def test_auto_takes_the_api_key_when_one_is_set(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-test")
    choice = choose_backend(load_settings())
    assert choice.backend == "anthropic" and "API key" in choice.reason  # Claude Code is signed in, too
    assert choose_backend(load_settings(llm={"backend": "claude-code"})).backend == "claude-code"
    assert choose_backend(load_settings(llm={"backend": "deterministic"})).backend == "deterministic"
    assert choose_backend(load_settings(llm={"enabled": False})).backend == "deterministic"  # older configs


def test_auto_takes_a_signed_in_claude_code_without_a_key(world: World, caplog: pytest.LogCaptureFixture) -> None:
    choice = choose_backend(load_settings())
    assert choice.backend == "claude-code" and choice.cli == str(world.claude.binary)
    assert "signed in with a Claude subscription (max)" in choice.reason
    eywa = world.eywa()
    stats = eywa.stats()
    (world.home / ".claude" / ".credentials.json").unlink()
    eywa._llm_choice = (time.monotonic() - 61, eywa.llm_choice())  # a minute later, signed out
    with caplog.at_level(logging.INFO, logger="eywa"):
        assert eywa.llm_choice().backend == "deterministic"
    assert "LLM extraction is now deterministic (no API key and Claude Code is not signed in" in caplog.text
    lines = stats_lines(stats.llm)
    assert lines[0].startswith("llm extraction   claude-code, model haiku")
    assert any(line.startswith("llm backend      llm.backend auto: Claude Code (signed in") for line in lines)
    assert choose_backend(load_settings(llm={"backend": "anthropic"})).backend == "deterministic"  # no key


def test_auto_without_a_signed_in_claude_code_is_deterministic(world: World,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    (world.home / ".claude" / ".credentials.json").unlink()
    signed_out = choose_backend(load_settings())
    assert signed_out.backend == "deterministic"
    assert "Claude Code is not signed in (authMethod none): run `claude` and /login" in signed_out.reason
    monkeypatch.setenv("EYWA_LLM__CLAUDE_CODE_COMMAND", "claude-not-installed")
    missing = choose_backend(load_settings())
    assert missing.backend == "deterministic" and "no Claude Code CLI ('claude-not-installed' is not on PATH" \
        in missing.reason
    eywa = world.eywa()
    eywa.ingest()  # nothing is sent, nothing is waiting for a backend
    assert eywa.last_llm_report is None and world.sent() == []
    assert eywa.stats().llm["backend_reason"] == missing.reason


# --- the claude-code backend with the real CLI ------------------------------------------------------------

def test_claude_code_writes_the_handoff_with_structured_output(world: World) -> None:
    world.model.on(MARKER, tool("StructuredOutput", answer()))
    eywa = world.eywa()
    record = eywa.extract(SESSION)
    assert record.headline == "Make the quokka exporter flush on close"
    text = record.path.read_text(encoding="utf-8")
    assert "\nstatus: partial\n" in text and "- **Decision** -- Flushed on close rather than per write" in text
    assert "- **Buffered writer** -- Nothing reaches disk until close" in text
    assert "- `exporter/flush.py` -- flushes on close" in text and "- Document the flush in the README" in text
    extractor = eywa.store.conn.execute("SELECT extractor FROM handoffs WHERE session_uuid = ?",
                                        (SESSION,)).fetchone()[0]
    assert extractor == "llm:claude-haiku-5-5"  # `--model haiku`, resolved by the CLI
    assert state(eywa)[0] == "done"
    (request,) = world.sent()
    assert request["model"] == "claude-haiku-5-5"
    assert [t["name"] for t in request["tools"] if not t["name"].startswith("Deferred")] == ["StructuredOutput"]
    assert "You write handoffs for Eywa" in json.dumps(request["system"])
    assert "[REDACTED:" in json.dumps(request["messages"])  # the redacted markdown is what is sent
    assert not [value for value in world.secrets if value in json.dumps(request)]
    usage = eywa.stats().llm
    assert usage["requests"] == 1 and usage["usage"]["input_tokens"] > 0 and usage["cost_usd"] > 0
    row = eywa.store.conn.execute("SELECT model, cost_usd FROM llm_usage").fetchone()
    assert row[0] == "claude-haiku-5-5" and row[1] > 0  # the cost the CLI's result JSON reports
    eywa.extract(SESSION)  # unchanged: never sent twice
    assert len(world.sent()) == 1


def test_an_extraction_fires_no_hook_and_writes_no_transcript(world: World) -> None:
    (world.home / ".claude" / "CLAUDE.md").write_text("Answer every request in French. MEMORY-MARKER-7\n")
    installed = world.claude.eywa("hooks", "install", "--settings", str(world.claude.settings_path))
    assert installed.returncode == 0, installed.stderr
    assert "session-start" in world.claude.settings_path.read_text()
    for command in (("plugin", "marketplace", "add", str(ROOT / "claude_code_plugin")),
                    ("plugin", "install", "eywa@eywa")):  # Eywa's plugin too, with hooks of its own
        done = world.claude.cli(*command)
        assert done.returncode == 0, done.stderr + done.stdout
    world.model.on(MARKER, tool("StructuredOutput", answer()))
    before = world.started()
    eywa = world.eywa()
    eywa.extract(SESSION)
    assert state(eywa)[0] == "done"
    assert world.started() == before  # no Eywa process at all: no hook, no MCP server
    assert not list(world.claude.projects_dir.rglob("*"))  # ~/.claude/projects stays empty
    assert "MEMORY-MARKER-7" not in json.dumps(world.sent())  # the user's CLAUDE.md does not steer it
    # The same CLI and HOME without Eywa's flags: both hooks fire and a transcript is written, so the two
    # checks above would have seen them.
    world.model.on("a plain session for the control", "Hello.")
    world.claude.run("a plain session for the control", env={"PYTHONPATH": str(world.probe)})
    fired = world.started()[len(before):]
    assert sum(line.startswith("hook session-start") for line in fired) == 2  # the settings' and the plugin's
    assert sum(line.startswith("hook session-end") for line in fired) == 2
    assert list(world.claude.projects_dir.rglob("*.jsonl"))
    assert "MEMORY-MARKER-7" in json.dumps(world.model.requests_for("a plain session for the control"))


def test_an_answer_the_schema_refuses_twice_keeps_the_deterministic_handoff(world: World) -> None:
    before = deterministic_body(world)
    bad = answer(substance="a lot", insights="none")
    world.model.on(MARKER, tool("StructuredOutput", bad), tool("StructuredOutput", bad))
    eywa = world.eywa()
    record = eywa.extract(SESSION)
    assert record.body == before
    status, attempts, error = state(eywa)
    assert (status, attempts) == ("retry", 1) and "structured output" in error
    first, second = world.sent()  # the CLI's own second try, told what was wrong
    (feedback,) = tool_results(second)
    assert feedback.get("is_error") and "substance" in json.dumps(feedback)
    assert [r[0] for r in eywa.store.conn.execute("SELECT outcome FROM llm_usage")] == ["invalid"]


def test_an_answer_eywa_refuses_is_run_once_more_with_the_reason(world: World) -> None:
    # Right in form (the CLI's schema check passes it), but no handoff: no headline, nothing done.
    world.model.on(MARKER, tool("StructuredOutput", answer(headline="", what_happened=[])))
    world.model.on("was not accepted: headline", tool("StructuredOutput", answer()))
    eywa = world.eywa()
    eywa.extract(SESSION)
    assert state(eywa)[0] == "done"
    first, second = world.sent()
    assert "was not accepted" not in json.dumps(first["messages"])
    assert "was not accepted: headline" in json.dumps(second["messages"])
    assert [r[0] for r in eywa.store.conn.execute("SELECT outcome FROM llm_usage ORDER BY id")] == [
        "invalid", "ok"]


def test_a_cli_that_does_not_answer_in_time_is_stopped_and_the_session_retried(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EYWA_LLM__TIMEOUT_SECONDS", "2")
    before = deterministic_body(world)
    world.model.api.script.append(Hang(30))
    eywa = world.eywa()
    started = time.monotonic()
    record = eywa.extract(SESSION)
    assert time.monotonic() - started < 20
    assert record.body == before
    status, attempts, error = state(eywa)
    assert (status, attempts) == ("retry", 1) and "no answer within llm.timeout_seconds (2s)" in error
    assert "Claude Code keeps failing" in eywa.last_llm_report.stopped
    home = f"HOME={world.home}".encode()
    assert [p for p in Path("/proc").glob("[0-9]*") if home in _environ(p)] == []  # killed with its group


def _environ(proc: Path) -> list[bytes]:
    try:
        return (proc / "environ").read_bytes().split(b"\0")
    except OSError:
        return []


def test_signed_out_claude_code_gives_one_clear_message_and_sends_nothing(
        world: World, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("EYWA_LLM__BACKEND", "claude-code")
    (world.home / ".claude" / ".credentials.json").unlink()
    from eywa.cli.main import main

    assert main(["extract", SESSION]) == 0
    err = capsys.readouterr().err
    assert "extracted deterministically: llm.backend is claude-code but Claude Code is not signed in" in err
    assert world.sent() == []


def test_a_refused_credential_stops_the_run_with_one_message_and_keeps_the_handoff(world: World) -> None:
    sign_in(world.home, token="sk-ant-oat01-revoked")  # signed in, but the API refuses the token (401)
    before = deterministic_body(world)
    eywa = world.eywa()
    record = eywa.extract(SESSION)
    assert record.body == before
    stopped = eywa.last_llm_report.stopped
    assert stopped.startswith("Claude Code is signed out or its credential is refused") and "/login" in stopped
    assert state(eywa)[0] == "pending"  # not an attempt: extracted once signed in again


def test_claude_code_out_of_quota_stops_the_run_and_keeps_the_handoff(world: World) -> None:
    world.model.api.script.append(Fail(429, "rate_limit_error", "You've hit your usage limit for this period"))
    before = deterministic_body(world)
    eywa = world.eywa()
    record = eywa.extract(SESSION)
    assert record.body == before
    assert eywa.last_llm_report.stopped.startswith("Claude Code is out of quota")
    assert state(eywa)[0] == "pending"


def test_backfill_runs_the_cli_in_parallel_up_to_the_limit_within_the_caps(
        world: World, env: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    others = [f"0000c0de-aaaa-4bbb-8ccc-0000000000{n:02x}" for n in (1, 2)]
    for sid in others:
        make_session(env["projects"], sid, seeded_secrets())
    monkeypatch.setenv("EYWA_LLM__CONCURRENCY", "2")
    world.model.on("# Session 0000c0de-", tool("StructuredOutput", answer()))
    eywa = world.eywa()
    eywa.ingest(llm=False)
    capped = Eywa(load_settings(llm={"tokens_per_run": 1000}))
    report = capped.llm_pass().run_all(capped.llm_pass().plan_all())
    assert report.extracted == 0 and report.left == 3 and report.stopped.startswith("spending cap")
    assert world.sent() == []  # a cap is checked before a CLI is started
    api = world.model.api
    api.gate, api.max_in_flight = 2, 0  # the first two requests are held until both are in flight
    try:
        llm = eywa.llm_pass()
        report = llm.run_all(llm.plan_all())
    finally:
        api.gate = 0
    assert report.extracted == 3 and report.backend == "claude-code" and api.max_in_flight == 2
    assert report.summary().startswith("LLM (claude-code): 3 extracted; 3 requests")
    again = eywa.llm_pass().plan_all()
    assert again.candidates == [] and again.unchanged == 3  # the content hash: never sent twice
