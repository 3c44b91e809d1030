"""LLM handoff extraction end to end: the real `anthropic` client against a fake Messages API on 127.0.0.1.

Every session here carries fake secrets built at runtime; after each test, every request body the fake
recorded is scanned with the redaction module and for the seeded values: none may reach the API.
"""

from __future__ import annotations

import json
import os
import secrets
import string
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from eywa.core.api import Eywa
from eywa.core.config.settings import load_settings
from eywa.core.handoffs.model import parse_handoff, split_front_matter
from eywa.core.redaction.scrubber import Redactor

from .conftest import CORPUS, ROOT, json_strings, write_jsonl
from .fake_anthropic import Fail, FakeAnthropic, Hang, Raw, Reply, default_answer

CWD = "/home/ana/src/quokka"


def _random(length: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    while True:
        body = "".join(secrets.choice(alphabet) for _ in range(length))
        if any(c.isdigit() for c in body) and any(c.isalpha() for c in body):
            return body


def seeded_secrets() -> dict[str, str]:
    """Fake secrets of several kinds, made now: no literal a scanner would flag is in the repository."""
    return {
        "anthropic": "sk-" + "ant-" + "api03-" + _random(80, string.ascii_letters + string.digits + "-_"),
        "github": "gh" + "p_" + _random(36),
        "aws": "AK" + "IA" + _random(16, string.ascii_uppercase + string.digits),
        "password": _random(20),
        "bearer": _random(40),
    }


def make_session(projects: Path, sid: str, secret: dict[str, str], *, age_minutes: float = 120,
                 topic: str = "quokka exporter") -> Path:
    """A small Claude Code transcript with edits, an error and secrets in prompts, replies and tool I/O."""

    def rec(kind: str, n: int, content: object, **extra: object) -> dict:
        role = "assistant" if kind == "assistant" else "user"
        record = {"type": kind, "uuid": f"{sid}-{n}", "sessionId": sid, "timestamp": f"2026-02-10T10:{n:02d}:00Z",
                  "cwd": CWD, "gitBranch": "ana/exporter", "message": {"role": role, "content": content}}
        record["message"].update(extra)
        return record

    model = {"model": "claude-opus-4-6"}
    records = [
        rec("user", 1, f"Wire the {topic} into the CLI. Use my key {secret['anthropic']} for the smoke test."),
        rec("assistant", 2, [{"type": "text", "text": "I'll read the exporter first; the root cause is probably "
                                                      "the missing flush because the writer buffers."}], **model),
        rec("assistant", 3, [{"type": "tool_use", "id": f"t1{sid[:4]}", "name": "Bash", "input": {
            "command": f"GITHUB_TOKEN={secret['github']} make smoke"}}], **model),
        rec("user", 4, [{"type": "tool_result", "tool_use_id": f"t1{sid[:4]}", "is_error": True,
                         "content": f"FAIL: auth with password={secret['password']} rejected"}]),
        rec("assistant", 5, [{"type": "tool_use", "id": f"t2{sid[:4]}", "name": "Edit", "input": {
            "file_path": f"{CWD}/exporter/flush.py", "old_string": "a", "new_string": "b"}}], **model),
        rec("user", 6, [{"type": "tool_result", "tool_use_id": f"t2{sid[:4]}", "content": "ok"}]),
        rec("user", 7, f"Also the AWS key {secret['aws']} and header Authorization: Bearer {secret['bearer']}"),
        rec("assistant", 8, [{"type": "text", "text": "Done: the exporter flushes on close. Next: document it."}],
            **model),
    ]
    path = write_jsonl(projects / "-home-ana-src-quokka" / f"{sid}.jsonl", records)
    stamp = time.time() - age_minutes * 60
    os.utime(path, (stamp, stamp))
    return path


def assert_no_secret_sent(fake: FakeAnthropic, seeded: list[str]) -> None:
    redactor = Redactor()
    for request in fake.requests:
        for value in seeded:
            assert value not in request.body, f"a seeded secret reached {request.path}"
        if request.body:
            for text in json_strings(json.loads(request.body)):
                assert redactor.redact(text) == text, f"a secret reached {request.path}: {text[:200]}"


@pytest.fixture
def fake(env: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    server = FakeAnthropic("sk-" + "ant-" + "api03-" + _random(60))
    monkeypatch.setenv("ANTHROPIC_API_KEY", server.api_key)
    monkeypatch.setenv("EYWA_LLM__BASE_URL", server.base_url)
    monkeypatch.setenv("EYWA_LLM__BACKOFF_BASE_SECONDS", "0.001")
    monkeypatch.setenv("EYWA_LLM__BATCH_POLL_SECONDS", "0")
    monkeypatch.setenv("EYWA_LLM__TIMEOUT_SECONDS", "0.5")
    yield server
    server.close()
    assert server.script_errors == []
    assert_no_secret_sent(server, server.seeded)


@pytest.fixture
def sessions(env: dict[str, Path], fake: FakeAnthropic) -> list[str]:
    """Three settled sessions with secrets, ingested deterministically (LLM off for the ingest)."""
    ids = [f"{n:08x}-aaaa-4bbb-8ccc-{n:012x}" for n in (0xA1, 0xB2, 0xC3)]
    for n, sid in enumerate(ids):
        secret = seeded_secrets()
        fake.seeded.extend(secret.values())
        path = make_session(env["projects"], sid, secret, topic=f"quokka exporter {n}")
        assert all(value in path.read_text(encoding="utf-8") for value in secret.values())
    eywa = Eywa(load_settings())
    eywa.ingest(llm=False)
    eywa.close()
    return ids


def make_eywa(**llm: object) -> tuple[Eywa, list[float]]:
    """An Eywa whose LLM waits are recorded instead of slept (no test waits on a retry-after)."""
    waits: list[float] = []
    eywa = Eywa(load_settings(llm=llm) if llm else load_settings())
    eywa.llm_options["sleep"] = waits.append
    return eywa, waits


def state(eywa: Eywa, sid: str) -> tuple[str, int]:
    row = eywa.store.conn.execute("SELECT status, attempts FROM llm_state WHERE session_uuid = ?", (sid,)).fetchone()
    return (row[0], row[1]) if row else ("", 0)


def extractor(eywa: Eywa, sid: str) -> str:
    return eywa.store.conn.execute("SELECT extractor FROM handoffs WHERE session_uuid = ?", (sid,)).fetchone()[0]


OPTIONAL_KEYS = {"status", "agent", "machine"}  # docs/architecture.md: optional front matter after `substance`


def assert_valid_handoff(eywa: Eywa, sid: str, by: str) -> None:
    """The handoff file and its row agree, in the architecture's format, written by `by`."""
    record = eywa.show(sid)
    text = record.path.read_text(encoding="utf-8")
    meta, _ = split_front_matter(text)
    assert list(meta)[:9] == ["session_id", "session_uuid", "date", "duration", "model", "headline", "projects",
                              "keywords", "substance"]
    assert set(list(meta)[9:]) <= OPTIONAL_KEYS
    handoff = parse_handoff(text)
    assert handoff.agent == record.agent == "claude-code"  # the session's agent, whoever wrote the handoff
    assert handoff.session_id == sid and handoff.headline == record.headline
    assert handoff.machine == record.machine == eywa.settings.machine_name  # kept when Claude rewrites it
    assert handoff.keywords == record.keywords and handoff.substance == record.substance
    assert extractor(eywa, sid).startswith(by)


def requests_for(fake: FakeAnthropic, sid: str) -> int:
    return sum(1 for r in fake.message_requests if f"# Session {sid}" in json.dumps(r))


def test_secret_scan_catches_a_secret_in_a_request_body() -> None:
    from .fake_anthropic import Recorded

    server = FakeAnthropic("k")
    try:
        secret = seeded_secrets()["github"]
        server.requests.append(Recorded("POST", "/v1/messages", {}, json.dumps({"messages": [f"token {secret}"]})))
        with pytest.raises(AssertionError, match="seeded secret"):
            assert_no_secret_sent(server, [secret])
        with pytest.raises(AssertionError, match="a secret reached"):
            assert_no_secret_sent(server, [])
    finally:
        server.close()


# --- a valid answer ------------------------------------------------------------------------------------

def test_valid_tool_answer_replaces_the_deterministic_handoff(sessions: list[str], fake: FakeAnthropic) -> None:
    eywa, _ = make_eywa()
    record = eywa.extract(sessions[0])
    assert record.headline == f"Summarise session {sessions[0][:8]} for the next one"
    assert record.projects[0] == "quokka" and f"topic-{sessions[0][:8]}" in record.keywords
    assert_valid_handoff(eywa, sessions[0], "llm:claude-haiku-5-5")
    assert state(eywa, sessions[0]) == ("done", 0)
    request = fake.message_requests[0]
    assert request["tool_choice"]["type"] == "tool" and request["thinking"] == {"type": "disabled"}
    assert request["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert "[REDACTED:" in request["messages"][0]["content"]  # the redacted markdown is what is sent
    usage = eywa.stats().llm
    assert usage["requests"] == 1 and usage["states"] == {"done": 1}
    assert usage["usage"]["input_tokens"] > 0 and usage["usage"]["output_tokens"] > 0
    assert usage["cost_usd"] is not None and usage["tokens_today"] > 0


def test_unchanged_session_is_never_sent_twice(sessions: list[str], fake: FakeAnthropic) -> None:
    eywa, _ = make_eywa()
    path = eywa.extract(sessions[0]).path
    before = path.read_bytes()
    eywa.extract(sessions[0])  # re-ingested (forced), so its deterministic handoff was written, then restored
    assert eywa.last_llm_report.outcomes[sessions[0]].startswith("unchanged")
    transcript = next(Path(os.environ["EYWA_PROJECTS_DIR"]).rglob(f"{sessions[0]}.jsonl"))
    os.utime(transcript)  # touched, same content: ingest rewrites it, the LLM pass puts Claude's back
    eywa.ingest()
    assert requests_for(fake, sessions[0]) == 1
    assert path.read_bytes() == before and extractor(eywa, sessions[0]).startswith("llm:")


def test_prompt_caching_writes_the_system_prompt_once_and_reads_it_after(sessions: list[str],
                                                                        fake: FakeAnthropic) -> None:
    eywa, _ = make_eywa(concurrency=1)
    report = eywa.llm_pass().run_all(eywa.llm_pass().plan_all())
    assert report.extracted == 3
    rows = eywa.store.conn.execute(
        "SELECT cache_creation_input_tokens, cache_read_input_tokens FROM llm_usage ORDER BY id").fetchall()
    assert rows[0][0] > 0 and rows[0][1] == 0
    assert all(write == 0 and read > 0 for write, read in rows[1:])


# --- invalid answers -----------------------------------------------------------------------------------

def test_answer_missing_fields_is_retried_once_with_the_validation_error(sessions: list[str],
                                                                         fake: FakeAnthropic) -> None:
    fake.script.extend([Reply(tool_input={"headline": "Wire the quokka exporter"}), Reply()])
    eywa, _ = make_eywa()
    eywa.extract(sessions[1])
    second = fake.message_requests[1]
    feedback = second["messages"][2]["content"][0]
    assert feedback["type"] == "tool_result" and feedback["is_error"]
    assert "substance: Field required" in feedback["content"]
    assert_valid_handoff(eywa, sessions[1], "llm:")
    assert state(eywa, sessions[1]) == ("done", 0)
    outcomes = [r[0] for r in eywa.store.conn.execute("SELECT outcome FROM llm_usage ORDER BY id")]
    assert outcomes == ["invalid", "ok"]


def test_answer_invalid_twice_keeps_the_deterministic_handoff_and_marks_a_retry(sessions: list[str],
                                                                               fake: FakeAnthropic) -> None:
    bad = {**default_answer({}), "what_happened": []}  # substance 2 with nothing done: not a handoff
    fake.script.extend([Reply(tool_input=bad), Reply(tool_input=bad)])
    eywa, _ = make_eywa()
    before = Eywa(load_settings()).show(sessions[1]).body
    record = eywa.extract(sessions[1])
    assert record.body == before  # nothing half-written: the deterministic handoff stays
    assert_valid_handoff(eywa, sessions[1], "deterministic")
    assert state(eywa, sessions[1]) == ("retry", 1)
    assert "what_happened" in eywa.last_llm_report.outcomes[sessions[1]]
    assert len(fake.message_requests) == 2


def test_answer_that_is_not_json_falls_back_then_a_later_run_extracts_it(sessions: list[str],
                                                                        fake: FakeAnthropic) -> None:
    # Claude Opus 5.5 cannot be forced to call the tool, so it may answer in prose.
    fake.script.extend([Reply(text="Here is a summary: it went well."), Reply(text="Still no JSON, sorry.")])
    eywa, _ = make_eywa(model="claude-opus-5-5")
    eywa.extract(sessions[2])
    request = fake.message_requests[0]
    assert request["tool_choice"]["type"] == "auto" and "thinking" not in request
    assert "not JSON" in fake.message_requests[1]["messages"][2]["content"][0]["text"]
    assert_valid_handoff(eywa, sessions[2], "deterministic")
    assert state(eywa, sessions[2]) == ("retry", 1)
    eywa.extract(sessions[2])  # asked again: sent again (a retry is not "unchanged"), and valid this time
    assert_valid_handoff(eywa, sessions[2], "llm:claude-opus-5-5")
    assert state(eywa, sessions[2])[0] == "done"


def test_http_answer_that_is_not_json_stops_the_run_and_keeps_the_deterministic_handoff(
        sessions: list[str], fake: FakeAnthropic) -> None:
    fake.script.append(Raw())  # a proxy's HTML page with status 200
    eywa, _ = make_eywa()
    eywa.extract(sessions[0])
    assert "not a message" in eywa.last_llm_report.stopped
    assert_valid_handoff(eywa, sessions[0], "deterministic")
    assert state(eywa, sessions[0]) == ("retry", 1)


# --- API errors ----------------------------------------------------------------------------------------

def test_rate_limit_waits_for_retry_after(sessions: list[str], fake: FakeAnthropic) -> None:
    fake.script.append(Fail(429, "rate_limit_error", "Number of request tokens has exceeded your rate limit",
                            headers={"retry-after": "7"}))
    eywa, waits = make_eywa()
    eywa.extract(sessions[0])
    assert waits and waits[0] >= 7  # retry-after honoured (the wait is recorded, not slept)
    assert len(fake.message_requests) == 2
    assert_valid_handoff(eywa, sessions[0], "llm:")
    assert state(eywa, sessions[0]) == ("done", 0)


def test_rate_limit_longer_than_the_ceiling_stops_the_run_and_keeps_the_session_pending(
        sessions: list[str], fake: FakeAnthropic) -> None:
    fake.script.append(Fail(429, "rate_limit_error", "slow down", headers={"retry-after": "3600"}))
    eywa, waits = make_eywa()
    eywa.extract(sessions[0])
    assert waits == [] and "run again later" in eywa.last_llm_report.stopped
    assert_valid_handoff(eywa, sessions[0], "deterministic")
    assert state(eywa, sessions[0]) == ("pending", 0)


def test_spend_limit_429_stops_the_run_without_retrying(sessions: list[str], fake: FakeAnthropic) -> None:
    fake.script.append(Fail(429, "rate_limit_error", "spend limit", error_code="enforced_spend_limit_reached"))
    eywa, waits = make_eywa()
    eywa.extract(sessions[0])
    assert waits == [] and "spend limit" in eywa.last_llm_report.stopped
    assert len(fake.message_requests) == 1
    assert state(eywa, sessions[0]) == ("pending", 0)


def test_overloaded_529_backs_off_and_succeeds(sessions: list[str], fake: FakeAnthropic) -> None:
    fake.script.append(Fail(529, "overloaded_error", "Overloaded"))
    eywa, waits = make_eywa()
    eywa.extract(sessions[0])
    assert len(waits) == 1 and len(fake.message_requests) == 2
    assert_valid_handoff(eywa, sessions[0], "llm:")
    assert state(eywa, sessions[0]) == ("done", 0)


def test_server_error_500_is_retried_with_jitter(sessions: list[str], fake: FakeAnthropic) -> None:
    fake.script.extend([Fail(500, "api_error", "Internal server error")] * 2)
    eywa, waits = make_eywa()
    eywa.extract(sessions[0])
    assert len(waits) == 2 and len(fake.message_requests) == 3
    assert_valid_handoff(eywa, sessions[0], "llm:")


def test_server_errors_past_the_retry_limit_stop_the_run_and_mark_a_retry(sessions: list[str],
                                                                         fake: FakeAnthropic) -> None:
    fake.script.extend([Fail(500, "api_error", "Internal server error")] * 3)
    eywa, waits = make_eywa(max_retries=2)
    eywa.extract(sessions[0])
    assert len(waits) == 2 and len(fake.message_requests) == 3
    assert "keeps failing" in eywa.last_llm_report.stopped
    assert_valid_handoff(eywa, sessions[0], "deterministic")
    assert state(eywa, sessions[0]) == ("retry", 1)


def test_timeout_is_retried(sessions: list[str], fake: FakeAnthropic) -> None:
    fake.script.append(Hang(5))
    eywa, waits = make_eywa()
    eywa.extract(sessions[0])
    assert len(waits) == 1 and len(fake.message_requests) == 2
    assert_valid_handoff(eywa, sessions[0], "llm:")
    assert state(eywa, sessions[0]) == ("done", 0)


def test_temperature_is_sent_when_set_and_a_rejecting_api_leaves_the_deterministic_handoff(
        sessions: list[str], fake: FakeAnthropic) -> None:
    eywa, _ = make_eywa(temperature=0.2)
    eywa.extract(sessions[0])
    assert [r["temperature"] for r in fake.message_requests] == [0.2]
    assert "temperature" in eywa.last_llm_report.outcomes[sessions[0]]  # the API's own message
    assert_valid_handoff(eywa, sessions[0], "deterministic")
    assert state(eywa, sessions[0]) == ("failed", 1)  # the same request would fail again: no retry


def test_invalid_key_401_stops_the_run_with_a_clear_message(sessions: list[str], fake: FakeAnthropic,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-" + "ant-" + "api03-" + _random(60))
    from eywa.cli.main import main

    assert main(["extract", sessions[0]]) == 1
    err = capsys.readouterr().err
    assert "401" in err and "ANTHROPIC_API_KEY" in err
    eywa, _ = make_eywa()
    assert_valid_handoff(eywa, sessions[0], "deterministic")
    assert state(eywa, sessions[0])[0] in ("", "pending")
    assert fake.message_requests == []  # stopped at the first call (the model check): nothing else sent


# --- settled sessions, caps, interruption, backfill ----------------------------------------------------------

def test_settled_session_is_extracted_by_ingest_and_an_active_one_waits(env: dict[str, Path],
                                                                        fake: FakeAnthropic) -> None:
    secret = seeded_secrets()
    fake.seeded.extend(secret.values())
    eywa, _ = make_eywa()
    eywa.ingest()  # LLM extraction switched on now: sessions from before are left to `extract --all`
    active = make_session(env["projects"], "0000000a-1111-4222-8333-444444444444", secret, age_minutes=1)
    eywa.ingest()
    assert eywa.last_llm_report.waiting == 1 and fake.message_requests == []
    assert state(eywa, active.stem) == ("pending", 0)
    stamp = time.time() - 45 * 60  # no new line for 45 minutes: settled
    os.utime(active, (stamp, stamp))
    eywa.ingest()
    assert eywa.last_llm_report.extracted == 1
    assert_valid_handoff(eywa, active.stem, "llm:")


def test_session_end_mark_counts_as_settled(env: dict[str, Path], fake: FakeAnthropic) -> None:
    from eywa.core.ingest.pending import write_mark

    secret = seeded_secrets()
    fake.seeded.extend(secret.values())
    eywa, _ = make_eywa()
    eywa.ingest()
    ended = make_session(env["projects"], "0000000b-1111-4222-8333-444444444444", secret, age_minutes=1)
    write_mark(eywa.settings.pending_dir, {"session_id": ended.stem})  # what the SessionEnd hook leaves
    eywa.ingest()
    assert eywa.last_llm_report.extracted == 1 and eywa.last_llm_report.waiting == 0
    assert_valid_handoff(eywa, ended.stem, "llm:")


def test_spending_cap_per_run_stops_the_run_and_leaves_the_rest(sessions: list[str], fake: FakeAnthropic,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    eywa, _ = make_eywa()
    plan = eywa.llm_pass().plan_all()
    one = plan.candidates[0].est_input + eywa.settings.llm.max_tokens
    monkeypatch.setenv("EYWA_LLM__TOKENS_PER_RUN", str(one + 10))
    eywa, _ = make_eywa(concurrency=1)
    llm = eywa.llm_pass()
    report = llm.run_all(llm.plan_all())
    assert report.extracted == 1 and report.left == 2 and "tokens_per_run" in report.stopped
    assert len(fake.message_requests) == 1


def test_spending_cap_per_day_counts_what_was_used_today(sessions: list[str], fake: FakeAnthropic,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    eywa, _ = make_eywa()
    eywa.extract(sessions[0])
    used = eywa.stats().llm["tokens_today"]
    monkeypatch.setenv("EYWA_LLM__TOKENS_PER_DAY", str(used + 1000))
    eywa, _ = make_eywa()
    llm = eywa.llm_pass()
    report = llm.run_all(llm.plan_all())
    assert report.extracted == 0 and "tokens_per_day" in report.stopped
    assert len(fake.message_requests) == 1


def test_eywa_now_decides_when_a_session_has_settled(env: dict[str, Path], fake: FakeAnthropic,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    pinned = 1_771_322_400.0  # 2026-02-17T10:00:00Z, long before the transcript files' real mtimes
    monkeypatch.setenv("EYWA_NOW", "2026-02-17T10:00:00Z")
    secret = seeded_secrets()
    fake.seeded.extend(secret.values())
    eywa, _ = make_eywa()
    eywa.ingest()  # LLM extraction switched on at the pinned instant
    active = make_session(env["projects"], "0000000b-1111-4222-8333-444444444444", secret)
    os.utime(active, (pinned + 60, pinned + 60))  # a line one minute after the switch
    monkeypatch.setenv("EYWA_NOW", "2026-02-17T10:02:00Z")  # one minute after that line: still active
    eywa.ingest()
    assert eywa.last_llm_report.waiting == 1 and fake.message_requests == []
    monkeypatch.setenv("EYWA_NOW", "2026-02-17T10:45:00Z")  # 44 minutes without a line: settled
    eywa.ingest()
    assert eywa.last_llm_report.extracted == 1
    assert_valid_handoff(eywa, active.stem, "llm:")


def test_eywa_now_decides_which_day_the_daily_cap_counts(sessions: list[str], fake: FakeAnthropic,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EYWA_NOW", "2027-03-01T23:30:00Z")  # after the sessions' real mtimes: all settled
    eywa, _ = make_eywa()
    eywa.extract(sessions[0])
    used = eywa.stats().llm["tokens_today"]
    assert used > 0
    monkeypatch.setenv("EYWA_LLM__TOKENS_PER_DAY", str(used + 1000))
    eywa, _ = make_eywa()
    llm = eywa.llm_pass()
    assert f"{used:,} of llm.tokens_per_day" in llm.run_all(llm.plan_all()).stopped
    monkeypatch.setenv("EYWA_NOW", "2027-03-02T00:30:00Z")  # an hour later, the next UTC day: a fresh cap
    eywa, _ = make_eywa()
    assert eywa.stats().llm["tokens_today"] == 0
    monkeypatch.setenv("EYWA_LLM__TOKENS_PER_DAY", str(used * 3))
    eywa, _ = make_eywa()
    llm = eywa.llm_pass()
    assert llm.run_all(llm.plan_all()).extracted >= 1  # would be over the cap had yesterday counted


def test_backfill_sends_requests_in_parallel_up_to_the_concurrency_limit(sessions: list[str],
                                                                        fake: FakeAnthropic) -> None:
    fake.gate = 2
    eywa, _ = make_eywa(concurrency=2)
    llm = eywa.llm_pass()
    assert llm.run_all(llm.plan_all()).extracted == 3
    assert fake.max_in_flight == 2


def test_interrupted_run_resumes_where_it_stopped(sessions: list[str], fake: FakeAnthropic) -> None:
    class Stop(Exception):
        pass

    def stop_after_one(done: int, total: int, session_id: str) -> None:
        raise Stop

    eywa, _ = make_eywa(concurrency=1)
    llm = eywa.llm_pass()
    with pytest.raises(Stop):
        llm.run_all(llm.plan_all(), progress=stop_after_one)
    assert eywa.stats().llm["extracted"] == 1
    llm = eywa.llm_pass()
    report = llm.run_all(llm.plan_all())
    assert report.extracted == 2 and report.unchanged == 1
    assert [requests_for(fake, sid) for sid in sessions] == [1, 1, 1]
    for sid in sessions:
        assert_valid_handoff(eywa, sid, "llm:")


def test_crash_after_the_answer_is_stored_is_finished_without_a_new_request(sessions: list[str],
                                                                           fake: FakeAnthropic) -> None:
    eywa, _ = make_eywa()
    llm = eywa.llm_pass()
    calls = {"n": 0}
    real_write = llm.outcomes.write

    def crash(*args: object, **kwargs: object) -> None:
        calls["n"] += 1
        raise KeyboardInterrupt  # killed between storing the validated answer and writing the handoff

    llm.outcomes.write = crash  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        llm.extract_one(sessions[0])
    llm.outcomes.write = real_write  # type: ignore[method-assign]
    report = eywa.llm_pass().extract_one(sessions[0])
    assert report.restored == 1 and requests_for(fake, sessions[0]) == 1
    assert_valid_handoff(eywa, sessions[0], "llm:")


def test_backfill_estimates_and_asks_before_sending(sessions: list[str], fake: FakeAnthropic,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from eywa.cli.main import main

    assert main(["extract", "--all"]) == 1  # not a terminal and no --yes: nothing is sent
    out, err = capsys.readouterr()
    assert "3 sessions to extract with claude-haiku-5-5" in out and "input tokens" in out and "$" in out
    assert "--yes" in err and fake.message_requests == []
    assert main(["extract", "--all", "--yes", "--progress", "never"]) == 0
    out, _ = capsys.readouterr()
    assert "LLM (anthropic): 3 extracted" in out
    assert main(["stats"]) == 0
    out, _ = capsys.readouterr()
    assert "3 handoffs by Claude" in out and "llm usage" in out


def test_batch_is_created_polled_and_collected_and_resumed_after_a_restart(sessions: list[str],
                                                                           fake: FakeAnthropic) -> None:
    fake.batch_polls_until_done = 3
    fake.script.append(Reply(tool_input={"headline": "x"}))  # one invalid batch answer: its second try is direct

    class Restart(Exception):
        pass

    def die_on_first_poll(done: int, total: int, label: str) -> None:
        raise Restart

    eywa, _ = make_eywa()
    llm = eywa.llm_pass()
    plan = llm.plan_all()
    with pytest.raises(Restart):
        llm.run_all(plan, batch=True, progress=die_on_first_poll)
    assert {state(eywa, sid)[0] for sid in sessions} == {"batched"}
    eywa.close()

    eywa, waits = make_eywa()  # a new process: the unfinished batch is picked up, not sent again
    report = eywa.llm_pass().resume_batches()
    assert report.extracted == 3 and report.fallbacks == 0
    creates = [r for r in fake.requests if r.method == "POST" and r.path == "/v1/messages/batches"]
    polls = [r for r in fake.requests if r.method == "GET" and r.path.startswith("/v1/messages/batches/")
             and not r.path.endswith("/results")]
    assert len(creates) == 1 and len(polls) >= 3 and len(waits) >= 1
    assert len(fake.message_requests) == 1  # the direct second try of the invalid answer
    for sid in sessions:
        assert_valid_handoff(eywa, sid, "llm:")
        assert state(eywa, sid) == ("done", 0)
    modes = dict(eywa.store.conn.execute("SELECT mode, COUNT(*) FROM llm_usage GROUP BY mode").fetchall())
    assert modes == {"batch": 3, "sync": 1}
    assert eywa.store.conn.execute("SELECT COUNT(*) FROM llm_batches").fetchone()[0] == 0


# --- models, keys, endpoints ---------------------------------------------------------------------------

# The SDK's own DeprecationWarning, raised inside each create call, is the late signal this test replaces.
@pytest.mark.filterwarnings("ignore:The model 'claude-sonnet-4-5' is deprecated:DeprecationWarning")
def test_deprecated_model_is_named_with_its_retirement_at_the_start(sessions: list[str],
                                                                    fake: FakeAnthropic) -> None:
    eywa, _ = make_eywa(model="claude-sonnet-4-5")
    eywa.extract(sessions[0])
    warning = " ".join(eywa.last_llm_report.warnings)
    assert "claude-sonnet-4-5" in warning and "2026-11-30" in warning and "claude-haiku-5-5" in warning
    assert_valid_handoff(eywa, sessions[0], "llm:claude-sonnet-4-5")


def test_unknown_model_stops_the_run_listing_the_current_ones(sessions: list[str], fake: FakeAnthropic) -> None:
    eywa, _ = make_eywa(model="claude-nonexistent-9")
    eywa.extract(sessions[0])
    assert "claude-nonexistent-9" in eywa.last_llm_report.stopped
    assert "claude-haiku-5-5" in eywa.last_llm_report.stopped
    assert_valid_handoff(eywa, sessions[0], "deterministic")


def test_default_model_is_current_in_the_installed_sdk() -> None:
    import typing

    import anthropic
    from anthropic._data import DEPRECATED_MODELS

    default = load_settings().llm.model
    listed = typing.get_args(typing.get_args(anthropic.types.Model)[0])
    assert default in listed and default not in DEPRECATED_MODELS


def test_anthropic_base_url_from_the_environment_is_honoured(sessions: list[str], fake: FakeAnthropic,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EYWA_LLM__BASE_URL")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    eywa, _ = make_eywa()
    eywa.extract(sessions[0])
    assert_valid_handoff(eywa, sessions[0], "llm:")


def test_without_a_key_ingest_is_deterministic_and_never_imports_anthropic(env: dict[str, Path]) -> None:
    source = sorted((CORPUS / "entire" / "projects").glob("*/*.jsonl"))[0]
    target = env["projects"] / source.parent.name / source.name
    target.parent.mkdir(parents=True)
    target.symlink_to(source)
    code = ("import sys; from eywa.core.api import Eywa; from eywa.core.config.settings import load_settings; "
            "e = Eywa(load_settings()); r = e.ingest(); e.extract(r.updated[0]); s = e.stats(); "
            "print(r.sessions_updated, s.llm['active'], s.llm['extracted'], 'anthropic' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["1", "False", "0", "False"]


def _raw_post(fake: FakeAnthropic, body: dict, key: str | None = None) -> tuple[int, dict]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(fake.base_url + "/v1/messages", data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json", "anthropic-version": "2026-10-21",
                                              "x-api-key": key or fake.api_key})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.mark.parametrize(("change", "status", "message"), [
    ({"max_tokens": None}, 400, "max_tokens: Field required"),
    ({"temperature": 0.5}, 400, "temperature: Extra inputs are not permitted"),
    ({"thinking": None}, 400, "Thinking may not be enabled when tool_choice forces tool use"),
    ({"tool_choice": {"type": "tool", "name": "other"}}, 400, "no tool named"),
    ({"model": "claude-3-haiku-20240307"}, 404, "model: claude-3-haiku-20240307"),
    ({"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "prefill"}]}, 400,
     "prefill"),
])
def test_fake_api_rejects_what_the_real_api_rejects(fake: FakeAnthropic, change: dict, status: int,
                                                    message: str) -> None:
    from eywa.core.extract.llm.prompt import build_params

    body = {k: v for k, v in {**build_params("claude-haiku-5-5", 100, None, "x"), **change}.items() if v is not None}
    got, payload = _raw_post(fake, body)
    assert got == status and payload["type"] == "error" and message in payload["error"]["message"]
    assert _raw_post(fake, build_params("claude-haiku-5-5", 100, None, "x"), key="wrong")[0] == 401
    assert _raw_post(fake, build_params("claude-haiku-5-5", 100, None, "x"))[0] == 200


# --- the same format, the same index ---------------------------------------------------------------------

def test_llm_and_deterministic_handoffs_index_and_retrieve_the_same_way(sessions: list[str],
                                                                        fake: FakeAnthropic) -> None:
    eywa, _ = make_eywa()
    deterministic = eywa.show(sessions[1]).path.read_text(encoding="utf-8")
    fake.answer = lambda request: {**default_answer(request), "keywords": [
        "zanzibar-flush", "exporter-close", "buffered-writer", "smoke-target", "cli-wiring"]}
    eywa.extract(sessions[0])
    llm_text = eywa.show(sessions[0]).path.read_text(encoding="utf-8")
    det_meta, llm_meta = split_front_matter(deterministic)[0], split_front_matter(llm_text)[0]
    assert [k for k in det_meta if k not in OPTIONAL_KEYS] == [k for k in llm_meta if k not in OPTIONAL_KEYS]
    assert llm_meta["status"] == "partial"  # the answer's status, a front matter key of its own
    for key in ("session_id", "session_uuid", "date", "duration", "model"):
        assert llm_meta[key] == split_front_matter(
            Eywa(load_settings()).show(sessions[0]).path.read_text(encoding="utf-8"))[0][key]
    for mode in ("keywords", "bm25", "hybrid"):  # the keyword index and the full text both know it
        assert [r.session_id for r in eywa.recall("zanzibar", mode=mode, days_back=400)][:1] == [sessions[0]]
    assert eywa.recall("exporter", project="quokka", days_back=400, max_results=5)
    before = {r.session_id: (r.headline, r.keywords) for r in eywa.last(10)}
    indexed, _, problems = eywa.reindex()  # the index rebuilt from the files alone is the same
    assert indexed == 3 and problems == []
    assert {r.session_id: (r.headline, r.keywords) for r in eywa.last(10)} == before
    assert [r.session_id for r in eywa.recall("zanzibar", days_back=400)][:1] == [sessions[0]]
