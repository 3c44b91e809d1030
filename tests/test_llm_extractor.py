"""The LLM extractor's pure parts: the input budget, the request shape, reading and validating answers."""

from __future__ import annotations

import json

import pytest

from core.llm_client import Answer, Usage, parse_retry_after
from core.llm_extractor import (
    SYSTEM_PROMPT,
    TOOL_NAME,
    HandoffFields,
    InvalidAnswer,
    Refused,
    budget_markdown,
    build_params,
    content_hash,
    estimate_tokens,
    parse_answer,
    retry_params,
    tool_definition,
)

VALID = {
    "headline": "Add Gemini transcript support to rewind",
    "projects": ["cli"],
    "keywords": ["gemini-rewind", "transcript-path", "checkpoint-metadata", "restore-logs", "started-at"],
    "substance": 2,
    "what_happened": ["Asked to restore Gemini logs", "Added StartedAt to the checkpoint metadata"],
    "insights": ["**Transcript paths** -- Gemini names files by start time"],
    "key_files": ["`cmd/entire/cli/checkpoint/checkpoint.go` -- StartedAt field"],
    "open_threads": [],
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
    cut, abridged = budget_markdown(markdown, 4000)
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
    assert budget_markdown(markdown, 16000) == (markdown, False)


def test_budget_cuts_one_huge_block_in_its_middle() -> None:
    markdown = "# Session x\n\n## 2026-02-12\n\n### 10:00 User\n\nSTART " + "word " * 20000 + " THE-END\n"
    cut, abridged = budget_markdown(markdown, 2000)
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
    assert schema["properties"]["keywords"]["items"]["pattern"]


def test_models_that_cannot_be_forced_get_tool_choice_auto_and_no_thinking_parameter() -> None:
    params = build_params("claude-opus-5-5", 2048, None, "x")
    assert params["tool_choice"]["type"] == "auto" and "thinking" not in params
    assert build_params("claude-haiku-5-5", 2048, 0.2, "x")["extra_body"] == {"temperature": 0.2}


def test_valid_answer_is_read() -> None:
    fields = parse_answer(tool_answer(VALID))
    assert fields.headline == VALID["headline"] and fields.substance == 2


def test_bullets_are_normalised_and_stringified_arrays_accepted() -> None:
    data = {**VALID, "what_happened": json.dumps(["- Asked for\n  the thing", "1. Did it"]),
            "keywords": [k.upper() for k in VALID["keywords"]]}
    fields = parse_answer(tool_answer(data))
    assert fields.what_happened == ["Asked for the thing", "Did it"]
    assert fields.keywords == VALID["keywords"]


@pytest.mark.parametrize(("change", "message"), [
    ({"keywords": ["one", "two"]}, "keywords: give 5-7"),
    ({"keywords": ["Not A Keyword", "b-b", "c-c", "d-d", "e-e"]}, "keywords.0"),
    ({"insights": ["just a sentence"]}, "Topic"),
    ({"key_files": ["core/x.py changed"]}, "backticks"),
    ({"substance": 3}, "substance"),
    ({"what_happened": ["only one"]}, "what_happened: give 2-5"),
    ({"what_happened": "[not json"}, "not JSON"),
])
def test_invalid_answers_say_what_is_wrong(change: dict, message: str) -> None:
    with pytest.raises(InvalidAnswer, match=message):
        parse_answer(tool_answer({**VALID, **change}))


def test_missing_fields_are_named() -> None:
    with pytest.raises(InvalidAnswer) as info:
        parse_answer(tool_answer({"headline": "Only a headline here"}))
    for name in ("projects", "keywords", "substance", "what_happened"):
        assert name in str(info.value)


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
