"""The queue of sessions an ingest reads (core/ingest/spool.py): added in any order, read in the order given, each
from the temporary file, so the queue is sorted as numbers of records rather than as sessions held in memory."""

from __future__ import annotations

from eywa.core.ingest.spool import SessionSpool
from eywa.core.sources.plugin import SessionFiles, SourceFile
from eywa.core.sources.projects import ProjectNames


def test_sessions_added_in_any_order_are_read_in_the_order_given_with_their_machines_projects() -> None:
    names = ProjectNames({})
    spool = SessionSpool({"laptop": names})
    groups = [SessionFiles(f"s{number}", main=[SourceFile(f"/p/s{number}.jsonl", number, number, "main")],
                           machine="laptop" if number % 2 else "") for number in range(5)]
    for group in groups:
        spool.add(group)
    order = [3, 0, 4, 1, 2]
    spool.spans = spool.ordered(order)  # as the planning child hands them to the parent
    read = list(spool)
    assert [group.session_id for group in read] == [f"s{number}" for number in order]
    assert [group.main for group in read] == [groups[number].main for number in order]
    assert [group.projects for group in read] == [names if number % 2 else None for number in order]
    assert spool[-1].session_id == "s2" and [g.session_id for g in spool[1:3]] == ["s0", "s4"]
    spool.close()
