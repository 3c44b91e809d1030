"""The files a session changed, by any tool of any agent: its edit tools, its shell (written, copied, moved, deleted),
its subagents (their own transcripts, or what a run reports it wrote when its transcript is not kept). Scratch files
(a temporary folder, the agent's own plans and transcripts) are not the work."""

from __future__ import annotations

import re
from collections import Counter

from eywa.core.archive.renderer import relative_path
from eywa.core.extract import commands
from eywa.core.session import WRITE_TOOLS, Session

MAX_KEY_FILES = 12  # a long session's work spans more files than the few it edited most
# Where nothing is the work: temporary folders, and what an agent keeps of its own (plans, transcripts).
TEMP_FOLDERS = ("/tmp/", "/private/tmp/", "/var/folders/", "/private/var/folders/")
_SCRATCH_RE = re.compile(r"^/dev/|/\.claude/(?:plans|projects|todos)/|/\.codex/sessions/|/\.gemini/tmp/")
# A subagent's report of a file it wrote: "The review has been written to `docs/review-01.md`", "I have created the
# file `docs/color.md`", "Review written to `x.md`" (not "Created `.gitignore` with ...", which describes code).
_REPORTED_WRITE_RE = re.compile(r"(?<!\bis )(?<!\bare )(?<!\bbe )\b(?:written|saved|wrote|exported)(?: [\w-]+){0,3} "
                                r"(?:to|at|in) `([^`\s]+)`|\bcreated (?:the |a |a new )?file `([^`\s]+)`",
                                re.IGNORECASE)
_TEST_RE = re.compile(r"(?:^|/)(?:tests?|__tests__|spec)/|(?:^|/)test_[^/]*$|_test\.\w+$|\.(?:test|spec)\.\w+$")
_DOC_RE = re.compile(r"\.(?:md|mdx|rst|txt|adoc)$", re.IGNORECASE)


def _scratch(path: str) -> bool:
    return path.startswith(TEMP_FOLDERS) or bool(_SCRATCH_RE.search(path))


def changed_files(session: Session) -> list[tuple[str, bool]]:
    """(the path, relative to the session's folder when inside it; whether the change deleted it) of each change, in
    order: read once per draft."""
    found: list[tuple[str, bool]] = []
    # a run whose transcript is kept names its writes there: a path it reports is counted once, from that transcript
    kept = {relative_path(path, session.cwd) for run in session.subagents for path in run.files_written}
    known: dict[str, None] = {}  # the files read or written so far, as the agent named them: what `rm -r` deletes
    for call in session.tool_calls:
        if call.is_error:
            continue
        path = call.input.get("file_path") or call.input.get("notebook_path") or call.input.get("path")
        if isinstance(path, str) and call.name in (*WRITE_TOOLS, "Read"):
            known[path] = None
            if call.name in WRITE_TOOLS:
                found.append((relative_path(path, session.cwd), False))
        if call.name == "Bash" and isinstance(call.input.get("command"), str):
            command = call.input["command"]
            deleted = set(commands.files_deleted(command))
            found += [(relative_path(changed, session.cwd), changed in deleted)
                      for changed in commands.files_changed(command)]
            for folder in commands.folders_removed(command):
                found += [(path, True) for path in _inside(folder, known, session.cwd)]
        elif call.name in ("Task", "Agent") and call.result:
            seen = {path for path, _ in found} | kept
            found += [(path, False) for path in _reported_writes(call.result, session.cwd) if path not in seen]
    found += [(relative_path(path, session.cwd), False) for run in session.subagents for path in run.files_written]
    return [(path, gone) for path, gone in found if not _scratch(path)]


def _absolute(path: str, cwd: str) -> str:
    return path if path.startswith("/") or not cwd else f"{cwd.rstrip('/')}/{path}"


def _inside(folder: str, known: dict[str, None], cwd: str) -> list[str]:
    """The files the session knew (read or wrote) inside a folder it removed recursively: deleted with it."""
    base = _absolute(folder, cwd).rstrip("/") + "/"
    return [relative_path(path, cwd) for path in known if _absolute(path, cwd).startswith(base)]


def _reported_writes(result: str, cwd: str) -> list[str]:
    paths = [m.group(1) or m.group(2) for m in _REPORTED_WRITE_RE.finditer(result)]
    return [relative_path(path, cwd) for path in dict.fromkeys(paths)
            if ("/" in path or "." in path.strip(".")) and not any(c in path for c in "<>{}$*")]  # no `<id>.log`


def _kind(path: str) -> int:
    """Code (and configuration) first, then tests, then documents: what a reader opens first to see the change."""
    return 2 if _DOC_RE.search(path) else 1 if _TEST_RE.search(path) else 0


def key_files(changes: list[tuple[str, bool]]) -> list[str]:
    """The `MAX_KEY_FILES` files changed most (of as many, the last changed: where the work stands), code before tests
    before documents, each in the order the session came to them (the order a reader of the session lists them in).
    `changes`: the session's `changed_files`."""
    counts = Counter(path for path, _ in changes)  # in the order first changed
    first = {path: rank for rank, path in enumerate(counts)}
    last = {path: index for index, (path, _) in enumerate(changes)}
    gone = dict(changes)  # whether its last change deleted it
    kept = sorted(counts, key=lambda path: (-counts[path], -last[path]))[:MAX_KEY_FILES]
    ranked = sorted(kept, key=lambda path: (_kind(path), first[path]))
    return [f"`{path}` ({_changed(counts[path], gone[path])})" for path in ranked]


def _changed(count: int, deleted: bool) -> str:
    """"2 edits", or for a file the session deleted last "deleted" ("1 edit, then deleted"): no file left to open."""
    edits = count - deleted
    said = f"{edits} edit{'s' if edits > 1 else ''}"
    return ("deleted" if not edits else f"{said}, then deleted") if deleted else said
