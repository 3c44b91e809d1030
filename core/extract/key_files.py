"""The files a session changed, by any tool of any agent: its edit tools, its shell (written, copied, moved, deleted),
its subagents (their own transcripts, or what a run reports it wrote when its transcript is not kept). Scratch files
(a temporary folder, the agent's own plans and transcripts) are not the work. Beside a few changes: the files the
session read that the work turned on (read again, named in its plan or its last reports, the code a changed test
tests, beside one or two changes a file the person named, then any file it read). And the files its commits took in by
name that it did not change: work made before it, which it committed."""

from __future__ import annotations

import re
from collections import Counter

from eywa.core.archive.renderer import relative_path
from eywa.core.extract import commands
from eywa.core.session import SUBAGENT_TOOLS, WRITE_TOOLS, Session

LAST_REPORTS = 3  # the last messages, where the work is reported done: a file they name is the work
MAX_KEY_FILES = 12  # a long session's work spans more files than the few it edited most
MAX_READ_KEY_FILES = 3  # read files listed beside the changes: the few a reader opens to follow the work
FEW_CHANGES = 2  # beside as few changes, what the session studied tells its work: a file the person named is enough
# Where nothing is the work: temporary folders, and what an agent keeps of its own (plans, transcripts).
TEMP_FOLDERS = ("/tmp/", "/private/tmp/", "/var/folders/", "/private/var/folders/")
_SCRATCH_RE = re.compile(r"^/dev/|/\.claude/(?:plans|projects|todos)/|/\.codex/sessions/|/\.gemini/tmp/")
# A subagent's report of a file it wrote: "The review has been written to `docs/review-01.md`", "I have created the
# file `docs/color.md`", "Review written to `x.md`" (not "Created `.gitignore` with ...", which describes code).
_REPORTED_WRITE_RE = re.compile(r"(?<!\bis )(?<!\bare )(?<!\bbe )\b(?:written|saved|wrote|exported)(?: [\w-]+){0,3} "
                                r"(?:to|at|in) `([^`\s]+)`|\bcreated (?:the |a |a new )?file `([^`\s]+)`",
                                re.IGNORECASE)
TEST_FILE_RE = re.compile(r"(?:^|/)(?:tests?|__tests__|spec)/|(?:^|/)test_[^/]*$|_(?:test|spec)\.\w+$|"
                      r"\.(?:test|spec)\.\w+$|\wTests?\.(?:java|kt|cs|swift|scala)$")
DOC_FILE_RE = re.compile(r"\.(?:md|mdx|rst|txt|adoc)$", re.IGNORECASE)
# Read but never the work: images and documents shown to the agent, installed dependencies' sources, local secrets
# and keys (an example env file is not one), generated lock files.
_NOT_WORK_RE = re.compile(r"\.(?:png|jpe?g|gif|webp|ico|pdf)$|(?:^|/)(?:node_modules|site-packages|dist-packages|"
                          r"\.venv|venv|\.git)/|/go/pkg/mod/|(?:^|/)\.env(?:\.(?!example$|sample$|template$)[\w.-]+)?$|"
                          r"(?:^|/)(?:\.envrc|\.npmrc|\.pypirc|\.netrc|id_(?:rsa|dsa|ecdsa|ed25519)\b[^/]*)$|"
                          r"\.(?:pem|key|p12|pfx)$|(?:^|/)(?:package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|"
                          r"pnpm-lock\.yaml|go\.sum|Cargo\.lock|poetry\.lock|uv\.lock|Gemfile\.lock|composer\.lock)$",
                          re.IGNORECASE)
_NAME_RE = re.compile(r"[\w.-]+")
_ABSOLUTE_RE = re.compile(r"/|[A-Za-z]:[\\/]")  # a path outside the session's folder, of POSIX or of Windows
# The code a test tests: `x_test.go`, `test_x.py`, `x_spec.rb`, `x.test.ts`, `x.spec.js`, `XTest.java` -> `x`, `X`.
_TESTED_RE = re.compile(r"^(?:test_)?(?P<stem>.+?)(?:_test|_spec|\.test|\.spec|Tests?)?\.(?P<ext>\w+)$")


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
        path = call.path
        if path is not None and call.name in (*WRITE_TOOLS, "Read"):
            known[path] = None
            if call.name in WRITE_TOOLS:
                found.append((relative_path(path, session.cwd), False))
        if call.name == "Bash" and isinstance(call.input.get("command"), str):
            command = call.input["command"]
            ops = commands.file_ops(command)
            deleted = {path for path, deletes in ops if deletes}
            found += [(relative_path(changed, session.cwd), changed in deleted) for changed, _ in ops]
            for folder in commands.folders_removed(command):
                found += [(path, True) for path in _inside(folder, known, session.cwd)]
        elif call.name in SUBAGENT_TOOLS and call.result:
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
    return 2 if DOC_FILE_RE.search(path) else 1 if TEST_FILE_RE.search(path) else 0


def files_read(session: Session, changes: list[tuple[str, bool]]) -> list[str]:
    """The files the session read but did not change that its work turned on, best first: read again, named in its plan,
    in its last reports or twice in its words, the code a changed test tests, or, beside `FEW_CHANGES`, named by the
    person (the more of these, the better); beside `FEW_CHANGES` any file read, after those, the most read first. Only
    the project's: inside the session's folder or a folder it changed files in. `changes`: its `changed_files`."""
    changed = {path for path, _ in changes}
    reads: Counter[str] = Counter()
    for call in session.tool_calls:
        path = call.path
        if call.name == "Read" and not call.is_error and path:
            reads[relative_path(path, session.cwd)] += 1
    # the folders of the changes and the session's own (Windows paths are never made relative to it)
    worked = tuple({_posix(path).rsplit("/", 1)[0] + "/" for path in [*changed, session.cwd + "/."]
                    if _ABSOLUTE_RE.match(path)})
    texts = [event.text for event in session.events if event.kind == "assistant" and event.text]
    said, plans = [_names(text) for text in texts], _plans(session)
    planned = set().union(*map(_names, plans))
    few = len(changed) <= FEW_CHANGES
    # the files the person pointed the session at, a sign only beside few changes
    asks = session.user_texts if few else []
    asked = set().union(*map(_names, asks))
    names = Counter(map(_base, reads))
    # names several files read share, of which the words name one by its path (`src/a/index.ts`)
    by_path = {_base(path) for path in reads if names[_base(path)] > 1 and any(path in text for text in texts + plans)}
    tested = {_tested(path) for path in changed if TEST_FILE_RE.search(path)}
    scored = []
    for rank, (path, count) in enumerate(reads.items()):
        if path in changed or _scratch(path) or _NOT_WORK_RE.search(path) or path.startswith("~") or (
                _ABSOLUTE_RE.match(path) and not _posix(path).startswith(worked)):
            continue
        name = _base(path)
        if name in by_path:  # another file read has its name (`index.ts`), and the words tell them apart
            named, in_plan = [path in text for text in texts], any(path in plan for plan in plans)
            pointed = any(path in text for text in asks)
        else:
            named, in_plan, pointed = [name in words for words in said], name in planned, name in asked
        signs = (count > 1, any(named[-LAST_REPORTS:]), in_plan, sum(named) > 1,
                 _kind(path) == 0 and _tested(path) in tested, pointed)
        if any(signs) or few:  # beside few changes what the session studied is its work: any file read, signed first
            scored.append((-sum(signs), -count, rank, path))
    return [path for *_, path in sorted(scored)]


def _posix(path: str) -> str:
    return path.replace("\\", "/")


def _base(path: str) -> str:
    return _posix(path).rsplit("/", 1)[-1]


def _plans(session: Session) -> list[str]:
    """The session's plans: what it gave to approve (even refused: it names the files the work is about) and wrote to
    its plan files."""
    found = []
    for call in session.tool_calls:
        if call.name == "ExitPlanMode":
            found.append(str(call.input.get("plan", "")))
        elif call.name in WRITE_TOOLS and "/plans/" in str(call.input.get("file_path", "")):
            found.append(str(call.input.get("content") or call.input.get("new_string") or ""))
    return found


def _names(text: str) -> set[str]:
    """The file names a text could name (`x.go` of "`cmd/x.go`", of "in x.go."): its runs of name characters."""
    return {word.rstrip(".") for word in _NAME_RE.findall(text)}


def _tested(path: str) -> str:
    """A file's name without its test marks and extension: the same for a test and the code it tests."""
    name = _base(path)
    match = _TESTED_RE.match(name)
    return match.group("stem").lower() if match else name.lower()


def files_committed(session: Session, changes: list[tuple[str, bool]]) -> list[str]:
    """The files a commit of the session took in by name (`git add a.go b.go && git commit`) that it did not change:
    work made before it, which it committed."""
    changed = {path for path, _ in changes}
    staged: list[str] = []
    found: dict[str, None] = {}
    for call in session.tool_calls:
        command = call.input.get("command") if call.name == "Bash" else None
        # a repository made in a temporary folder to try something out: its commits are no work of the session's
        if not isinstance(command, str) or call.is_error or call.rejected or any(f in command for f in TEMP_FOLDERS):
            continue
        for step in commands.git_steps(command):
            if step.verb == "add" and not commands.stages_all(step):
                staged += [relative_path(path, session.cwd) for path in commands.paths_in(step.args)]
            elif step.verb == "commit":
                found.update(dict.fromkeys(path for path in staged if path not in changed and not path.endswith("/")
                                           and not any(c in path for c in "*?[{$")))
                staged = []
    return list(found)


def key_files(changes: list[tuple[str, bool]], read: list[str] | None = None,
              committed: list[str] | None = None) -> list[str]:
    """The `MAX_KEY_FILES` files changed most (of as many, those still there, then the last changed: where the work
    stands), code before tests before documents, each in the order the session came to them (the order a reader of the
    session lists them in); then the files it `committed` unchanged (`files_committed`), in the places left; then, in
    the places left, up to `MAX_READ_KEY_FILES` of the files it `read` (`files_read`), marked read. `changes`: the
    session's `changed_files`."""
    counts = Counter(path for path, _ in changes)  # in the order first changed
    first = {path: rank for rank, path in enumerate(counts)}
    last = {path: index for index, (path, _) in enumerate(changes)}
    gone = dict(changes)  # whether its last change deleted it
    kept = sorted(counts, key=lambda path: (gone[path], -counts[path], -last[path]))[:MAX_KEY_FILES]
    ranked = sorted(kept, key=lambda path: (_kind(path), first[path]))
    ranked += [path for path in committed or [] if path not in counts][:MAX_KEY_FILES - len(ranked)]
    places = min(MAX_READ_KEY_FILES, MAX_KEY_FILES - len(ranked))
    said = {path: _changed(counts[path], gone[path]) if path in counts else "committed" for path in ranked}
    return [f"`{path}` ({said[path]})" for path in ranked] + [
        f"`{path}` (read)" for path in (read or [])[:places]]


def _changed(count: int, deleted: bool) -> str:
    """"2 edits", or for a file the session deleted last "deleted" ("1 edit, then deleted"): no file left to open."""
    edits = count - deleted
    said = f"{edits} edit{'s' if edits > 1 else ''}"
    return ("deleted" if not edits else f"{said}, then deleted") if deleted else said
