"""The plan's compact records (issue 29): sessions grouped as ranges of the files found (`Groups`), and the changed
paths as the smaller of their set and its complement (`ChangedFiles`): the same sessions, files and order as the
plain grouping, in less memory a file."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable

import pytest

from eywa.core.ingest.changed import ChangedFiles
from eywa.core.sources import CODEX, KINDS, agent
from eywa.core.sources.discovery import file_session, group_sessions, scan_files, session_key
from eywa.core.sources.plugin import SessionFiles, SourceFile

from .conftest import AGENT_FIXTURES, CORPUS, ROOT


def _by_lists(files: list[SourceFile], parent_of: Callable[[SourceFile], str | None]) -> dict[str, SessionFiles]:
    """The grouping as it was, a `SessionFiles` with its lists a session: what `Groups` must equal."""
    sessions: dict[str, SessionFiles] = {}
    spawned = []
    for source in files:
        if source.role == "main":
            sid = session_key(source, parent_of)
            if agent(source.agent).spawned(source, sid):
                spawned.append((sid, source))
                continue
            sessions.setdefault(sid, SessionFiles(sid, agent=source.agent, machine=source.machine)).main.append(source)
    for sid, source in spawned:
        sessions.setdefault(sid, SessionFiles(sid, agent=source.agent, machine=source.machine)).subagents.append(source)
    for source in files:
        if source.role != "main":
            sid = session_key(source, parent_of)
            sessions.setdefault(sid, SessionFiles(sid, agent=source.agent, machine=source.machine)).subagents.append(
                source)
    return sessions


def test_groups_hold_the_same_sessions_files_and_order_as_lists_did() -> None:
    seen = spawned = 0
    for root in (CORPUS, AGENT_FIXTURES, ROOT / "tests" / "fixtures"):
        for kind in KINDS:
            files = scan_files(root, kind)
            expected = _by_lists(files, file_session)
            groups = group_sessions(files, file_session)
            assert list(groups.items()) == list(expected.items())
            assert len(groups) == len(groups.values()) == len(expected)
            assert all(groups[sid] == group and sid in groups for sid, group in expected.items())
            seen += len(files)
            spawned += sum(len(g.subagents) for g in expected.values() if g.agent == CODEX)
    assert seen > 250 and spawned >= 1  # the corpus's subagents and a Codex subagent's own rollout among them


def _claude(number: int) -> SourceFile:
    return SourceFile(f"/p/-home-me-x/{number:08d}-0000-4000-8000-000000000000.jsonl", 1000 + number,
                      1_700_000_000_000_000_000 + number, "main")


def test_a_session_set_back_keeps_what_is_added_and_popping_lets_every_file_go() -> None:
    files = [_claude(n) for n in range(3)]
    groups = group_sessions(files, file_session)
    first, middle, last = (f.location.rsplit("/", 1)[1][:-6] for f in files)
    extra = SourceFile("/q/run.jsonl", 1, 1, "agent-run", CODEX)
    group = groups[first]
    group.subagents.append(extra)  # as `link_runs` links a run to its parent
    assert groups[first].subagents == []  # made anew when asked for, as a shelf's entries are
    groups[first] = group
    assert groups[first].subagents == [extra]
    with pytest.raises(KeyError):
        groups["not-grouped"] = group
    del groups[last]
    assert last not in groups and len(groups) == 2 and [g.session_id for g in groups.values()] == [first, middle]
    popped = [groups.popitem() for _ in range(2)]
    assert [sid for sid, _ in popped] == [middle, first]
    assert popped[1][1].subagents == [extra] and popped[1][1].main == [files[0]]
    assert not groups and list(groups.items()) == [] and groups._files == []  # nothing held once drained
    with pytest.raises(KeyError):
        groups.popitem()


def test_grouping_a_large_disk_costs_a_fraction_of_a_session_object_a_file() -> None:
    files = [_claude(n) for n in range(20_000)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        by_lists = _by_lists(files, file_session)
        lists = tracemalloc.get_traced_memory()[0] - before
        del by_lists
        before = tracemalloc.get_traced_memory()[0]
        groups = group_sessions(files, file_session)
        ranges = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(groups) == 20_000
    assert ranges < 0.6 * lists  # a fraction of what the lists held, whatever the suite interned before


def test_changed_files_of_a_first_ingest_hold_no_paths_and_answer_as_the_set_however_often_asked() -> None:
    files = [_claude(n) for n in range(10)]
    every = ChangedFiles(files, {f.location for f in files})
    some = ChangedFiles(files, {files[3].location})
    most = ChangedFiles(files, {f.location for f in files[1:]})
    assert len(every._paths) == 0 and len(some._paths) == 1 and len(most._paths) == 1  # the smaller side held
    assert [len(every), len(some), len(most)] == [10, 1, 9]
    for _ in range(2):  # nothing a path was asked about is let go of: a second asking answers the same
        assert all(f.location in every for f in files)
        assert [f.location in some for f in files] == [n == 3 for n in range(10)]
        assert [f.location in most for f in files] == [n != 0 for n in range(10)]


def test_asking_whether_a_session_is_grouped_makes_no_session_record(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan asks of every session to redraft (all of them after a rules change): an answer, not a record each."""
    files = [_claude(n) for n in range(3)]
    groups = group_sessions(files, file_session)
    first = files[0].location.rsplit("/", 1)[1][:-6]

    def made(*_: object) -> SessionFiles:
        raise AssertionError("a SessionFiles made to answer `in`")

    monkeypatch.setattr(type(groups), "_made", made)
    assert first in groups and "not-grouped" not in groups and 3 not in groups
    del groups[first]
    assert first not in groups
