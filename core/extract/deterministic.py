"""The deterministic handoff extractor: no network, same session and statistics give the same handoff."""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TypeVar
from zoneinfo import ZoneInfo

from eywa.core.extract.answers import answers
from eywa.core.extract.backed import Backing
from eywa.core.extract.claude_words import code_share, heading_name, headings, now_done, outcome, sentences
from eywa.core.extract.commands import failed_tests, pushed
from eywa.core.extract.facts import (
    COMMITTED,
    MAX_BULLETS,
    Facts,
    commit_line,
    merge_threads,
    scratch_repository,
    session_facts,
    with_checks,
)
from eywa.core.extract.gist import (
    LEADS_WEIGHED,
    REPORT_KIND_RE,
    asked,
    commit_mood,
    gist,
    lead_in,
    report_leads,
    resolution,
    states,
    turned_down,
)
from eywa.core.extract.insights import insights, written_text
from eywa.core.extract.key_files import changed_files, files_committed, files_read, key_files
from eywa.core.extract.marks import DANGLING, balanced, clause_end, first_line, stub_dropped, typed, words_cut
from eywa.core.extract.open_threads import open_threads, status_of
from eywa.core.extract.report_changes import report_changes
from eywa.core.extract.terms import (
    GENERIC,
    MAX_SESSION_TERMS,
    commit_subjects,
    commits_in,
    pr_titles,
    pr_titles_in,
    pr_worked_on,
    top_terms,
    weighted_terms,
    without_links,
)
from eywa.core.extract.tests_added import tests_line
from eywa.core.extract.undone import Undone
from eywa.core.handoffs.fixed_words import ANSWER, ASKED, ASKED_TO_FIX, OPENED_PR, RAN
from eywa.core.handoffs.model import Handoff, format_duration
from eywa.core.retrieval.query_tokens import content_words
from eywa.core.session import WRITE_TOOLS, Event, Session
from eywa.core.sources import agent
from eywa.core.sources.projects import ProjectNames

EXTRACTOR_NAME = "deterministic"
# The rules of `substance_of`: an index judged by others judges its sessions of no substance again (CHANGELOG.md)
SUBSTANCE_RULES = "3"
# The rules of the deterministic handoff: an index drafted by others is drafted again at the next ingest (CHANGELOG.md)
HANDOFF_RULES = "105"
# The keyword choice of `keywords_of`: how much less a word is worth in each further keyword that holds
# it, and the share of the session's best word each word of a run must reach.
KEYWORD_REPEAT_DECAY = 2.0
MIN_WORD_SHARE = 0.1
_TRIVIAL_PROMPT_RE = re.compile(
    r"^(y|yes|no|ok|okay|sure|thanks|thank you|continue|go on|go ahead|proceed|do it|lgtm|great|nice|"
    r"perfect|cool|done|retry|try again|hi|hello|(?:please )?(?:take|have) a look)[.!]*$", re.IGNORECASE)
FRAGMENT_WORDS = 2  # of a prompt interrupted before any reply: a stray word ("exot"), not a request cut short
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*@])")  # "@path": a file the prompt attaches

DocumentFrequency = Callable[[list[str]], dict[str, int]]


_CODE_BLOCK_RE = re.compile(r"```.*?```", re.DOTALL)


def _clean(text: str) -> str:
    text = _CODE_BLOCK_RE.sub(" ", text) if "```" in text else text
    return " ".join(text.split())  # what `\s+` to one space and a strip give, without the regex


def _sentence(text: str, limit: int = 160) -> str:
    text = _clean(text)
    first = _SENTENCE_RE.split(text, maxsplit=1)[0] if text else ""
    return words_cut(first, limit)


def meaningful_prompts(session: Session) -> list[str]:
    return [t for t in session.user_texts if len(t.strip()) >= 3 and not _TRIVIAL_PROMPT_RE.match(t.strip())]


def requests_of(session: Session) -> list[tuple[str, str]]:
    """What the user asked, in order: ("prompt", text) of each non-trivial prompt, and ("command", "/name
    args") of each slash command Claude answered or worked on before the next prompt ("/workflows:review
    <url>", "/init"): a custom command is a request, and a session may hold no other. Commands only the
    CLI handles ("/model", "/clear") get no reply and are left out."""
    return _requests(_requests_at(session))


def _requests(requests_at: list[tuple[int, str, str]]) -> list[tuple[str, str]]:
    """`requests_of` of the session's `_requests_at`: without where each starts."""
    return [(kind, text) for _, kind, text in requests_at]


def _requests_at(session: Session) -> list[tuple[int, str, str]]:
    """`requests_of`'s requests, each with the index of the event it starts at (its turn's first)."""
    found: list[tuple[int, str, str]] = []
    pending: tuple[int, str] | None = None
    fragment = False  # the last prompt is a word or two no reply has followed yet
    for index, event in enumerate(session.events):
        if event.kind == "command" and event.text.startswith("/"):
            pending = index, " ".join(part for part in (event.text, str(event.meta.get("args", ""))) if part)
        elif event.kind == "user":
            pending = None
            if event.text.strip() and not _TRIVIAL_PROMPT_RE.match(event.text.strip()):
                found.append((index, "prompt", event.text))
                fragment = len(event.text.split()) <= FRAGMENT_WORDS
        elif event.kind == "interrupt" and fragment:
            found.pop()  # "exot", "ok, lets", then Esc before any reply: a stray word taken back, no request
            fragment = False
        elif event.kind in ("assistant", "tool"):
            fragment = False
            if pending is not None:
                found.append((pending[0], "command", pending[1]))
                pending = None
    return found


def _commands(requests: list[tuple[str, str]]) -> list[str]:
    return [text for kind, text in requests if kind == "command"]


def substance_of(session: Session, requests: list[tuple[str, str]], changes: list[tuple[str, bool]]) -> int:
    """`requests` are the session's `requests_of`, `changes` its `changed_files`."""
    asked = len(meaningful_prompts(session)) + len(_commands(requests))
    calls = session.tool_calls
    replies = sum(1 for e in session.events if e.kind == "assistant")
    if not asked and not session.subagents:
        return 0
    if not replies and not calls and not session.subagents:
        return 0
    if len(calls) >= 10 or asked >= 3 or changes:  # by any tool, a subagent, the shell
        return 2
    return 1


_HEADING_RE = re.compile(r"^#{1,3}\s+(?:Plan:\s*)?(.{8,120})$", re.MULTILINE)
_FILLER_RE = re.compile(
    r"^(?:(?:ok(?:ay)?|so|hey|hi|please|now|alright|cool)[,.!]?\s+)*(?:(?:can|could|would) you(?: please)?|"
    r"please|i want you to|i'd like you to|i need you to|let's|lets|we need to|we should)\s+", re.IGNORECASE)
# The words that turn a prompt from context into a request, wherever they stand in a sentence.
_REQUEST_RE = re.compile(
    r"\b(?:(?:can|could|would) (?:you|we)(?: please)?|please|let's|i(?:'d| would) like (?:you|us) to|"
    r"i (?:want|need) (?:you|us) to|i(?:'d| would) like to|we need to|we should)\s+(?=[a-z])",
    re.IGNORECASE)
REQUEST_SENTENCES = 3
MIN_REQUEST_WORDS = 3
_TRAILING_PLEASE_RE = re.compile(r"[,\s]*(?:please)?[?.!]*$", re.IGNORECASE)


def _prompt_headline(prompt: str) -> str:
    """A plan's own title when the prompt carries one, else its request: the first of its first
    sentences that asks for something ("This is a fairly subtle function now. Let's add a few table
    tests." -> "Add a few table tests"), from the words that ask, when they say what; else its first
    sentence without the filler."""
    return _request_headline(_plain_prompt(prompt))


def _plain_prompt(prompt: str) -> str:
    return without_links(typed(prompt))  # a URL or UUID names nothing a headline says


def _request_headline(prompt: str) -> str:
    """`_prompt_headline` of a prompt already `_plain_prompt`."""
    heading = _HEADING_RE.search(prompt[:3000])
    if heading:
        return heading.group(1)
    text = _clean(prompt[:3000])
    first = _SENTENCE_RE.split(text, maxsplit=REQUEST_SENTENCES)[:REQUEST_SENTENCES]
    asks = ((_TRAILING_PLEASE_RE.sub("", _sentence(part[m.end():], 200)), part[:m.start()]) for part in first
            if (m := _REQUEST_RE.search(part)) and not _negated(part[:m.start()]))
    asked, before = next(((ask, before) for ask, before in asks if len(ask.split()) >= MIN_REQUEST_WORDS), ("", ""))
    if not asked or _FILLER_RE.match(first[0]):  # "can you check?": no what
        asked, before = _LAST_PLEASE_RE.sub("", _FILLER_RE.sub("", _sentence(prompt, 200))), ""
    asked = _named_before(asked, before)
    # "look at the last commit, can we add a test for it": the ask, with what the pointing clause points at for "it"
    pointer = _POINTER_ASK_RE.match(asked)
    if pointer and len(pointer.group("ask").split()) >= MIN_REQUEST_WORDS:
        asked = _IT_RE.sub(pointer.group("what"), pointer.group("ask"), count=1)
    return asked[:1].upper() + asked[1:]


# "I don't think we need to ...", "I'm not sure we should ...": the words that ask, turned around by their clause
_NEGATION_RE = re.compile(r"\b(?:not|never|no|dont|cant|wont)\b|n['’]t\b", re.IGNORECASE)
_CLAUSE_MARK_RE = re.compile(r"[,;:.!?]")


def _negated(before: str) -> bool:
    """Whether the clause leading into a request's words turns it around ("I don't think we need to loop ...":
    the request is not to loop); a clause before it ("no don't set it, let's see ...") does not."""
    return bool(_NEGATION_RE.search(_CLAUSE_MARK_RE.split(before)[-1]))


_LAST_PLEASE_RE = re.compile(r"[,\s]+please[.!]*$", re.IGNORECASE)  # "Fix merge conflicts from parent please"
_POINTER_ASK_RE = re.compile(r"^(?:take a look at|have a look at|look at|check(?: again)?|see|read)\s+"
                             r"(?P<what>[^,]{3,60}),\s+" + _REQUEST_RE.pattern + r"(?P<ask>.+)$", re.IGNORECASE)
_IT_RE = re.compile(r"\b(?:it|this|that)\b(?=[\s.?!]*$)")  # "a test for it": what the request ends pointing at
NEAR_WORDS = 6  # between the code the words before a request name and the request: "`.entire/logs` we should"


def _named_before(ask: str, before: str) -> str:
    """The ask with its pointing object said ("writes to `.entire/logs` we should include that in the .gitignore" ->
    "include `.entire/logs` in the .gitignore"): the code its sentence names just before the words that ask; else
    the ask as it is."""
    spans = list(_CODE_SPAN_RE.finditer(before)) if _POINTING_OUTCOME_RE.match(ask) else []
    if not spans or len(before[spans[-1].end():].split()) > NEAR_WORDS:
        return ask
    verb, _, pointed = ask.partition(" ")
    return " ".join((verb, spans[-1].group(0), *pointed.split(" ", 1)[1:]))


HEADLINE_WORDS = 13
HEADLINE_CHARS = 100
UNTITLED = "Untitled session"
NO_WORK = "No meaningful work"
# Shares of an outcome's characters inside backticks: mostly code, and nearly all code.
MOSTLY_CODE = 0.4
ALL_CODE = 0.8


def closing_outcome(session: Session, declined: set[int], listed: bool = True, backing: Backing | None = None) -> str:
    """What Claude's last report says was done: of the last assistant message that says anything done,
    its first outcome sentence of prose, else a heading naming the work ("AudioWorklet Migration
    Complete"), else its first outcome in a list; outcomes that are mostly code come last. A report
    whose outcome is nearly all code ("Changed `f(x)` to `f(y, z)`") names no work: an earlier
    report's is the headline, that one only without. Without `listed` (a session that changed no file), an item of
    a list is no outcome: the answer's list ("Reduced context pollution — ...", one of five strengths asked for).
    `declined`: the reports the person turned down (`turned_down`), none of them an outcome; nor one the session's
    actions do not back (`Backing.unbacked_claim`: a rebased branch's change, a fix only proposed); `backing`: the
    session's, when the caller has it."""
    fallback = ""
    backing = backing or Backing(session, _request_turns(session))
    for at in reversed(range(len(session.events))):
        event = session.events[at]
        if event.kind != "assistant" or not event.text.strip() or at in declined:
            continue
        found = sentences(event.text)
        done = sorted((s.listed, code_share(o) > MOSTLY_CODE, i, o) for i, s in enumerate(found)
                      if (o := lead_in(s.text)) and not backing.unbacked_claim(at, o))
        names = [name for h in headings(event.text) if (name := heading_name(h))]
        heading = _report_target(event.text, names[0] if names else None) or next(
            (name for name in names if not REPORT_KIND_RE.match(name)), None)
        pick = done[0][3] if done and not done[0][0] else heading or (done[0][3] if done and listed else "")
        if pick and code_share(_cut_headline(pick)) <= ALL_CODE and not _MINOR_OUTCOME_RE.match(pick) \
                and not _POINTING_OUTCOME_RE.match(pick):
            return pick
        fallback = fallback or pick
    return fallback


# "**Review Target:** PR #6 - Improved entire enable messaging": what a review's report was about (no `\W*\s+`: it
# splits a long run of spaces every way)
_TARGET_RE = re.compile(r"^[^\w\n]*(?:review |audit )?target:?\W*(?<=\s)(?P<target>\S.{3,})$",
                        re.IGNORECASE | re.MULTILINE)
_TARGET_NAME_END_RE = re.compile(r"(?<!\s)\s+[-—–]\s+|:\s")  # "PR #6 - Improved": tried once a run of spaces
_KIND_WORD_RE = re.compile(r"\b(review|audit|analysis|investigation)\b", re.IGNORECASE)


def _report_target(text: str, first: str | None) -> str | None:
    """"Review of PR #6 - Improved entire enable messaging": a report headed (`first`: its first heading's name) by the
    kind of report it is ("Code Review Complete") names what it was about on its target line; None for any other."""
    kind = _KIND_WORD_RE.search(first) if first and REPORT_KIND_RE.match(first) else None
    found = _TARGET_RE.search(text) if kind else None
    if kind is None or found is None:
        return None
    target = _TARGET_NAME_END_RE.split(found.group("target").strip(" *"), maxsplit=1)[0]  # by its name: "PR #6"
    if target.split(" ", 1)[0][1:].islower():  # "Branch `x`", not "PR #6" nor "`Foo`"
        target = target[0].lower() + target[1:]
    return f"{kind.group(1).capitalize()} of {target}"


# "Both files have been updated successfully", "The test has been added and passes": a last step that names only
# what kind of thing it touched; an earlier report says what the session was for.
_MINOR_OUTCOME_RE = re.compile(
    r"^(?:both|all|the|these|those|everything)(?: (?:of )?the)?(?: [\w-]+){0,2}? (?:files?|changes?|code|tests?|"
    r"implementation|issues?|errors?|(?:error )?messages?|functions?|places?|fix(?:es)?|updates?|edits?) "
    r"(?:have|has|is|are|was|were|now)\b", re.IGNORECASE)


# "Updated it to check for `entire-wrapper.sh` instead": what "it" is, only the message before said
_POINTING_OUTCOME_RE = re.compile(r"^[A-Za-z]+ (?:it|them|this|that|these|those)"
                                  r"(?=\s+(?:to|by|with|so|for|in|on|from|into|instead|and|as)\b|[.,;:!]?$)",
                                  re.IGNORECASE)


# Commit subjects that name no work: one word ("init", "wip"), a first commit, a merge.
_NAMELESS_SUBJECT_RE = re.compile(
    r"^(?:\S+|(?:initial|first) commit|wip\b.*|merge (?:branch|remote-tracking branch|pull request|origin/)\S*\b.*)$",
    re.IGNORECASE)


# 'Revert "Add retry"', "Remove dynamic base tag - use simple relative paths": a commit taking out what it names
# (its tail tried once a run of spaces, not at each: quadratic on a long run)
_UNDO_RE = re.compile(r'^(?:revert\s+"(?P<quoted>.+)"|(?:revert|remove|undo|drop|back out|roll back)\s+'
                      r'(?P<named>.+?))(?:(?<!\s)\s+[-—–:(;]\s.*|,.*)?$', re.IGNORECASE)
MIN_UNDONE_WORDS = 2  # of what a removal names: "Remove logging" may take out only some of it


def _undone(subject: str, later: list[str]) -> bool:
    """Whether a later commit reverts this one or removes what it names (all of two words or more of it): work
    undone is not the session's ("Add dynamic base tag ..." then "Remove dynamic base tag - use relative paths")."""
    words, removal = content_words(subject, 2), _UNDO_RE.match(subject.strip()) is not None
    for other in later:
        undo = _UNDO_RE.match(other.strip())
        if undo is None:
            continue
        if undo.group("quoted") is not None:
            if undo.group("quoted").strip() == subject.strip():
                return True
            continue
        named = content_words(undo.group("named"), 2)
        if len(named) >= MIN_UNDONE_WORDS and named <= words and not removal:
            return True
    return False


# An outcome that names nothing but the code it touched: a verb, code spans, a word between at most.
_BARE_OUTCOME_RE = re.compile(r"^[A-Z][a-z]+(?:\s+(?:`[^`]+`|\w+))?\s+`[^`]+`[.!]?$")


def headline_of(session: Session, prs: list[str], commits: list[str], requests: list[tuple[str, str]],
                changes: Collection[tuple[str, bool]] = (), backing: Backing | None = None) -> str:
    """What the session achieved: a PR title, else the commit subject that names its main work, the
    session's own title or summary, Claude's closing report; the user's request only when there is none
    of these. A question is no headline: its words stand as a statement ("Main branch tests failing - why?" ->
    "Main branch tests failing"); a report's past tense reads as a commit subject ("Removed" -> "Remove"); a pull
    request the session worked on and did not open is named ("PR 191: ..."); a short one that names no code names the
    file the session changed most ("Fix tests in `reset_test.go`"). `changes`: the session's `changed_files`;
    `backing`: its `Backing`, when the caller has it."""
    resolved = resolution(session, [path for path, _ in changes])
    headline = _STATUS_WORD_RE.sub(r"\1", _headline_of(session, prs, commits, requests, bool(changes), resolved,
                                                        backing))
    headline = commit_mood(headline_words(_QUESTION_TAIL_RE.sub("", headline)) if headline.endswith("?") else headline)
    main = _main_file(changes)
    short = len(content_words(headline)) <= SHORT_HEADLINE_WORDS
    if main and short and headline not in (UNTITLED, NO_WORK) and not _NAMES_CODE_RE.search(headline):
        headline = f"{headline} in `{main}`"
    # "Update it to check for `entire-wrapper.sh` instead": which pull request's review it answered, the reader needs
    number = "" if prs else pr_worked_on(session)
    if not number or re.search(rf"#{number}\b|\bPR\W*{number}\b", headline, re.IGNORECASE):
        return headline
    named, said = _PR_WORD_RE.subn(f"PR {number}", headline, count=1)  # "Address the PR comment": which PR
    return named if said else f"PR {number}: {headline}"


SHORT_HEADLINE_WORDS = 3  # "Fix tests", "Git Hook Chaining": says what was done, not where
MAIN_FILE_LEAD = 2  # the main file: changed at least twice as often as any other
# "`setup.go`", "help.go", "TokenUsage", "output_filter": a headline that names code already
_NAMES_CODE_RE = re.compile(r"`|\w\.\w{1,4}\b|[a-z][A-Z]|_\w")


def _main_file(changes: Collection[tuple[str, bool]]) -> str:
    """The name of the file the session changed most and still has, when no other comes near it; else ""."""
    gone = dict(changes)
    counts = Counter(path for path, _ in changes if not gone[path]).most_common(2)
    if not counts or (len(counts) > 1 and counts[0][1] < MAIN_FILE_LEAD * counts[1][1]):
        return ""
    return counts[0][0].rstrip("/").rsplit("/", 1)[-1]


# "Code Review Complete", "Git Hook Chaining Implementation": a heading's last word says only that it is done
_STATUS_WORD_RE = re.compile(r"^(\S+\s+(?:\S+\s+)*?[A-Z`]\S*)\s+"
                             r"(?:Complete|Completed|Done|Implementation|Summary)[.!]?$")
_PR_WORD_RE = re.compile(r"\bPR\b(?!\W*#?\d)")


# "Review: TokenUsage ...", "OpenClaw Integration Plan": the words naming the pasted document (its "Plan:" prefix
# `_HEADING_RE` leaves out), not the work it asks for
_PLAN_WORDS_RE = re.compile(r"^review\s*:\s*|\s+plan$", re.IGNORECASE)


def _plan_title(title: str, changed: bool) -> str:
    """A pasted plan's title as a headline: once the session's edits carried the plan out, without the words that
    name the document ("Review: X" -> "X"), which say the session only reviewed or planned."""
    return _PLAN_WORDS_RE.sub("", title.strip()) if changed else title


# "... - why?", ", right?", "?": what makes a headline a question
_QUESTION_TAIL_RE = re.compile(r"(?:\s*[-—–,:]\s*(?:why|how|right|any ideas?|thoughts))?\s*\?+$", re.IGNORECASE)


def _headline_of(session: Session, prs: list[str], commits: list[str], requests: list[tuple[str, str]],
                 changed: bool, resolved: str | None, backing: Backing | None) -> str:
    prompts = meaningful_prompts(session)
    plain = [_plain_prompt(prompt) for prompt in prompts]  # once: the plan's title and each request's headline
    plan = _HEADING_RE.search(plain[0][:3000]) if plain else None
    asks = [_request_headline(prompt) for prompt in plain]
    named = [subject for subject in (*prs, *commits) if not _NAMELESS_SUBJECT_RE.match(subject.strip())]
    if len(named) > 1 and not prs:  # of several commits, the main work's ("feat: ..." after "docs: reorganize ...")
        kept = [subject for at, subject in enumerate(named) if not _undone(subject, named[at + 1:])] or named
        named.insert(0, gist(kept[0], kept[1:], session))
    declined = turned_down(session)  # read once for the closing outcome and the report leads
    closing = closing_outcome(session, declined, listed=changed, backing=backing)
    if prompts and _BARE_OUTCOME_RE.match(closing):  # "Created `CHANGELOG.md`": what for, the request says
        closing = ""
    if closing:  # the last report may name only its last step: the gist of the reports and the first request
        leads = [*(lead for lead in report_leads(session, declined)[-LEADS_WEIGHED:]
                   if not _POINTING_OUTCOME_RE.match(lead)),
                 *(request for request in asks[:1] if asked(request) and not states(request))]
        words = headline_words(closing)
        first = "" if _MINOR_OUTCOME_RE.match(words) or _POINTING_OUTCOME_RE.match(words) else words
        closing = gist(first, [words for lead in leads if (words := headline_words(lead)) != UNTITLED
                               and not _MINOR_OUTCOME_RE.match(words)], session) or closing
    runs = [run.description or _sentence(run.prompt) for run in session.subagents[:1]]
    # The first candidate with words in it: a prompt that is only a link or a pasted block says nothing.
    candidates = itertools.chain(
        (*named, *reversed(session.titles), *session.summaries, _plan_title(plan.group(1), changed) if plan else "",
         resolved or "", closing),
        # a prompt that only asks a question ("Do you have access to linear?") gives way to one asking for work
        sorted(asks, key=_asks_least),
        _commands(requests), runs)
    headline = next((words for text in candidates if (words := headline_words(text)) != UNTITLED), None)
    if headline is not None:
        return headline
    if prompts or requests or runs:
        return UNTITLED
    return NO_WORK


# "Ok, so ", "Hey, ": what a prompt opens with before it says anything
_INTERJECTION_RE = re.compile(r"^(?:(?:ok(?:ay)?|so|hey|hi|now|alright|cool)[,.!]?\s+)+", re.IGNORECASE)


def _asks_least(request: str) -> tuple[bool, bool]:
    """How a prompt's request ranks as a headline: a question last, a stated case ("Ok, so there's ...") before it."""
    return request.rstrip().endswith("?"), states(_INTERJECTION_RE.sub("", request))


def _words(text: str, limit: int, chars: int = HEADLINE_CHARS) -> str:
    """At most `limit` words, cut between words and never on a dangling `the` or `and`."""
    text = _clean(text).strip(" #*-:")
    parts = text.split()
    if len(parts) > limit or len(text) > chars:
        parts = parts[:limit]
        while len(parts) > 3 and len(" ".join(parts)) > chars:
            parts.pop()
    # A lead-in's last word before its list ("now uses `retry@v3` with:") dangles as a cut one does.
    while len(parts) > 3 and parts[-1].lower().strip(",;:") in DANGLING:
        parts.pop()
    out = " ".join(parts).rstrip(".,;:—-– ")
    return out or UNTITLED


MIN_CLAUSE_WORDS = 6


# "cmd/entire/cli/stringutil/", "/Work/x/y/PLAN.md": a path (not a URL, "//go:build" or a quoted import path), shortened
# from three parts; begun only where a word begins (not after the `-` of "my-org/x/y": linear on a run of `-`)
_PATH_RE = re.compile(r"(?<![\w/.:\"'@~-])/?(?:[\w.@~-]+/)+[\w.@-]*")
_LONG_PATH_PARTS = 3
# "`os.MkdirAll(filepath.Dir(rcFile), 0o755)`": a call's arguments in a headline's code span
_CALL_ARGS_RE = re.compile(r"\((?:[^()`]|\([^()`]*\))+\)")
_CODE_SPAN_RE = re.compile(r"`[^`]+`")


def _last_part(path: str) -> str:
    parts = [part for part in path.split("/") if part]
    return path if len(parts) < _LONG_PATH_PARTS else parts[-1] + "/" * path.endswith("/")


def _short_code(text: str) -> str:
    """A headline's code as a reader on a phone needs it: a long path by its last part ("`stringutil/`"), a call by
    its name ("`os.MkdirAll()`"); the words freed go to what was done."""
    if "/" in text:
        text = _PATH_RE.sub(lambda m: _last_part(m.group(0)), text)
    if "(" in text and "`" in text:
        short = {span: _CALL_ARGS_RE.sub("()", span) for span in _CODE_SPAN_RE.findall(text)}
        if len(set(short.values())) == len(short):  # "`send(a)` to `send(a, b)`" says the change in them
            text = _CODE_SPAN_RE.sub(lambda m: short[m.group(0)], text)
    if "`" in text:  # "`session not found: `": what followed the colon was an id, left out (`without_links`)
        text = _CODE_SPAN_RE.sub(lambda m: f"`{m.group(0)[1:-1].rstrip(' :;,') or m.group(0)[1:-1]}`", text)
    return text


def headline_words(text: str) -> str:
    """A headline of at most `HEADLINE_WORDS` words and `HEADLINE_CHARS` characters, its code made short
    (`_short_code`), cut as `_cut_headline` cuts."""
    return _cut_headline(_short_code(text))


def _cut_headline(text: str, limit: int = HEADLINE_WORDS, chars: int = HEADLINE_CHARS) -> str:
    """A longer text ends at the last clause end inside the cut, outside code and quotes, when that keeps
    `MIN_CLAUSE_WORDS` words ("Look at the changes in this branch, I got this feedback", not "..., let"), else between
    words, a clause the cut opens left out."""
    cut = _words(text, limit, chars)
    if cut == _words(text, len(text), len(text)):  # nothing cut: a mark the text itself never closes left out
        return _balanced_words(cut, limit, chars, False)
    end = clause_end(cut, MIN_CLAUSE_WORDS)
    if end >= 0:
        return _balanced_words(_words(cut[:end], limit, chars), limit, chars)
    # "... signature which added", "... calls with git": a clause the cut opened, dropped as a dangling word is
    if (stubless := stub_dropped(cut, MIN_CLAUSE_WORDS)) != cut:
        cut = _words(stubless, limit, chars)
    # 'from "A, B" → "A', "(rebase, cherry-pick": a mark the cut opens is left out with what leads into it; too
    # little before it: the mark closed ("... saying `session not found`")
    return _balanced_words(cut, limit, chars)


def _balanced_words(cut: str, limit: int, chars: int, was_cut: bool = True) -> str:
    """`cut` with no mark left open (`balanced`), cut again as `_words` cuts when one was left out."""
    kept = balanced(cut, MIN_CLAUSE_WORDS, was_cut)
    return kept if kept.startswith(cut) else _words(kept, limit, chars)


@dataclass(frozen=True, slots=True)
class KeywordCandidates:
    """What `keywords_of` reads of a session that the other sessions do not change: made where the session is
    read (an ingest worker), so that the process keeping the document frequencies only weighs them."""

    terms: list[str]  # the terms a keyword may be, in name order
    words: list[str]  # the words of those terms, in name order
    covers: dict[str, tuple[str, ...]]  # term -> the words of positive weight it contains


def keyword_candidates(weights: Counter[str], projects: tuple[str, ...]) -> KeywordCandidates:
    terms = list(weights) if len(weights) <= MAX_SESSION_TERMS else top_terms(weights)
    terms = sorted(term for term in terms if term not in GENERIC and term not in projects)
    words = sorted({part for term in terms for part in term.split("-")} - GENERIC)
    # A word's worth is its weight times an IDF that is never below 0.1: worth > 0 exactly when its weight is.
    return KeywordCandidates(terms, words, _covered_words(terms, {word for word in words if weights.get(word, 0) > 0}))


def keywords_of(weights: Counter[str], df: DocumentFrequency, total_docs: int, projects: tuple[str, ...],
                limit: int = 7, candidates: KeywordCandidates | None = None) -> list[str]:
    """5-7 keywords specific to this session against the corpus.

    The `keywords` scorer pays a query word once for every keyword that contains it, so the keywords are
    chosen greedily for the session's words they contain: each word worth its weight times its IDF, less
    each time a keyword already holds it (`KEYWORD_REPEAT_DECAY`), times the keyword's own IDF. A run of
    words is a candidate only when each of its words is worth a tenth of the session's best word.

    `df` and `total_docs` must already count this session (its terms recorded), so that re-extracting
    a session gives the same keywords as extracting it the first time. `candidates`: `keyword_candidates`
    of the same weights and projects, made ahead.
    """
    plan = candidates or keyword_candidates(weights, projects)
    terms, words = plan.terms, plan.words
    freq = df(sorted({*terms, *words}))
    n = max(total_docs, 1)
    idf = {count: math.log((n + 1) / (count + 1)) + 0.1 for count in {0, *freq.values()}}  # few counts
    worth = {word: value for word in words if (value := weights.get(word, 0) * idf[freq.get(word, 0)]) > 0}
    floor = MIN_WORD_SHARE * max(worth.values(), default=0.0)
    eligible = [term for term in terms
                   if "-" not in term or all(worth.get(part, 0.0) >= floor for part in term.split("-"))]
    if len(worth) == sum(weights.get(word, 0) > 0 for word in words):  # as `keyword_candidates` assumed
        covers = {term: plan.covers[term] for term in eligible}
    else:  # a count above the number of sessions (an IDF at or below 0): not from a consistent index
        covers = _covered_words(eligible, set(worth))
    held: dict[str, int] = {}

    def gain(term: str) -> float:  # rounded: sums in another order must not break ties
        return round(sum(worth[word] / (1 + held.get(word, 0)) ** KEYWORD_REPEAT_DECAY for word in covers[term])
                     * idf[freq.get(term, 0)], 9)

    # Before any choice no word is held: each word counts whole (x / 1.0 is x), the sum in the same order as `gain`'s.
    gains = {term: round(sum([worth[word] for word in found]) * idf[freq.get(term, 0)], 9)
             for term in eligible if (found := covers[term])}
    holding: dict[str, list[str]] = {}
    for term in eligible:
        for word in covers[term]:
            holding.setdefault(word, []).append(term)
    chosen: list[str] = []
    while len(chosen) < limit and gains:
        best = max(gains, key=gains.__getitem__)  # in name order: the first of equal gains wins
        if gains[best] <= 0:
            break
        chosen.append(best)
        taken = set(covers[best])
        for word in taken:
            held[word] = held.get(word, 0) + 1
        # A term whose words a chosen keyword already holds reads as a repeat (`rewind`, `digest-job` beside
        # `gemini-rewind`, `telegram-digest-job`); the others holding its words are worth less now.
        touched = {term for word in taken for term in holding[word] if term in gains}
        for term in touched:
            if taken.issuperset(covers[term]):
                del gains[term]
            else:
                gains[term] = gain(term)
    return chosen


def _covered_words(terms: list[str], valued: set[str]) -> dict[str, tuple[str, ...]]:
    """Term -> the valued words it contains as substrings, as the scorer matches a query word (each term's own:
    a word never spans two terms of the blob, as no word holds a newline)."""
    blob = "\n".join(terms)
    starts = list(itertools.accumulate((len(term) + 1 for term in terms[:-1]), initial=0))
    covers: dict[str, list[str]] = {term: [] for term in terms}
    for word in sorted(valued):
        at = blob.find(word)
        while at >= 0:
            term = terms[bisect.bisect_right(starts, at) - 1]
            if not covers[term] or covers[term][-1] != word:
                covers[term].append(word)
            at = blob.find(word, at + 1)
    return {term: tuple(found) for term, found in covers.items()}


BULLET_WORDS = 30
BULLET_CHARS = 200


# "Found several issues:", "Implemented the plan by making the following changes:", "Fixed in `a.go:18` - now",
# "Removed (not in the docs):": a lead-in that names what its list holds, not what was done
_VAGUE_LEAD_RE = re.compile(r"^(?:found\b|\S+ (?:in|at|on)\b|\S+ \(|.*\bfollowing\b)", re.IGNORECASE)


def _outcomes(session: Session, ends: Collection[int]) -> list[tuple[int, str]]:
    """(event index, bullet) of what was done, in order: the first outcome sentence of each assistant
    message (else its first lead-in to a list of them, or the fix it names), each commit and each pull request
    opened. The last message of a turn that edited (`ends`: `_report_messages`) is its report: a change it says in
    the present is read too."""
    found: list[tuple[int, str]] = []
    written = written_text(session).lower()
    # a passive change ("X is now passed to Y") only after the session's first edit, for code it wrote
    first_edit = next((i for i, e in enumerate(session.events) if _edits(e)), len(session.events))
    reads = (outcome, lead_in, lambda text: now_done(text, written), _now_change)
    pushes = [index for index, event in enumerate(session.events) if pushed(event.tool)]
    branch = ""  # the branch of the last commit line: each names it when it changes
    said: list[set[str]] = []  # the words of each outcome found: a later message's first new outcome is its own
    for index, event in enumerate(session.events):
        if event.kind == "assistant" and event.text:
            found_in = sentences(event.text)  # a report's lead-in or its fix ("The fix was updating ..."): only without
            chosen = reads[:2 + (index > first_edit)] + reads[3:] * (index in ends)
            done = next((o for read in chosen for s in found_in  # an outcome said outright
                         if (o := read(s.text)) and not _POINTING_OUTCOME_RE.match(o)
                         and not (read is lead_in and _VAGUE_LEAD_RE.match(o))
                         and not _repeats(o, said)), None)  # "completed both tasks: 1. Removed ... 2. Added ..."
            if done:  # cut as a headline is: at a clause end, not mid-clause ("... and returns")
                found.append((index, _cut_headline(done, BULLET_WORDS, BULLET_CHARS)))
                said.append(content_words(done))
        elif event.tool is not None and event.tool.name == "Bash" and not event.tool.is_error:
            command = str(event.tool.input.get("command", ""))
            if not scratch_repository(command):  # a commit in a repository made to try something out is no work
                for subject in commits_in(command):
                    line, branch = commit_line(subject, event.tool.output, branch, any(at >= index for at in pushes))
                    found.append((index, line))
            found += [(index, f"{OPENED_PR} {first_line(title, 160)}") for title in pr_titles_in(command)]
    return found


REPEAT_SHARE = 0.7  # of the shorter outcome's words the other holds: the later says the earlier again
REPEAT_WORDS = 3  # the fewest words of the shorter: "Fixed the test" is said again by no other outcome


def _repeats(text: str, said: list[set[str]]) -> bool:
    """Whether an outcome says again what one of the outcomes `said` (their content words) did: most words of the
    shorter of the two are the other's ("Removed the duplicated `pathSafeRegex` ... from the paths package")."""
    words = content_words(text)
    return any(len(words & earlier) >= REPEAT_SHARE * min(len(words), len(earlier)) >= REPEAT_SHARE * REPEAT_WORDS
               for earlier in said)


# "`TestX` now compares ...", "The change at `a.go:294` now calls ...", "Now `entire session list` will send ...": a
# report's change said in the present; "The build now passes", "The branch now has no issues": a state, no change
_NOW_CHANGE_RE = re.compile(
    r"^(?:(?:`[^`]{1,80}`|the\s[\w-]+(?:\s[\w-]+){0,2})(?:\s(?:at|in|of|for)\s`[^`]{1,60}`)?\snow\s"
    r"(?!(?:pass|match)es\b|(?:look|work|seem)s\b|has\sno\b)[a-z]+s|"
    r"now,?\s`[^`]{1,80}`\swill\s[a-z]+)\b(?=.{8})", re.IGNORECASE)
_NOW_WORDS = 6  # the fewest words of such a change


def _now_change(text: str) -> str | None:
    """A report's change said in the present ("`TestX` now compares `repls` directly ..."), as its outcome."""
    if text.endswith((":", "?")) or len(text.split()) < _NOW_WORDS or not _NOW_CHANGE_RE.match(text):
        return None
    return text[:1].upper() + text[1:]


def _request_turns(session: Session) -> list[range]:
    """The events of each request's turn (`requests_of`'s: a prompt, a command Claude worked on), up to the next."""
    return _turns(_requests_at(session), len(session.events))


def _turns(requests_at: list[tuple[int, str, str]], events: int) -> list[range]:
    """`_request_turns` of the session's `_requests_at`, of `events` events."""
    starts = [index for index, _, _ in requests_at]
    return [range(start, end) for start, end in itertools.pairwise([*starts, events])]


def _edit_turns(session: Session, turns: list[range]) -> list[range]:
    """The request `turns` (`_request_turns`) that edited a file."""
    return [turn for turn in turns if any(_edits(session.events[i]) for i in turn)]


def _edits(event: Event) -> bool:
    return event.tool is not None and event.tool.name in WRITE_TOOLS and not event.tool.is_error


def _reports(turns: list[range], outcomes: list[tuple[int, str]]) -> set[int]:
    """The event index of each edit turn's report: its last outcome."""
    return {at for turn in turns if (at := max((i for i, _ in outcomes if i in turn), default=-1)) >= 0}


_MADE = (*COMMITTED, OPENED_PR)  # What Happened's lines of a commit or pull request the session made
ALL_COMMITS = 5  # a session's commits and pull requests, each said when no more (a PR's every fix)
SPREAD_COMMITS = 3  # said of more: the first, the last and one between, What Happened short
_COMMIT_SAID_RE = re.compile(r"^(?:Committed|Pushed)\b")  # a report of a commit or push: "Committed as `683d531`"


def what_happened(session: Session, requests: list[tuple[str, str]], said: Collection[str] = (),
                  undone: Undone | None = None, headline: str = "",
                  answered: Sequence[tuple[int, str]] = (), limit: int = MAX_BULLETS,
                  changes: Collection[tuple[str, bool]] | None = None, backing: Backing | None = None) -> list[str]:
    """At most `limit` chronological bullets of what was done (commits, PRs, then the report of each request that
    edited, then Claude's other outcomes); what was asked only for a session that reports nothing done, a request the
    `headline` already says left out (none: each request). An outcome an
    insight already says (`said`) is left out, and one whose value the session took back later, or whose turn's files a
    later turn deleted (`undone`: the session's `Undone`, when the caller has it): not what it did in the end. The
    `answered` questions (`answers`: a session that changed nothing) are kept first, each before its reply's outcome.
    A report that lists its changes gives them all (`report_changes`), each said up to its reason, even when an
    insight says it with the reason. What it edited and whether it committed, `facts.with_checks` adds. `backing`: the
    session's `Backing`, when the caller has it."""
    said = [line.lower() for line in said]
    undone = undone or Undone(session)
    backing = backing or Backing(session, _request_turns(session))
    request_turns = backing.turns
    turns = _edit_turns(session, request_turns)
    ends = _report_messages(session, turns)
    kept = [(i, text) for i, text in _outcomes(session, ends)
            if not (session.events[i].kind == "assistant" and (undone.superseded(i, text) or undone.turn_deleted(i)
                                                               or backing.unbacked_claim(i, text)))]
    kept_words = [(at, content_words(o)) for at, o in kept]
    listed = [[(i, _cut_headline(text, BULLET_WORDS, BULLET_CHARS)) for i, text in lines
               if not undone.superseded(i, text)  # an earlier report's outcome said again: said once
               and not _repeats(text, [words for at, words in kept_words if at < i])]
              for lines in report_changes(session, sorted(ends),
                                          changed_files(session) if changes is None else changes, backing)
              if not undone.turn_deleted(lines[0][0])  # one line: only a report that says no change otherwise
              and (len(lines) > 1 or all(i != lines[0][0] for i, _ in kept))]
    listed = [lines for lines in listed if lines]
    by_report = {lines[0][0] for lines in listed}
    starts = {text.lower()[:40] for lines in listed for _, text in lines}  # said by a report's list: not again
    outcomes = [(i, text) for i, text in kept if i not in by_report and text.lower()[:40] not in starts
                and not any(text.lower() in line for line in said)]
    outcomes += [(i, _cut_headline(text, BULLET_WORDS, BULLET_CHARS)) for i, text in answered]
    if outcomes or listed:
        firsts: dict[str, tuple[int, str]] = {}
        for i, text in outcomes:
            firsts.setdefault(text.lower()[:40], (i, text))
        unique = list(firsts.values())
        made = [item for item in unique if item[1].startswith(_MADE)]
        fixed = made if len(made) <= ALL_COMMITS else _spread(made, SPREAD_COMMITS)  # the last too
        if fixed:  # the agent's own "Committed and pushed": the commit lines say it, with the hash
            unique = [item for item in unique if item in fixed or not _COMMIT_SAID_RE.match(item[1])]
        fixed += _spread([item for item in unique if item[1].startswith(ANSWER)], limit - len(fixed))
        reports = _reports(turns, unique)  # each request's report first: a later one's work is no less
        # a listing report's first line (its most edited file) is its report; its other lines come next
        told = sorted([item for item in unique if item[0] in reports and item not in fixed]
                      + [lines[0] for lines in listed])
        told = _spread(told, max(limit - len(fixed), 0))
        # the first outcome of a turn no line says yet ("Added `get_current_branch_pr()` ...") before a report's
        # further lines
        others = [item for item in unique if item not in fixed and item not in told]
        firsts_of_turns = [item for turn in request_turns if not any(i in turn for i, _ in fixed + told)
                           and (item := next((o for o in others if o[0] in turn), None)) is not None
                           and "`" in item[1]]  # one naming its code: "Updated test assertions" says less
        told += _spread(firsts_of_turns, max(limit - len(fixed) - len(told), 0))
        # the files edited most first: each report's second lines, then its third ...
        rest = [item for _, item in sorted(((rank, item) for lines in listed for rank, item in enumerate(lines[1:])),
                                           key=lambda pair: pair[0])]
        told += rest[:max(limit - len(fixed) - len(told), 0)]
        others = [item for item in others if item not in told]
        picked = fixed + told + _spread(others, max(limit - len(fixed) - len(told), 0))
        return [text for _, text in sorted(picked, key=lambda item: (item[0], not item[1].startswith(ANSWER)))]
    return _asked(requests, headline)


def _report_messages(session: Session, turns: list[range]) -> set[int]:
    """The last message with text of each edit turn: the turn's report."""
    return {max(replies) for turn in turns
            if (replies := [i for i in turn if session.events[i].kind == "assistant" and session.events[i].text])}


def _asked(requests: list[tuple[str, str]], headline: str = "") -> list[str]:
    """Up to 3 bullets of what was asked ("Asked:" a prompt, "Ran:" a command), those the `headline` already says
    left out: What Happened of a session that reports nothing done."""
    asked = [line for kind, text in requests
             if (line := _asked_line(text) if kind == "prompt" else f"{RAN} {first_line(text, 160)}")]
    return list(dict.fromkeys(_spread([line for line in asked if not _said_already(line, headline)], 3)))


def _asked_line(prompt: str) -> str | None:
    """A prompt's "Asked:" line; a pasted test failure's, the test it asks to fix (the last named);
    None for other pasted output (a log, a trace, a hook's message), which asks nothing a reader can name."""
    if _PASTED_FAILURE_RE.match(prompt):
        failed = failed_tests(prompt)
        return f"{ASKED_TO_FIX} `{failed[-1]}`" if failed else None
    if _PASTED_OUTPUT_RE.match(prompt):
        return None
    return f"{ASKED} {_cut_headline(_prompt_headline(prompt), BULLET_WORDS, BULLET_CHARS)}"


def _said_already(line: str, headline: str) -> bool:
    """Whether an "Asked:" line tells a reader nothing: the headline says it (the words of one hold the other's, and
    the headline is not the cut start of the line, which then says the rest), or it asks nothing ("Asked: Yes")."""
    request = line.removeprefix(f"{ASKED} ")
    words, heading = content_words(request), content_words(headline)
    cut_from = request.lower().startswith(headline.rstrip(" .…").lower())
    return line.startswith(f"{ASKED} ") and (bool(_TRIVIAL_PROMPT_RE.match(request)) or bool(
        heading and words and (words <= heading or heading <= words and not cut_from)))


def _happened(session: Session, requests: list[tuple[str, str]], said: list[str], undone: Undone, facts: Facts,
              headline: str, changes: list[tuple[str, bool]], backing: Backing) -> list[str]:
    """What Happened: its bullets with the checks and the edits left (`with_checks`), the answers found when the
    session `changed` no file; with nothing else to say, the requests the headline repeats, the subagent runs
    delegated."""
    runs = len(session.delegated_runs)
    answered = [] if changes else answers(session, BULLET_CHARS)
    limit = MAX_BULLETS - len(facts.happened())  # the check lines' room kept: a later request's report is not cut
    told = what_happened(session, requests, said, undone, headline, answered, limit, changes, backing)
    past_spread = max(sum(1 for line in told if line.startswith(_MADE)) - SPREAD_COMMITS, 0)  # no check line's room
    # nothing done nor checked: the requests, even those the headline repeats (an empty What Happened says less)
    return with_checks(told, facts, MAX_BULLETS + past_spread, tests_line(session, told)) or _asked(requests) or [
        f"Delegated {runs} subagent run{'s' if runs > 1 else ''}" if runs else "Short exchange with no recorded steps"]


# "• running goreleaser ... ⨯ release failed", "Operation stopped by hook: ...", a trace: a prompt that opens as a
# tool's output is pasted, no request to show
_PASTED_OUTPUT_RE = re.compile(r"^\s*(?:[•⨯✗✘✓✔✖│├└┌❯➜▶►■]|Operation stopped by hook:|"
                               r"Traceback \(most recent call last\)|panic:\s|goroutine \d+ \[)")
# "--- FAIL: TestX (…s)", "=== RUN TestX": a test run's output pasted; what it asks is to fix the test it names
_PASTED_FAILURE_RE = re.compile(r"^\s*(?:-{3} FAIL:|=== RUN\s|FAIL\s)")


_T = TypeVar("_T")


def _spread(items: list[_T], count: int) -> list[_T]:
    """First, last and evenly spaced items between: a fair sample of a long conversation."""
    if len(items) <= count:
        return items
    if count < 2:  # one: the last, the conversation's end
        return items[len(items) - count:]
    step = (len(items) - 1) / (count - 1)
    return [items[round(i * step)] for i in range(count)]


def session_terms(session: Session) -> tuple[Counter[str], list[str]]:
    """(weighted terms, the distinct terms to record in the document frequencies)."""
    weights = weighted_terms(session)
    return weights, top_terms(weights)


def extract(session: Session, *, weights: Counter[str], df: DocumentFrequency, total_docs: int,
            zone: ZoneInfo) -> Handoff:
    """The handoff of a session. `weights` come from `session_terms`; see `keywords_of` for `df`."""
    return with_keywords(draft(session, zone), weights=weights, df=df, total_docs=total_docs)


def with_keywords(handoff: Handoff, *, weights: Counter[str], df: DocumentFrequency, total_docs: int,
                  candidates: KeywordCandidates | None = None) -> Handoff:
    """The drafted handoff given its keywords (none when it has no substance)."""
    if handoff.substance:
        handoff.keywords = keywords_of(weights, df, total_docs, tuple(handoff.projects), candidates=candidates)
    return handoff


def draft(session: Session, zone: ZoneInfo, names: ProjectNames | None = None) -> Handoff:
    """The handoff without its keywords: everything that does not depend on the other sessions, so
    that it can be made apart from (and in parallel with) the ordered document-frequency updates.
    `names`: how the session's source names projects (core/sources/projects.py); None: by this machine's folders."""
    commits = commit_subjects(session)
    requests_at = _requests_at(session)  # one pass over the events for all three parts and the request turns
    requests = _requests(requests_at)
    backing = Backing(session, _turns(requests_at, len(session.events)))  # for the headline and What Happened
    changes = changed_files(session)
    substance = substance_of(session, requests, changes)
    projects = (names or ProjectNames()).of(session.cwd, session.repository)
    stamp = session.last_ts or session.first_ts
    # A session with no timestamp at all (a summary-only file) has no day of its own.
    day = stamp.astimezone(zone).date() if stamp else dt.date(1970, 1, 1)
    headline = headline_of(session, pr_titles(session), commits, requests, changes, backing)
    if session.orphan:
        headline = _words(f"Subagent work: {headline}", 10)
    handoff = Handoff(
        # Codex's ids are UUIDv7: their first 8 characters are a timestamp that sessions of a day share.
        short_id=agent(session.agent).short_id(session.session_id),
        session_id=session.session_id,
        date=day,
        duration=format_duration(session.active_seconds // 60),
        model=session.model,
        headline=headline,
        projects=list(projects),
        substance=substance,
        agent=session.agent,
        machine=session.machine,
    )
    if substance:
        facts = session_facts(session)
        undone = Undone(session)  # what the session wrote and took back: read once, for Insights and What Happened
        handoff.insights = insights(session, undone, facts)
        handoff.what_happened = _happened(session, requests, handoff.insights, undone, facts, headline, changes,
                                          backing)
        handoff.key_files = (key_files(changes, files_read(session, changes), files_committed(session, changes))
                             if substance == 2 else [])
        said, last_kind = open_threads(session, facts.checked_after_edit())
        left = facts.threads()
        handoff.open_threads = merge_threads([t.text for t in left], [t.text for t in said])
        handoff.status = status_of(session, left + said, last_kind, bool(commits))
    return handoff
