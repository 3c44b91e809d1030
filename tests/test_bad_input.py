"""Bad input: real corpus lines, mutated (cut, glued, retyped, stripped, wrong types, huge, invalid UTF-8,
deeply nested, odd numbers, NUL bytes, lone surrogates), never make reading or ingest raise, cost nothing to the other
lines and sessions, and are counted."""

from __future__ import annotations

import json
import random
import shutil
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eywa.core.api import Eywa
from eywa.core.archive.renderer import Renderer
from eywa.core.config.settings import load_settings
from eywa.core.sources.claude.catalogue import KNOWN_TYPES
from eywa.core.sources.codex import build_codex_session
from eywa.core.sources.gemini import build_gemini_session
from eywa.core.sources.jsonl import MAX_LINE_BYTES, ReadStats, read_records

from .agent_transcripts import fixture_sessions
from .conftest import CORPUS

ENTIRE = CORPUS / "entire" / "projects"
# Three small, substantial sessions that stay intact beside the mutated one.
INTACT = [
    ENTIRE / "-Users-alex-workspace-cli--worktrees-2" / "d19ec7f9-dfaf-4c65-a9ad-ab56240f23d8.jsonl",
    ENTIRE / "-Users-alex-workspace-cli--worktrees-3" / "6da7d497-00e2-460d-a6b4-d280e0314cfd.jsonl",
    ENTIRE / "-Users-gtrrz-victor-wks-cli" / "0f6074fc-a0f5-4d56-8de0-f4a592ddcf3b.jsonl",
]
# Small real sessions with subagent runs and todos, damaged line by line into the bad session.
DAMAGED = [
    CORPUS / "claude-code-log/projects/-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl",
    ENTIRE / "-Users-soph-Work-entire-devenv-cli" / "70fc6d83-147d-4fdf-b015-bd67eeb11883.jsonl",
]
BAD_ID = "ffffffff-0000-4000-8000-000000000000"
# Sorts the mutated session after every intact one: ingest is oldest first, and the intact sessions'
# keywords (document frequencies) must not depend on whether the bad session came before them.
HEADER = {"type": "user", "uuid": "bad-0", "sessionId": BAD_ID, "timestamp": "2099-01-01T00:00:00Z",
          "cwd": "/home/me/bad", "message": {"role": "user", "content": "start of the mutated session"}}


@cache
def corpus_lines() -> tuple[bytes, ...]:
    """Up to 30 lines of each record type, from files spread over both corpus trees (read in place)."""
    by_type: dict[str, list[bytes]] = {}
    for path in sorted(CORPUS.rglob("*.jsonl"))[::8]:
        with path.open("rb") as handle:
            for raw in handle:
                if len(raw) > 30_000:
                    continue
                record = orjson.loads(raw)
                by_type.setdefault(str(record.get("type")), []).append(raw.rstrip(b"\n"))
    rng = random.Random(7)
    return tuple(line for lines in by_type.values() for line in rng.sample(lines, min(30, len(lines))))


# -- mutations: each takes hypothesis' draw and one line, and returns the bytes to write -----------------
WEIRD = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=2**64, max_value=2**80),
    st.floats(), st.text(max_size=30), st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    st.sampled_from(["not a timestamp", "2026-13-45T99:00:00Z", "", "0", "-1", "9" * 40]),
)
FIELDS = [
    ("message",), ("message", "content"), ("message", "content", 0), ("message", "content", 0, "type"),
    ("message", "content", 0, "text"), ("message", "content", 0, "input"), ("message", "content", 0, "content"),
    ("message", "content", 0, "tool_use_id"), ("message", "content", 0, "id"), ("message", "content", 0, "name"),
    ("message", "content", 0, "is_error"), ("message", "id"), ("message", "model"), ("message", "role"),
    ("timestamp",), ("type",), ("uuid",), ("cwd",), ("gitBranch",), ("version",), ("isSidechain",), ("agentId",),
    ("toolUseResult",), ("toolUseResult", "agentId"), ("toolUseResult", "totalDurationMs"), ("isMeta",),
    ("isCompactSummary",), ("summary",), ("leafUuid",), ("subtype",), ("compactMetadata",), ("error",),
    ("content",), ("customTitle",), ("prUrl",), ("sessionId",),
]


def _record(line: bytes) -> dict:
    return orjson.loads(line)


def _put(record: object, path: tuple, value: object) -> None:
    """Set record[path] = value, making dicts on the way; a path that does not fit the record is left alone."""
    target = record
    for key in path[:-1]:
        if isinstance(target, dict) and isinstance(key, str):
            if not isinstance(target.get(key), dict | list):
                target[key] = {}
            target = target[key]
        elif isinstance(target, list) and target and isinstance(key, int):
            target = target[min(key, len(target) - 1)]
        else:
            return
    last = path[-1]
    if isinstance(target, dict) and isinstance(last, str):
        target[last] = value
    elif isinstance(target, list) and isinstance(last, int):
        if target:
            target[min(last, len(target) - 1)] = value
        else:
            target.append(value)


def _paths(value: object, path: tuple = ()) -> list[tuple[tuple, object]]:
    """(path, value) of every value inside a record, the record itself excluded."""
    inside: list[tuple[tuple, object]] = [(path, value)] if path else []
    if isinstance(value, dict):
        inside += [p for k, v in value.items() for p in _paths(v, (*path, k))]
    elif isinstance(value, list):
        inside += [p for i, v in enumerate(value) for p in _paths(v, (*path, i))]
    return inside


def _with_string(draw: Callable, line: bytes, make: Callable[[str], str]) -> bytes:
    """The line with one of its strings (or a new `text` field) replaced by make(old)."""
    record = _record(line)
    path, old = draw(st.sampled_from([(p, v) for p, v in _paths(record) if isinstance(v, str)] or [(("text",), "")]))
    _put(record, path, make(old))
    return json.dumps(record).encode()  # json, not orjson: it writes lone surrogates, NaN and huge ints


def cut(draw: Callable, line: bytes) -> bytes:
    return line[: draw(st.integers(0, len(line) - 1))]


def glue(draw: Callable, line: bytes) -> bytes:
    return line + draw(st.sampled_from([b"", b" ", b"\x00"])) + draw(st.sampled_from(corpus_lines()))


def duplicate(draw: Callable, line: bytes) -> bytes:
    return line + b"\n" + line


def swap_type(draw: Callable, line: bytes) -> bytes:
    record = _record(line)
    record["type"] = draw(st.one_of(st.sampled_from(sorted(KNOWN_TYPES)), WEIRD))
    return json.dumps(record).encode()


def drop_fields(draw: Callable, line: bytes) -> bytes:
    record = _record(line)
    for key in draw(st.sets(st.sampled_from(sorted(record)), min_size=1)):
        del record[key]
    message = record.get("message")
    if isinstance(message, dict) and message:
        for key in draw(st.sets(st.sampled_from(sorted(message)))):
            del message[key]
    return json.dumps(record).encode()


def wrong_type(draw: Callable, line: bytes) -> bytes:
    record = _record(line)
    paths = FIELDS + [path for path, _ in _paths(record)]
    for path in draw(st.lists(st.sampled_from(paths), min_size=1, max_size=4)):
        _put(record, path, draw(WEIRD))
    return json.dumps(record).encode()


def huge_string(draw: Callable, line: bytes) -> bytes:
    size = draw(st.sampled_from([10_000, 100_000, 1_000_000]))
    chunk = draw(st.sampled_from(["x", "word ", "sk-ant-api03-" + "A" * 90 + " ", "é€😀\n"]))
    return _with_string(draw, line, lambda old: old + chunk * (size // len(chunk)))


def invalid_utf8(draw: Callable, line: bytes) -> bytes:
    junk = draw(st.binary(min_size=1, max_size=4).map(lambda b: bytes(0x80 | x for x in b)))
    at = draw(st.integers(0, len(line)))
    return line[:at] + junk + line[at + draw(st.integers(0, 2)):]


def deep_nesting(draw: Callable, line: bytes) -> bytes:
    depth = draw(st.sampled_from([200, 900, 1000, 1023, 1025, 5000, 10_000]))
    opener, closer = draw(st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")]))
    nest = opener * depth + b"1" + closer * depth
    if draw(st.booleans()):
        return nest
    record = _record(line)
    _put(record, draw(st.sampled_from(FIELDS)), "@@NEST@@")
    return json.dumps(record).encode().replace(b'"@@NEST@@"', nest)


def odd_number(draw: Callable, line: bytes) -> bytes:
    """A number orjson refuses or Python cannot hold: 5,000 digits, 1e999, NaN, -Infinity."""
    number = draw(st.sampled_from([b"9" * 30, b"9" * 5000, b"-" + b"1" * 4400, b"1e999", b"-1.5e-400", b"NaN",
                                   b"-Infinity", b"0x1F", b"01"]))
    record = _record(line)
    _put(record, draw(st.sampled_from(FIELDS + [path for path, _ in _paths(record)])), "@@NUMBER@@")
    return json.dumps(record).encode().replace(b'"@@NUMBER@@"', number)


def nul_bytes(draw: Callable, line: bytes) -> bytes:
    if draw(st.booleans()):
        at = draw(st.integers(0, len(line)))
        return line[:at] + b"\x00" + line[at:]
    return _with_string(draw, line, lambda old: old[:3] + "\x00" + old[3:])


def lone_surrogate(draw: Callable, line: bytes) -> bytes:
    surrogate = draw(st.sampled_from(["\ud800", "\udfff", "\ud83d"]))
    if draw(st.booleans()):
        at = draw(st.integers(0, len(line)))
        return line[:at] + surrogate.encode("utf-8", "surrogatepass") + line[at:]
    return _with_string(draw, line, lambda old: old[:5] + surrogate + old[5:])


MUTATIONS = [cut, glue, duplicate, swap_type, drop_fields, wrong_type, huge_string, invalid_utf8, deep_nesting,
             odd_number, nul_bytes, lone_surrogate]


@st.composite
def chunks(draw: Callable) -> bytes:
    """One intact corpus line, or one mutated (which may have become two lines)."""
    line = draw(st.sampled_from(corpus_lines()))
    if draw(st.integers(0, 3)) == 0:
        return line
    return draw(st.sampled_from(MUTATIONS))(draw, line)


@st.composite
def damaged_session(draw: Callable) -> list[bytes]:
    """A real session with about one line in five mutated, and a few foreign lines, intact or not."""
    lines = draw(st.sampled_from(DAMAGED)).read_bytes().splitlines()
    damaged = [draw(st.sampled_from(MUTATIONS))(draw, line) if draw(st.integers(0, 4)) == 0 else line
               for line in lines]
    for extra in draw(st.lists(chunks(), max_size=4)):
        damaged.insert(draw(st.integers(0, len(damaged))), extra)
    return damaged


def read_file(path: Path) -> tuple[list[dict], ReadStats]:
    stats = ReadStats()
    return list(read_records(path, stats)), stats


def _counts(stats: ReadStats) -> tuple[int, ...]:
    return (stats.lines, stats.records, stats.not_json, stats.non_object, stats.multi_record,
            stats.truncated_last, stats.invalid_utf8, stats.oversized, stats.bad_lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(chunks(), min_size=1, max_size=6))
def test_a_bad_line_costs_only_itself_and_is_counted(tmp_path_factory: pytest.TempPathFactory,
                                                     parts: list[bytes]) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path_factory.getbasetemp()))
    alone: list[tuple[list[dict], ReadStats]] = []
    for number, part in enumerate(parts):
        path = folder / f"{number}.jsonl"
        path.write_bytes(part + b"\n")
        records, stats = read_file(path)
        alone.append((records, stats))
        lines = [line for line in part.split(b"\n") if line.strip()]
        # Each non-blank line gives at least one record or one counted bad line.
        assert len(records) + stats.bad_lines >= len(lines)
        for line in lines:
            try:
                intact = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(intact, dict) and len(line) < MAX_LINE_BYTES:
                assert intact in records
    whole = folder / "all.jsonl"
    whole.write_bytes(b"".join(part + b"\n" for part in parts))
    records, stats = read_file(whole)
    # Compared as JSON text: a NaN that Python's parser let through is not equal to itself.
    assert json.dumps(records) == json.dumps([r for part_records, _ in alone for r in part_records])
    assert _counts(stats) == tuple(map(sum, zip(*(_counts(s) for _, s in alone), strict=True)))
    shutil.rmtree(folder)


def _ingest_tree(root: Path, bad: bytes | None) -> Eywa:
    projects = root / "projects"
    for source in INTACT:
        target = projects / source.parent.name / source.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(source)
    if bad is not None:
        path = projects / "-home-me-bad" / f"{BAD_ID}.jsonl"
        path.parent.mkdir(parents=True)
        path.write_bytes(bad)
    eywa = Eywa(load_settings(data_dir=root / "data", projects_dir=projects))
    eywa.ingest()
    return eywa


def _intact_state(eywa: Eywa) -> tuple[dict[str, bytes], list[tuple]]:
    data = eywa.settings.data_dir
    ids = [p.stem for p in INTACT]
    files = {str(p.relative_to(data)): p.read_bytes() for p in sorted(data.rglob("*.md")) if p.stem in ids}
    marks = ",".join("?" * len(ids))
    rows = eywa.store.conn.execute(
        f"SELECT h.*, f.handoff, f.prompts, f.replies, f.actions, f.context FROM handoffs h"
        f" JOIN fulltext f ON f.rowid = h.rowid WHERE h.session_uuid IN ({marks}) ORDER BY h.session_uuid", ids
    ).fetchall()
    return files, rows


@pytest.fixture(scope="module")
def clean_state(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, bytes], list[tuple]]:
    eywa = _ingest_tree(tmp_path_factory.mktemp("clean"), None)
    state = _intact_state(eywa)
    eywa.close()
    assert len(state[0]) == 2 * len(INTACT) and len(state[1]) == len(INTACT)
    return state


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(damaged_session())
def test_a_session_of_bad_lines_leaves_the_other_sessions_as_they_were(
        env: dict[str, Path], clean_state: tuple[dict[str, bytes], list[tuple]],
        tmp_path_factory: pytest.TempPathFactory, parts: list[bytes]) -> None:
    root = Path(tempfile.mkdtemp(dir=tmp_path_factory.getbasetemp()))
    bad = orjson.dumps(HEADER) + b"\n" + b"".join(part + b"\n" for part in parts)
    (root / "bad.jsonl").write_bytes(bad)
    expected_bad = read_file(root / "bad.jsonl")[1].bad_lines
    eywa = _ingest_tree(root, bad)
    try:
        assert _intact_state(eywa) == clean_state
        assert eywa.stats().bad_lines == expected_bad
        assert orjson.loads(eywa.store.get_meta("last_ingest_report"))["bad_lines"] == expected_bad
        assert eywa.store.conn.execute("SELECT session_uuid FROM handoffs WHERE session_uuid = ?",
                                       (BAD_ID,)).fetchone() is not None
        eywa.recall("mutated session start")  # searching an index holding the bad session works too
    finally:
        eywa.close()
        shutil.rmtree(root)


AGENT_FILES = [fixture_sessions()[name] for name in ("codex-greeting", "gemini-farewell")]


@st.composite
def damaged_agent_session(draw: Callable) -> tuple[Path, list[bytes]]:
    """A Codex rollout or Gemini chat the real CLIs wrote, about one line in four mutated the same ways."""
    path = draw(st.sampled_from(AGENT_FILES))
    lines = path.read_bytes().splitlines()
    return path, [draw(st.sampled_from(MUTATIONS))(draw, line) if draw(st.integers(0, 3)) == 0 else line
                  for line in lines]


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(damaged_agent_session())
def test_codex_and_gemini_readers_never_raise_on_bad_lines_and_count_them(
        tmp_path_factory: pytest.TempPathFactory, damaged: tuple[Path, list[bytes]]) -> None:
    source, lines = damaged
    root = Path(tempfile.mkdtemp(dir=tmp_path_factory.getbasetemp()))
    target = root / "chats" / source.name  # a Gemini chat's folder; a Codex rollout reads anywhere
    target.parent.mkdir()
    target.write_bytes(b"".join(line + b"\n" for line in lines))
    expected = read_file(target)[1]
    build = build_codex_session if "codex" in source.parts else build_gemini_session
    session, stats = build("s", [target], str)
    assert stats[str(target)].bad_lines == expected.bad_lines
    assert stats[str(target)].records + expected.bad_lines >= len([line for line in lines if line.strip()]) - 1
    Renderer().render(session)  # and it renders
    shutil.rmtree(root)


def test_an_over_long_line_is_read_past_and_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("eywa.core.sources.jsonl.MAX_LINE_BYTES", 1000)
    first, last = ({"type": "user", "uuid": f"u{n}", "message": {"content": "hi"}} for n in (1, 2))
    path = tmp_path / "long.jsonl"
    path.write_bytes(orjson.dumps(first) + b"\n" + orjson.dumps({"type": "user", "text": "x" * 5000}) + b"\n"
                     + orjson.dumps(last) + b"\n")
    records, stats = read_file(path)
    assert records == [first, last]
    assert stats.oversized == 1 and stats.bad_lines == 1 and stats.lines == 3
    assert stats.bytes_read == path.stat().st_size


@pytest.mark.parametrize("duration", ["abc", float("nan"), float("inf"), [1], True, 2**70])
def test_a_subagent_result_with_wrong_typed_counts_still_renders(tmp_path: Path, duration: object) -> None:
    from eywa.core.archive.renderer import Renderer
    from eywa.core.sources.claude.builder import build_session

    call = {"type": "assistant", "timestamp": "2026-02-01T10:00:00Z", "message": {
        "id": "m1", "model": "claude-opus-4-6",
        "content": [{"type": "tool_use", "id": "t1", "name": "Task", "input": {"description": "look around"}}]}}
    result = {"type": "user", "timestamp": "2026-02-01T10:01:00Z",
              "toolUseResult": {"agentId": "a1", "totalDurationMs": duration, "totalToolUseCount": "many"},
              "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "found it"}]}}
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(call) + "\n" + json.dumps(result) + "\n")
    session, _ = build_session("s", [path], [], lambda text: text)
    markdown = Renderer().render(session)
    assert "- Task `[agent] look around`" in markdown and "found it" in markdown
