"""Decodes a transcript line into only the parts a session is built from (core/sources/claude/builder.py).

Tool outputs (`toolUseResult`, a tool_result's content), progress payloads, file snapshots and thinking
blocks are most of a transcript's bytes, and a handoff shows none of them but a tool's error and a
subagent's answer: skipped, they never become Python objects. The parts kept whole (a tool's input or
output, compaction metadata, a system record's error and content) stay raw JSON, decoded by
`part_value` with orjson where they are read.

A line is decoded whole instead (`decode_parts` raises) where this could read it otherwise than
`orjson.loads`, or than Python's parser after it: a kept part of another type (a damaged line), a whole
number outside int64 (orjson reads up to uint64 exactly, then fails: the int64 bound sends them all to
it), NaN, invalid JSON, and a run of digits longer than Python accepts for a whole number (that line is
not JSON to it, where this decoder would skip the number).
One exception: the UTF-8 and the range of the numbers of a part it skips are not checked. A line orjson
refuses for that alone keeps its parts as orjson reads them, where Python's parser read the line: the
two differ only on whole numbers past 64 bits in a part kept raw, and `invalid_utf8` does not count it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Annotated, TypedDict, cast

import msgspec
import orjson

_Int64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
_Scalar = str | bool | None | _Int64 | float


class _Block(TypedDict, total=False):
    type: _Scalar
    text: _Scalar
    id: _Scalar
    name: _Scalar
    tool_use_id: _Scalar
    is_error: _Scalar
    input: msgspec.Raw  # a tool's input
    content: msgspec.Raw  # a tool's output


class _Message(TypedDict, total=False):
    id: _Scalar
    model: _Scalar
    content: list[_Block | str] | str


class _ToolUseResult(TypedDict, total=False):
    agentId: _Scalar
    status: _Scalar
    totalDurationMs: _Scalar
    totalTokens: _Scalar
    totalToolUseCount: _Scalar
    content: msgspec.Raw  # an Agent run's report (2.1.332: the tool_result text wraps it in a frame)
    task: msgspec.Raw  # TaskCreate's {id, subject, ...}
    answers: msgspec.Raw  # AskUserQuestion's {question: the option picked}


class _PermissionDecision(TypedDict, total=False):
    decision: _Scalar
    source: _Scalar


class _Record(TypedDict, total=False):
    type: _Scalar
    uuid: _Scalar
    timestamp: _Scalar
    cwd: _Scalar
    gitBranch: _Scalar
    version: _Scalar
    isSidechain: _Scalar
    agentId: _Scalar
    isMeta: _Scalar
    isCompactSummary: _Scalar
    isApiErrorMessage: _Scalar
    summary: _Scalar
    leafUuid: _Scalar
    customTitle: _Scalar
    aiTitle: _Scalar
    title: _Scalar
    prUrl: _Scalar
    subtype: _Scalar
    permissionMode: _Scalar
    permissionDecision: _PermissionDecision | _Scalar
    message: _Message
    toolUseResult: _ToolUseResult | list[msgspec.Raw] | _Scalar
    compactMetadata: msgspec.Raw  # these three: of system records, few and small
    error: msgspec.Raw
    content: msgspec.Raw


_decode = cast("Callable[[bytes], dict]", msgspec.json.Decoder(_Record).decode)  # a _Record is a dict
_decode_names = msgspec.json.Decoder(dict[str, msgspec.Raw]).decode  # keys only: values stay undecoded
_DIGIT = bytes(range(48, 58))


def decode_parts(line: bytes) -> dict:
    """The kept parts of a line's record. Raises ValueError or RecursionError where the line is to be
    decoded whole (see the module docstring)."""
    limit = sys.get_int_max_str_digits()
    if limit and len(line) > limit and _may_hold_digits(line, limit + 1):
        raise ValueError("a run of digits too long for a whole number")
    return _decode(line)


def top_level(line: bytes) -> dict[str, msgspec.Raw]:
    """A line's top-level fields, their values undecoded ({} if the line is not one JSON object). A name with
    invalid UTF-8 (which `decode_parts` skips unchecked) is read with U+FFFD, as the reader reads the line."""
    try:
        return _decode_names(line)
    except msgspec.DecodeError:
        readable = line.decode("utf-8", errors="replace").encode()
        return top_level(readable) if readable != line else {}
    except RecursionError:
        return {}


def _may_hold_digits(line: bytes, run: int) -> bool:
    """False if `line` has no run of `run` digits. A run that long covers two consecutive bytes of the
    sample taken every `run // 2` bytes and all between: the few candidates are checked, not the line."""
    step = run // 2
    sample = line[::step]
    at = 0
    while (at := _next_digit_pair(sample, at)) >= 0:
        if line[at * step : (at + 1) * step + 1].isdigit():
            return True
        at += 1
    return False


def _next_digit_pair(sample: bytes, start: int) -> int:
    for at in range(start, len(sample) - 1):
        if sample[at] in _DIGIT and sample[at + 1] in _DIGIT:
            return at
    return -1


def part_value(value: object) -> object:
    """A kept part as `orjson.loads` gives it: raw JSON decoded, anything else as it is."""
    if not isinstance(value, msgspec.Raw):
        return value
    try:
        return orjson.loads(memoryview(value))
    except orjson.JSONDecodeError:
        # Invalid UTF-8 or a number out of range, which the line's decoder passes in parts it does not
        # read: read as a line is then (core/sources/jsonl.py).
        try:
            return json.loads(bytes(value).decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            return None
