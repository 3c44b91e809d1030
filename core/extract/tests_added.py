"""The tests the session added and renamed, by name (`ToolCall.tests_added`, read from each write's whole texts): What
Happened's line of them, the names a successor looks for."""

from __future__ import annotations

from eywa.core.extract.key_files import DOC_FILE_RE
from eywa.core.extract.marks import counted
from eywa.core.extract.terms import words_of
from eywa.core.handoffs.fixed_words import TESTS_ADDED, TESTS_RENAMED
from eywa.core.session import WRITE_TOOLS, Session

NAMED_TESTS = 3  # of each kind on the line; the rest counted
_NOT_A_NAME = frozenset({"test", "tests"})  # the part every test's name has: no sign of a rename


def tests_written(session: Session) -> tuple[list[str], list[tuple[str, str]]]:
    """(the tests the session's writes added and no later write took out, (name before, name now) of each test a write
    renamed: one test out and one alike in the same write). A Write over a file the session read or edited first
    declares its tests anew: only those its last Write did not are added (none, without such a Write)."""
    added: dict[str, None] = {}
    renamed: dict[str, str] = {}  # the name now -> the name before the session
    written: dict[str, list[str]] = {}  # a file -> the tests of the session's last Write of it
    seen: set[str] = set()  # the files read or edited so far
    for event in session.events:
        call = event.tool
        if call is None:
            continue
        path = str(call.input.get("file_path", ""))
        if call.name == "Read":
            seen.add(path)
        if call.name not in WRITE_TOOLS or call.is_error or call.rejected or DOC_FILE_RE.search(path):
            continue  # a plan's or a doc's test is code shown, not written
        new, gone = call.tests_added, call.tests_gone
        if call.name == "Write" and path in seen:
            before = written.get(path)  # None: the tests the file had before are not known
            new, gone = ([t for t in new if t not in before], [t for t in before if t not in new]) \
                if before is not None else ([], [])
        if call.name == "Write":
            written[path] = call.tests_added
        seen.add(path)
        if len(new) == 1 and len(gone) == 1 and (words_of(new[0]) & words_of(gone[0])) - _NOT_A_NAME:
            was = renamed.pop(gone[0], gone[0])
            if gone[0] in added:
                del added[gone[0]]
                added[new[0]] = None
            elif was != new[0]:
                renamed[new[0]] = was
            continue
        for name in gone:
            added.pop(name, None)
            renamed.pop(name, None)
        added |= dict.fromkeys(name for name in new if name not in renamed)
    return list(added), [(was, now) for now, was in renamed.items()]


def tests_line(session: Session, said: list[str]) -> list[str]:
    """What Happened's line of the tests the session added and renamed, those the bullets `said` name left out:
    "Tests added: `TestX`, `TestY` and 2 more; renamed: `TestA` → `TestB`"."""
    added, renamed = tests_written(session)
    told = " ".join(said)
    added = [name for name in added if f"`{name}`" not in told]
    renamed = [(was, now) for was, now in renamed if f"`{now}`" not in told]
    named = counted([f"`{was}` → `{now}`" for was, now in renamed], NAMED_TESTS)
    if not added:
        return [f"{TESTS_RENAMED} {named}"] if renamed else []
    listed = counted([f"`{name}`" for name in added], NAMED_TESTS)
    return [f"{TESTS_ADDED} {listed}" + (f"; renamed: {named}" if renamed else "")]
