"""The LLM extractor's pure parts: the input budget, the request shape, reading and validating answers."""

from __future__ import annotations

import json

import pytest

from eywa.core.extract.llm.anthropic_client import Answer, parse_retry_after
from eywa.core.extract.llm.prompt import (
    SYSTEM_PROMPT,
    TOOL_NAME,
    HandoffFields,
    InvalidAnswer,
    Refused,
    build_params,
    content_hash,
    estimate_tokens,
    parse_answer,
    retry_params,
    tool_definition,
    trim_markdown,
)
from eywa.core.index.llm_tables import Usage

VALID = {
    "headline": "Add Gemini transcript support to rewind",
    "projects": ["cli"],
    "keywords": ["gemini-rewind", "transcript-path", "checkpoint-metadata", "restore-logs", "started-at"],
    "substance": 2,
    "status": "partial",
    "what_happened": ["Restored Gemini logs on rewind", "Added StartedAt to the checkpoint metadata"],
    "decisions": ["Named transcripts by start time rather than by session id: Gemini does"],
    "insights": [{"topic": "Transcript paths", "explanation": "Gemini names files by start time"},
                 {"wrong": "Rewind restores every agent's log", "right": "Only Claude Code's was restored"}],
    "key_files": [{"path": "cmd/entire/cli/checkpoint/checkpoint.go", "change": "StartedAt field"}],
    "open_threads": ["Backfill StartedAt for old checkpoints"],
}


def tool_answer(data: object, stop_reason: str = "tool_use") -> Answer:
    return Answer(content=[{"type": "tool_use", "id": "toolu_1", "name": TOOL_NAME, "input": data}],
                  stop_reason=stop_reason, usage=Usage(10, 5))


def long_session(turns: int = 120) -> str:
    parts = ["# Session abc", "", "- cwd: /home/ana/src/eywa", "- model: claude-opus-4-6", "", "## 2026-02-12"]
    for i in range(turns):
        parts += ["", f"### 10:{i % 60:02d} User", "", f"first request is about the quokka exporter {i}"
                  if i == 0 else f"chatter about nothing in particular number {i} " + "lorem ipsum " * 20]
        parts += ["", f"### 10:{i % 60:02d} Claude", "", "Looking at it. " + "filler words here " * 25]
        if i == 50:
            parts += ["- Bash `pytest -q` -> error: FAILED tests/test_zebra.py::test_stripes"]
        if i == 70:
            parts += ["- Edit `core/zebra.py`"]
        if i == 80:
            parts += ["", "### 11:20 Claude", "",
                      "We decided to keep WAL mode because the bot reads while ingest writes."]
    parts += ["", "### 12:00 User", "", "final question: ship the zebra release?"]
    return "\n".join(parts) + "\n"


def test_budget_keeps_beginning_end_and_informative_middle_not_the_head() -> None:
    markdown = long_session()
    cut, abridged = trim_markdown(markdown, 4000)
    assert abridged and estimate_tokens(cut) <= 4000 * 1.05
    assert cut.startswith("# Session abc\n\n- cwd: /home/ana/src/eywa")  # the header
    assert "quokka exporter 0" in cut  # the beginning
    assert "ship the zebra release?" in cut  # the end: plain head truncation would lose it
    assert "FAILED tests/test_zebra.py" in cut  # an error from the middle
    assert "- Edit `core/zebra.py`" in cut  # an edit from the middle
    assert "We decided to keep WAL mode" in cut  # a decision from the middle
    assert "entries omitted ...]" in cut
    assert cut.count("## 2026-02-12") == 1


def test_budget_leaves_a_short_session_whole() -> None:
    markdown = long_session(3)
    assert trim_markdown(markdown, 16000) == (markdown, False)


def test_budget_cuts_one_huge_block_in_its_middle() -> None:
    markdown = "# Session x\n\n## 2026-02-12\n\n### 10:00 User\n\nSTART " + "word " * 20000 + " THE-END\n"
    cut, abridged = trim_markdown(markdown, 2000)
    assert abridged and "START" in cut and "THE-END" in cut and "characters omitted" in cut
    assert estimate_tokens(cut) <= 2000


def test_request_forces_the_tool_with_thinking_off_and_caches_the_system_prompt() -> None:
    params = build_params("claude-haiku-5-5", 2048, None, "<transcript>x</transcript>")
    assert params["tool_choice"] == {"type": "tool", "name": TOOL_NAME, "disable_parallel_tool_use": True}
    assert params["thinking"] == {"type": "disabled"}
    assert params["system"] == [{"type": "text", "text": SYSTEM_PROMPT, "cache_control": {"type": "ephemeral"}}]
    assert "temperature" not in json.dumps(params)  # API version 2026-10-21 rejects sampling parameters
    schema = params["tools"][0]["input_schema"]
    assert set(schema["required"]) == set(VALID)


def test_models_that_cannot_be_forced_get_tool_choice_auto_and_no_thinking_parameter() -> None:
    params = build_params("claude-opus-5-5", 2048, None, "x")
    assert params["tool_choice"]["type"] == "auto" and "thinking" not in params
    assert build_params("claude-haiku-5-5", 2048, 0.2, "x")["extra_body"] == {"temperature": 0.2}


def test_valid_answer_is_read() -> None:
    fields = parse_answer(tool_answer(VALID))
    assert fields.headline == VALID["headline"] and fields.substance == 2


def test_the_schema_asks_for_structure_not_markdown() -> None:
    schema = tool_definition()["input_schema"]
    text = json.dumps(schema)
    assert "**" not in text and "`" not in text and '"pattern"' not in text
    insight = schema["properties"]["insights"]["items"]["anyOf"]
    shapes = [set(schema["$defs"][ref["$ref"].rsplit("/", 1)[1]]["properties"]) for ref in insight]
    assert shapes == [{"topic", "explanation"}, {"wrong", "right"}]
    key_file = schema["$defs"][schema["properties"]["key_files"]["items"]["$ref"].rsplit("/", 1)[1]]
    assert set(key_file["properties"]) == {"path", "change"}
    assert schema["properties"]["status"]["enum"] == ["done", "partial", "abandoned", "exploratory"]


def test_eywa_renders_the_sections_from_the_structure() -> None:
    import datetime as dt

    from eywa.core.extract.llm.prompt import to_handoff

    fields = parse_answer(tool_answer(VALID))
    handoff = to_handoff(fields, session_id="s-1", short_id="s1", date=dt.date(2026, 2, 12), duration_min=70,
                         model="claude-opus-4-6", cwd_projects=["cli"])
    assert handoff.status == "partial"
    assert handoff.insights == [
        "**Decision** -- Named transcripts by start time rather than by session id: Gemini does",
        "**Transcript paths** -- Gemini names files by start time",
        "**Rewind restores every agent's log** -> **Only Claude Code's was restored**"]
    assert handoff.key_files == ["`cmd/entire/cli/checkpoint/checkpoint.go` -- StartedAt field"]
    body = handoff.to_markdown()
    assert "\nstatus: partial\n" in body and "## Open Threads\n- Backfill StartedAt for old checkpoints" in body


def test_cosmetic_slips_are_normalised_never_refused() -> None:
    data = {**VALID, "headline": "- Add Gemini transcript support to rewind.", "status": " Partial.",
            "substance": "2", "what_happened": json.dumps(["- Restored\n  the logs", "1. Did it"]),
            "keywords": ["Gemini Rewind", "transcript_path", "`started-at`", "gemini-rewind"],
            "projects": ["CLI"],
            "insights": ["**Transcript paths** -- Gemini names files by start time", "just a sentence",
                         "**old belief** -> **the truth**"],
            "key_files": ["`core/x.py` -- changed", "core/y.py: renamed", {"path": "`z.go`", "change": "new"}],
            "open_threads": "- Backfill old checkpoints\n- Ask about Codex"}
    fields = parse_answer(tool_answer(data))
    assert fields.headline == "Add Gemini transcript support to rewind" and fields.status == "partial"
    assert fields.substance == 2 and fields.projects == ["cli"]
    assert fields.what_happened == ["Restored the logs", "Did it"]
    assert fields.keywords == ["gemini-rewind", "transcript-path", "started-at"]  # 3 is few, never a refusal
    from eywa.core.extract.llm.prompt import render_insight, render_key_file

    assert [render_insight(i) for i in fields.insights] == [
        "**Transcript paths** -- Gemini names files by start time", "just a sentence",
        "**old belief** -> **the truth**"]
    assert [render_key_file(f) for f in fields.key_files] == ["`core/x.py` -- changed", "`core/y.py` -- renamed",
                                                             "`z.go` -- new"]
    assert fields.open_threads == ["Backfill old checkpoints", "Ask about Codex"]
    too_many = parse_answer(tool_answer({**VALID, "keywords": [f"term-{i}" for i in range(12)],
                                         "what_happened": [f"did {i} things" for i in range(9)]}))
    assert len(too_many.keywords) == 7 and len(too_many.what_happened) == 5
    assert parse_answer(tool_answer({**VALID, "status": "shipped"})).status is None


@pytest.mark.parametrize(("change", "message"), [
    ({"headline": ""}, "headline"),
    ({"substance": "lots"}, "substance"),
    ({"what_happened": []}, "what_happened"),
    ({"what_happened": "[not json"}, "not JSON"),
    ({"insights": [{"topic": "no explanation"}]}, "insights.0"),
])
def test_only_an_answer_that_cannot_be_a_handoff_is_refused(change: dict, message: str) -> None:
    with pytest.raises(InvalidAnswer, match=message):
        parse_answer(tool_answer({**VALID, **change}))


def test_missing_fields_are_named() -> None:
    with pytest.raises(InvalidAnswer) as info:
        parse_answer(tool_answer({"headline": "Only a headline here"}))
    assert "substance: Field required" in str(info.value)


def test_text_answer_is_read_when_it_is_json_and_rejected_when_not() -> None:
    fenced = Answer([{"type": "text", "text": "Here:\n```json\n" + json.dumps(VALID) + "\n```"}], "end_turn", Usage())
    assert parse_answer(fenced).headline == VALID["headline"]
    with pytest.raises(InvalidAnswer, match="not JSON"):
        parse_answer(Answer([{"type": "text", "text": "I would rather not."}], "end_turn", Usage()))


def test_refusal_and_cut_off_answers_are_not_accepted() -> None:
    with pytest.raises(Refused):
        parse_answer(Answer([], "refusal", Usage()))
    with pytest.raises(InvalidAnswer, match="max_tokens"):
        parse_answer(tool_answer(VALID, "max_tokens"))


def test_second_try_answers_the_tool_call_with_the_error() -> None:
    params = build_params("claude-haiku-5-5", 2048, None, "x")
    answer = tool_answer({"headline": "h"})
    again = retry_params(params, answer, "keywords: Field required")
    assert [m["role"] for m in again["messages"]] == ["user", "assistant", "user"]
    result = again["messages"][2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_1" and result["is_error"]
    assert "keywords: Field required" in result["content"]
    assert params["messages"] == [{"role": "user", "content": "x"}]  # the first request is left as it was


def test_content_hash_changes_with_transcript_model_and_budget() -> None:
    base = content_hash("claude-haiku-5-5", 16000, "text")
    assert base == content_hash("claude-haiku-5-5", 16000, "text")
    assert len({base, content_hash("claude-sonnet-5-5", 16000, "text"), content_hash("claude-haiku-5-5", 8000, "text"),
                content_hash("claude-haiku-5-5", 16000, "text2")}) == 4


def test_tool_schema_matches_the_pydantic_model() -> None:
    schema = tool_definition()["input_schema"]
    assert set(schema["properties"]) == set(HandoffFields.model_fields)


@pytest.mark.parametrize(("headers", "seconds"), [
    ({"retry-after": "7"}, 7.0), ({"retry-after-ms": "250"}, 0.25), ({}, None), ({"retry-after": "soon"}, None),
])
def test_retry_after_header_is_read(headers: dict[str, str], seconds: float | None) -> None:
    assert parse_retry_after(headers) == seconds
