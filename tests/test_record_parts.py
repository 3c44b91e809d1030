"""Reading only the parts of each record that a session is built from (core/sources/claude/records.py) builds the
same sessions, archives and handoffs as decoding every line whole: on the real corpus and on damaged lines."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path
from zoneinfo import ZoneInfo

import msgspec
import orjson
import pytest
from hypothesis import HealthCheck, given, settings

import eywa.core.sources.claude.builder
from eywa.core.archive.renderer import Renderer
from eywa.core.extract.deterministic import draft
from eywa.core.redaction.scrubber import default_redactor
from eywa.core.sources.claude import subagent_parent
from eywa.core.sources.claude.builder import build_session
from eywa.core.sources.claude.catalogue import KNOWN_FIELDS
from eywa.core.sources.claude.records import decode_parts, part_value
from eywa.core.sources.discovery import group_sessions, scan_files
from eywa.core.sources.jsonl import ReadStats, read_records

from .conftest import CORPUS
from .test_bad_input import damaged_session

ZONE = ZoneInfo("Europe/Berlin")


def _built(main: list[Path], subagents: list[tuple[Path, str, dict]]) -> tuple[str, str, list[tuple]]:
    """A session's archive, handoff and per-file read statistics (all but `invalid_utf8`, see below)."""
    session, stats = build_session("s", main, subagents, default_redactor().redact)
    counts = [tuple(v for k, v in dataclasses.asdict(s).items() if k != "invalid_utf8") for s in stats.values()]
    return Renderer(ZONE).render(session), draft(session, ZONE).to_markdown(), counts


def _both_ways(monkeypatch: pytest.MonkeyPatch, main: list[Path],
               subagents: list[tuple[Path, str, dict]]) -> tuple[tuple, tuple]:
    parts = _built(main, subagents)
    with monkeypatch.context() as whole:
        whole.setattr(eywa.core.sources.claude.builder, "decode_parts", orjson.loads)
        return parts, _built(main, subagents)


def test_every_corpus_session_is_built_the_same_from_its_kept_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    groups = group_sessions(scan_files(CORPUS), subagent_parent).values()
    for group in groups:
        subagents = [(f.path, f.role, {}) for f in group.subagents]
        parts, whole = _both_ways(monkeypatch, [f.path for f in group.main], subagents)
        assert parts == whole, group.session_id
    assert len(groups) > 150


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(damaged_session())
def test_a_damaged_session_is_built_the_same_from_its_kept_parts(
        tmp_path_factory: pytest.TempPathFactory, lines: list[bytes]) -> None:
    path = Path(tempfile.mkdtemp(dir=tmp_path_factory.getbasetemp())) / "s.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    with pytest.MonkeyPatch.context() as monkeypatch:
        parts, whole = _both_ways(monkeypatch, [path], [])
    assert parts == whole


_SURROGATE = "\ud800".encode("utf-8", "surrogatepass")  # b"\xed\xa0\x80": invalid UTF-8
_OLDER = orjson.dumps({"type": "user", "uuid": "u1", "version": "2.1.17", "message": {"content": "go on"}})
_TASK_UPDATE = (b'"message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"TaskUpdate",'
                b'"input":{"taskId":"2","status":"in_progress"}}]}')


@pytest.mark.parametrize("damaged", [
    b'{"parentUuid":"u1","' + _SURROGATE + b'isSidechain":false,"version":"2.1.39",' + _TASK_UPDATE + b"}",
    b'{"parentUuid":"u1","isSidechain":false,"version":"2.1.' + _SURROGATE + b'39",' + _TASK_UPDATE + b"}",
    b'{"parentUuid":"u1","slug":"a' + _SURROGATE + b'b","version":"2.1.39",' + _TASK_UPDATE + b"}",
    b'{"parentUuid":"u1","\\ud800isSidechain":false,"version":"2.1.39",' + _TASK_UPDATE + b"}",
], ids=["bytes in a name", "bytes in the version", "bytes in a skipped value", "escape in a name"])
def test_a_line_with_a_lone_surrogate_is_kept_and_noted_as_read_both_ways(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, damaged: bytes) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(_OLDER + b"\n" + damaged.replace(b"{", b'{"type":"assistant","uuid":"a1",', 1) + b"\n")
    kept = list(read_records(path))[-1]  # the reader keeps the line, its invalid UTF-8 or surrogate as U+FFFD
    assert "\ufffd" in str(kept)
    parts, whole = _both_ways(monkeypatch, [path], [])
    assert parts == whole
    (stats,) = build_session("s", [path], [], default_redactor().redact)[1].values()
    assert stats.records == 2 and stats.bad_lines == 0
    assert stats.version == kept["version"]  # the file's version is its last kept record's
    assert stats.unknown_fields == {f"assistant.{name}": 1 for name in kept if name not in KNOWN_FIELDS["assistant"]}


def test_tool_outputs_thinking_and_progress_payloads_are_not_decoded() -> None:
    line = orjson.dumps({
        "type": "user", "uuid": "u1", "data": {"huge": ["payload"]},
        "toolUseResult": {"agentId": "a1", "totalTokens": 5, "stdout": "x" * 1000},
        "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "out"}]},
            {"type": "thinking", "thinking": "hmm", "signature": "s" * 500}]}})
    record = decode_parts(line)
    assert record["toolUseResult"] == {"agentId": "a1", "totalTokens": 5}
    assert "data" not in record
    result, thinking = record["message"]["content"]
    assert isinstance(result["content"], msgspec.Raw) and thinking == {"type": "thinking"}
    assert part_value(result["content"]) == [{"type": "text", "text": "out"}]


@pytest.mark.parametrize("number", [b"18446744073709551616", b"9223372036854775808", b"-9223372036854775809",
                                    b"1e400", b"NaN"])
def test_a_number_orjson_reads_otherwise_makes_the_line_decoded_whole(number: bytes) -> None:
    with pytest.raises(ValueError):
        decode_parts(b'{"type": "user", "uuid": ' + number + b"}")


def test_a_whole_number_too_long_for_python_is_not_skipped_over(tmp_path: Path) -> None:
    line = b'{"type": "user", "uuid": "u1", "toolUseResult": {"n": ' + b"9" * 5000 + b"}}"
    with pytest.raises(ValueError):
        decode_parts(line)
    path = tmp_path / "s.jsonl"
    path.write_bytes(line + b"\n" + orjson.dumps({"type": "user", "uuid": "u2"}) + b"\n")
    stats = ReadStats()
    assert [r["uuid"] for r in read_records(path, stats, decode_parts)] == ["u2"]
    assert stats.not_json == 1  # as Python's parser refuses it when the line is decoded whole


def test_invalid_utf8_in_a_tool_output_is_read_as_the_whole_line_would_be() -> None:
    record = decode_parts(b'{"type": "user", "message": {"content": [{"type": "tool_result", "content": "a\xffb"}]}}')
    assert part_value(record["message"]["content"][0]["content"]) == "a\ufffdb"
