"""The steps of the last plan a session carried out that no edit or command after it stands behind, for any agent.

The plan: one approved in plan mode (ExitPlanMode), given as "Implement the following plan", written to a plan file
outside plan mode, a list of changes the agent proposed and the user then told it to carry out, or, in a session
with none of these, one it announced before its edits ("Let me implement the changes: 1. ..."). Its steps: its
numbered headings ("### 3. Use absolute path for filter command"), the headings under a section of changes and the
items beginning with a verb, not its context, analysis or verification (facts.py reads a plan's files and its
verification). A step is done when, after the plan, an edit touched a file it names, an edit, a command or the
agent's report gives a code name it gives, an edit does what its kind asks (a test file for a "tests" step, a
document for a "docs" step), an edit or command shares most of its words, or a todo item marked completed does;
the steps with none of these are open threads.
"""

from __future__ import annotations

import re

from eywa.core.extract import commands, marks
from eywa.core.extract.directions import PLAN_PROMPT
from eywa.core.extract.key_files import DOC_FILE_RE, TEST_FILE_RE
from eywa.core.extract.said_left import YES_WORDS, clause
from eywa.core.handoffs.fixed_words import STEP_LEFT
from eywa.core.retrieval.query_tokens import content_words
from eywa.core.session import WRITE_TOOLS, Event, Session

MAX_STEPS = 2  # threads of one plan's steps left: more says the plan was dropped, not that a step was
_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*)$")
_NUMBERED_HEADING_RE = re.compile(r"^(?:\*\*)?(?:step|phase|part)?\s*\d{1,2}[.):]\s+(.+?)(?:\*\*)?$", re.IGNORECASE)
_ITEM_RE = re.compile(r"^(?:\d{1,2}[.)]|[-*])\s+(?:\[[ x]\]\s+)?(.+)$")
# A section whose sub-headings are the steps ("## Plan", "## Changes", "## Implementation Steps")
_CHANGES_HEADING_RE = re.compile(r"\b(?:plan|changes?|implementation|solution|fix|steps?|approach|tasks?|"
                                 r"what needs to change|proposed)\b", re.IGNORECASE)
# The parts of a plan that say why or how to check, not what to change
_ASIDE_HEADING_RE = re.compile(
    r"\b(?:context|problem|background|analysis|root cause|overview|summary|goals?|current|files?|verification|"
    r"verify|testing|test plan|edge cases?|risks?|notes?|out of scope|non-goals?|alternatives?|workaround|possible|"
    r"confirmed|findings?|why|questions?|considerations?|trade-?offs?|rollback|success criteria|references?)\b",
    re.IGNORECASE)
# A step that changes or runs something, as a list item under a section of changes begins
_STEP_VERBS = ("add update create implement remove rename move write extract replace refactor fix use change document "
               "run wire register handle support migrate delete make introduce expose bump modify set switch convert "
               "split merge drop install configure enable disable pass return call store read log emit define "
               "generate build deploy publish release test verify check regenerate extend adjust rewrite wrap "
               "guard validate expand upgrade pin include allow prevent ensure rework simplify raise lower limit "
               "annotate backfill seed populate schedule").split()
_STEP_VERB_RE = re.compile(rf"^(?:\*\*)?(?:{'|'.join(_STEP_VERBS)})\b", re.IGNORECASE)
_SKIPPED_RE = re.compile(r"✅|\bDONE\b|~~|\b(?:optional(?:ly)?|if needed|if necessary|nice to have|consider|"
                         r"maybe|minor)\b", re.IGNORECASE)
_TESTS_RE = re.compile(r"\b(?:unit |integration |e2e )?tests?\b|\btest cases?\b|\bcoverage\b", re.IGNORECASE)
_COMMAND_SPAN_RE = re.compile(r"`([a-z][\w.-]*(?: [^`\n]+)+)`")  # a command line in backticks
_RUN_RE = re.compile(r"^(?:\*\*)?(?:run|re-?run|execute|verify|check|build|deploy|publish|install|regenerate)\b",
                     re.IGNORECASE)
_DOCS_RE = re.compile(r"\b(?:readme|docs?|documentation|changelog|document)\b", re.IGNORECASE)
_DOCS_FOLDER_RE = re.compile(r"(?:^|/)docs?/", re.IGNORECASE)  # any file of a docs folder is documentation
_CODE_RE = re.compile(r"`([^`\n]{2,120})`")
_FILE_RE = re.compile(r"[\w./-]*\w\.[A-Za-z]{1,5}\b")
_NAME_RE = re.compile(r"[A-Za-z_][\w.-]*\w")
_FENCED_RE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_BARE_NAME_RE = re.compile(r"\b[A-Za-z]\w*(?:[a-z][A-Z]|_)\w*\b")  # `camelCase`, `snake_case`: code, not prose
# "Let's implement this", "yes go ahead", "do it": the user told the agent to carry out what it proposed
_GO_RE = re.compile(rf"^(?:ok(?:ay)?[,.!]?\s+)?(?:{YES_WORDS}|let'?s (?:do|implement|go)|implement (?:it|this|that|"
                    rf"the plan)|go for it|do (?:it|this|that))\b", re.IGNORECASE)
_PROPOSAL_RE = re.compile(r"^#+\s*.*\b(?:plan|implementation|changes?|steps?|what needs to change|proposal|approach)\b",
                          re.IGNORECASE | re.MULTILINE)
_STEM = 5
# The words of any change to code: a step of only these names nothing a later edit could be told by
_GENERIC = frozenset(word[:_STEM] for word in (
    "function functions variable variables names name comments comment imports import types type code callers calls "
    "usages references declarations package packages constants fields methods files file docs tests logic existing "
    "related accordingly needed necessary").split())
_VERBS = frozenset(verb[:_STEM] for verb in _STEP_VERBS)
_CAMEL_RE = re.compile(r"[A-Z][a-z0-9]+")  # the words of a class's name
_WHERE_RE = re.compile(r"\([^)]*\)")  # "(lines 63-74)": where, not what
# "Run storybook build for the ui package to catch story breakage": what for, not what
_PURPOSE_RE = re.compile(r"\s+(?:to|so that|in order to)\s+(?:make sure|ensure|check|verify|catch|confirm|avoid|"
                         r"see|prevent|guard)\b.*$", re.IGNORECASE | re.DOTALL)
_REMOVAL_RE = re.compile(r"^(?:\*\*)?(?:remove|delete|drop)\b", re.IGNORECASE)
# "Let me implement the changes:", "I'll make these changes:", "Here's my plan:" before a numbered list
# or a heading "## Plan" over it
_ANNOUNCED_RE = re.compile(r"^(?:.*\b(?:let me|i'll|i will|i'm going to|here's (?:the|my) plan|(?:the |my )?plan)\b"
                           r"[^\n]*:(?:\*\*)?|#{1,6}\s*(?:\w+\s+){0,2}plan\s*$|(?:\*\*)?plan(?:\*\*)?\s*$)"
                           r"\s*\n(?=\s*1[.)] )",
                           re.IGNORECASE | re.MULTILINE)  # "**Plan:**" too, and Codex's "Plan" line alone
_GO_WORDS = 12  # of a prompt that only says go ahead
_SHORT_PROMPT = 6  # words of a prompt that finishes the plan's work ("commit this", "push it")
_MOST = 0.6  # of a step's words a later edit or command shares, for a step that names no code


def plan_file(path: object) -> bool:
    """A plan written before the work (`plans/telemetry.md`, `~/.claude/plans/...`): no change to the code."""
    return isinstance(path, str) and ("/plans/" in path or path.rsplit("/", 1)[-1].lower().startswith("plan"))


def last_plan(session: Session) -> tuple[str, int]:
    """The last plan the session carried out, and the index of its event: approved in plan mode, given as
    "Implement the following plan", written to a plan file outside plan mode, proposed under a heading of changes
    and then approved by a short prompt ("Let's implement this"), or, with none of these before, announced right
    before the agent's edits."""
    plan, after = "", 0
    events = session.events
    for index, event in enumerate(events):
        call = event.tool
        if event.kind == "user" and event.text.startswith(PLAN_PROMPT):
            plan, after = event.text, index
        elif call is not None and call.name == "ExitPlanMode" and not call.is_error:
            plan, after = str(call.input.get("plan", "")), index
        elif call is not None and call.name == "Write" and not call.is_error and plan_file(
                call.input.get("file_path")) and not any(
                e.tool is not None and e.tool.name == "ExitPlanMode" for e in events[index + 1:]):
            plan, after = str(call.input.get("content", "")), index
        elif event.kind == "user" and index and _GO_RE.match(event.text.strip()) and len(
                event.text.split()) <= _GO_WORDS:
            proposed = next((e for e in reversed(events[:index]) if e.kind == "assistant" and e.text), None)
            if proposed is not None and _PROPOSAL_RE.search(proposed.text) and len(steps_of(proposed.text)) >= 2:
                plan, after = proposed.text, index
        elif not plan and event.kind == "assistant" and _announced(event.text) and _edits_next(events, index):
            plan, after = event.text, index
    return plan, after


def _announced(text: str) -> bool:
    """A numbered list of at least two changes the agent says it will make ("Let me implement the changes:")."""
    # the pattern's `^.*` tries every line: most messages hold no first item to look for it before
    lead = _ANNOUNCED_RE.search(text) if "1. " in text or "1) " in text else None
    return lead is not None and len(steps_of(text[lead.end():])) >= 2


def _edits_next(events: list[Event], index: int) -> bool:
    """Whether the agent's next step after event `index`, before the user speaks, is an edit."""
    for event in events[index + 1:]:
        if event.kind == "user":
            return False
        if event.tool is not None and event.tool.name in WRITE_TOOLS:
            return True
    return False


def steps_of(plan: str) -> list[tuple[str, str]]:
    """(step, its body) of each step of a plan: its numbered headings and the headings under a section of changes
    ("## Plan" / "### Change in `root.go`"), outside an aside (context, verification); and, in a section no such
    heading leads, the items beginning with a verb ("1. Add ...", "- Remove unused variables ...")."""
    found: list[list[str]] = []
    # (level, aside, of changes, a step) of the headings above the line; the plan's title is none of them
    sections: list[tuple[int, bool, bool, bool]] = []
    stepped, fenced, titled = False, False, False  # stepped: under a heading that is a step, its items its body
    for line in plan.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
        heading = None if fenced else _HEADING_RE.match(stripped)
        if heading is not None and not titled:
            titled = True
            continue
        if heading is not None:
            level, title = len(heading.group(1)), heading.group(2).strip()
            while sections and sections[-1][0] >= level:
                sections.pop()
            if sections and sections[-1][3]:  # a heading inside a step is its body
                found[-1][1] += "\n" + line
                continue
            aside = any(s[1] for s in sections) or bool(_ASIDE_HEADING_RE.search(title[:40]))
            numbered = _NUMBERED_HEADING_RE.match(title)
            changes = numbered is None and bool(_CHANGES_HEADING_RE.search(title)) and "`" not in title
            stepped = not aside and (numbered is not None or (
                not changes and bool(sections) and sections[-1][2]))
            found.append([(numbered.group(1) if numbered else title) if stepped else "", ""])
            sections.append((level, aside, changes, stepped))
            continue
        item = None if fenced or stepped or line[:1].isspace() else _ITEM_RE.match(stripped)
        if item is not None and not any(s[1] for s in sections) and _STEP_VERB_RE.match(item.group(1)):
            found.append([item.group(1), ""])
        elif found:
            found[-1][1] += "\n" + line
    return [(step.strip(), body) for step, body in found if step.strip()]


def _evidence(events: list[Event]) -> tuple[str, str, list[str], list[str]]:
    """(what the edits and commands after the plan wrote and ran, what the agent said after it, the files edited,
    the commands run). An edit's input is kept cut (core/sources/common.py): the agent's report names what the cut
    hides."""
    texts, said, files, ran = [], [], [], []
    for event in events:
        if event.kind == "assistant":
            said.append(event.text)
        call = event.tool
        if call is None or call.is_error or call.rejected:
            continue
        if call.name in WRITE_TOOLS:
            path = str(call.input.get("file_path") or call.input.get("notebook_path") or "")
            files.append(path)
            texts += [path, *(str(call.input.get(key, "")) for key in ("old_string", "new_string", "content",
                                                                         "edits", "patch"))]
        elif call.name == "Bash":
            command = str(call.input.get("command", ""))
            ran.append(command)
            texts.append(command)
            files += commands.files_changed(command)
    return "\n".join(texts), "\n".join(said), files, ran


def _names(text: str) -> set[str]:
    """The code names and files a step names: its code spans' names, its file names, the names in its code
    (`removeShellCompletion`, `backup_suffix`)."""
    spans = _CODE_RE.findall(text)
    # a command is found whole (`mise run test:ci`), a name by itself (`checkpoint.Type()`: `checkpoint.Type`)
    names = {span.strip() for span in spans if " " in span.strip()} | {
        name for span in spans if " " not in span.strip() for name in _NAME_RE.findall(span) if len(name) >= 3}
    code = "\n".join(_FENCED_RE.findall(text))
    return names | set(_FILE_RE.findall(text)) | set(_BARE_NAME_RE.findall(code))


def _done(step: str, body: str, written: str, spoken: str, files: list[str], ran: list[str],
          ticked: list[str]) -> bool:
    """Whether an edit, command, the agent's report (`spoken`) or a completed todo after the plan stands behind a
    step. A step that names files is done when each was edited or the report names it (a command that only read
    it is no step taken), not by a name another step shares ("Add `nickname` to `openapi/profile.yaml`")."""
    bases = {path.rsplit("/", 1)[-1] for path in files}
    said = f"{written}\n{spoken}"
    words = _stems(_PURPOSE_RE.sub("", _WHERE_RE.sub("", step))) - _VERBS - _GENERIC
    named = [name.rsplit("/", 1)[-1] for name in _FILE_RE.findall(step)]  # the files by their names
    if named:
        return all(base in bases or _said(base, spoken) for base in named) or _ticked(words, ticked)
    if _RUN_RE.match(step) and (run := _COMMAND_SPAN_RE.search(step)):  # "Run `cargo bench --bench ring`": it ran
        return any(run.group(1) in command for command in ran) or _said(run.group(1), spoken)
    stems = {base.rsplit(".", 1)[0].replace("-", "_").lower() for base in bases}
    if any(name.rsplit("/", 1)[-1] in bases or _said(name, said) or _snake(name) in stems
           for name in _names(f"{step}\n{body}")):
        return True
    if _TESTS_RE.search(step) and (any(TEST_FILE_RE.search(path) for path in files) or (
            _RUN_RE.match(step) and any(c.kind == "tests" for command in ran for c in commands.checks(command)))):
        return True
    if _DOCS_RE.search(step) and any(DOC_FILE_RE.search(path) or _DOCS_FOLDER_RE.search(path) for path in files):
        return True
    if not words:  # "Update function/variable names and comments": what it names is anywhere, no edit tells
        return True
    # what a removal took out is in no later text but the report of it
    found = _stems(said if _REMOVAL_RE.match(step) else written)
    if len(words & found) >= _MOST * len(words):
        return True
    return _ticked(words, ticked)


def _snake(name: str) -> str:
    """A class's name as its file is named (`OrdersCsvExporter`: `orders_csv_exporter`), "" for a name of one word."""
    words = _CAMEL_RE.findall(name)
    return "_".join(words).lower() if len(words) > 1 and "".join(words) == name else ""


def _ticked(words: set[str], ticked: list[str]) -> bool:
    """A completed todo item shares most of a step's `words`."""
    return bool(words) and any(len(words & _stems(item)) >= _MOST * len(words) for item in ticked)


def _said(name: str, text: str) -> bool:
    return bool(re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text))


def _stems(text: str) -> set[str]:
    """The content words of four letters or more, each by its first five ("migration", "migrate": "migra")."""
    return {word[:_STEM] for word in content_words(text, 4)}


def ended_on(session: Session, after: int) -> bool:
    """Whether the plan at event `after` is the work the session ended on: no prompt after it but a short one
    ("commit this"); a new request is new work."""
    return not any(e.kind == "user" and len(e.text.split()) > _SHORT_PROMPT for e in session.events[after + 1:])


def steps_left(session: Session, plan: str, after: int) -> list[str]:
    """The steps of the session's last plan (`last_plan`) with no edit, command or completed todo behind them, when
    the session ended on it, some of it was carried out (an edit after it) and most of it was: a plan dropped whole
    is no step left."""
    steps = steps_of(plan) if plan else []
    if len(steps) < 2 or not ended_on(session, after):
        return []
    written, spoken, files, ran = _evidence(session.events[after + 1:])
    if not files:
        return []
    ticked = [str(t.get("content", "")) for t in session.todos if t.get("status") == "completed"]
    left = [step for step, body in steps if not _SKIPPED_RE.search(step) and not _done(
        step, body, written, spoken, files, ran, ticked)]
    return left if len(left) * 2 <= len(steps) else []


# "add test that checks ...", "there should also be tests for Gemini CLI", "we need to add unit test to check ...";
# not a PR's "test plan" nor a "test run", nor a check to make ("we need to test this manually")
_TESTS_ASKED_RE = re.compile(r"\b(?:add|write|adding|writing|create|should (?:also )?(?:be|have)|need|needs|include)\b"
                             r"[^.?\n]{0,50}(?<!\bto )\btests?\b"
                             # (not "test it against the local docker db": a check asked for, no tests)
                             r"(?!\s+(?:plan|steps?|instructions|checklist|runs?|suite|results?|it|them)\b)",
                             re.IGNORECASE)
_SENTENCE_RE = re.compile(r"(?<=[.?!])\s+|\n+")
_SHORT_ASK = 12  # words of an ask its next sentence completes
_RELATIVE_RE = re.compile(r"^(?:which|that|where|who|whose|when)\b", re.IGNORECASE)  # a clause written as a sentence
_ASKING_RE = re.compile(r"^(?:can|could|would|will) you\b|^please\b", re.IGNORECASE)  # a request put as a question


def tests_asked_left(session: Session) -> str:
    """The sentence of the last prompt (not a plan to carry out) that asks for tests ("add test that checks this new
    way of handling session conflicts"), when the session ended on it (`ended_on`) and no edit after it, of the agent
    or its subagents, wrote a test file; "" when none."""
    for index in range(len(session.events) - 1, -1, -1):
        event = session.events[index]
        if event.kind != "user" or event.text.startswith(PLAN_PROMPT):
            continue
        said = [s.strip() for s in _SENTENCE_RE.split(event.text) if s.strip()]
        at = next((i for i, s in enumerate(said) if _TESTS_ASKED_RE.search(s) and (
            not s.endswith("?") or _ASKING_RE.match(s))), None)
        if at is None:
            continue
        if not ended_on(session, index):  # the session went on to other work after it: a request set aside
            return ""
        if any(_TESTS_RE.search(str(t.get("content", ""))) for t in session.todos if t.get("status") != "completed") \
                or any(_TESTS_RE.search(step) for step in session.todos_dropped):
            return ""  # its todo list's test step left says it
        asked = said[at]
        if len(asked.split()) < _SHORT_ASK and at + 1 < len(said) and not said[at + 1].endswith("?"):
            # "add test that checks ... conflicts. Which only happens at session start hook": a clause of the ask
            more = said[at + 1]
            asked = (f"{asked.rstrip('.')}, {more[:1].lower()}{more[1:]}" if _RELATIVE_RE.match(more)
                     else f"{asked} {more}")
        # a request pasted again after the work ("Those tests were already added"): from its first time
        since = next(i for i, e in enumerate(session.events) if e.kind == "user" and e.text == event.text)
        later = [e.tool for e in session.events[since + 1:] if e.tool is not None and not e.tool.is_error]
        start = session.events[since].timestamp
        written = [str(call.input.get("file_path") or "") for call in later if call.name in WRITE_TOOLS] + [
            path for call in later if call.name == "Bash"
            for path in commands.files_changed(str(call.input.get("command", "")))] + [
            path for run in session.subagents if start is None or run.started is None or run.started >= start
            for path in run.files_written]
        return "" if any(TEST_FILE_RE.search(path) for path in written) else clause(marks.typed(asked), 20)
    return ""


def about_tests(text: str) -> bool:
    """Whether a step or a plan's title is about tests ("Add Unit Tests for CLIVersion in Metadata")."""
    return bool(_TESTS_RE.search(text))


def step_threads(left: list[str]) -> list[str]:
    """"Plan step not done: Use absolute path for filter command", the first steps left, one clause each."""
    return [f"{STEP_LEFT} {clause(step.replace('**', ''), 14)}" for step in left[:MAX_STEPS]]
