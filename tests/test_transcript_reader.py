from __future__ import annotations

import json
from pathlib import Path

from eywa.core.sources.jsonl import ReadStats, read_records

from .conftest import write_jsonl

GOOD = {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hello"}}


def read(path: Path) -> tuple[list[dict], ReadStats]:
    stats = ReadStats()
    return list(read_records(path, stats)), stats


def test_line_that_is_not_json_is_skipped_and_counted(tmp_path: Path) -> None:
    records, stats = read(write_jsonl(tmp_path / "a.jsonl", [GOOD, "this is not json {", GOOD]))
    assert len(records) == 2 and stats.not_json == 1 and stats.bad_lines == 1


def test_two_records_glued_on_one_line_are_both_kept(tmp_path: Path) -> None:
    glued = json.dumps(GOOD) + json.dumps({**GOOD, "uuid": "u2"})
    records, stats = read(write_jsonl(tmp_path / "a.jsonl", [glued, GOOD]))
    assert [r["uuid"] for r in records] == ["u1", "u2", "u1"]
    assert stats.multi_record == 1


def test_truncated_last_line_is_counted_apart_from_broken_lines(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", [GOOD, json.dumps(GOOD)[:25]], trailing_newline=False)
    records, stats = read(path)
    assert len(records) == 1 and stats.truncated_last == 1 and stats.not_json == 0


def test_non_object_json_lines_are_skipped(tmp_path: Path) -> None:
    records, stats = read(write_jsonl(tmp_path / "a.jsonl", ["[1, 2]", "42", '"text"', "null", GOOD]))
    assert len(records) == 1 and stats.non_object == 4


def test_empty_file_yields_nothing(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    assert read(path)[0] == []


def test_invalid_utf8_does_not_cost_the_record(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    line = json.dumps({"type": "user", "message": {"content": "caf\u00e9"}}).encode().replace(b"\\u00e9", b"\xff")
    path.write_bytes(line + b"\n" + json.dumps(GOOD).encode() + b"\n")
    records, stats = read(path)
    assert len(records) == 2 and stats.invalid_utf8 == 1
    assert "\ufffd" in records[0]["message"]["content"]


def test_blank_lines_and_crlf_are_harmless(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"\n\r\n" + json.dumps(GOOD).encode() + b"\r\n\n")
    records, stats = read(path)
    assert len(records) == 1 and stats.bad_lines == 0
