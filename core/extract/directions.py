"""The user's directions: the prompts that corrected or redirected the work, or asked for a change as a question,
and that an edit then carried out, read from what the user typed, not the agent's words (core/extract/insights.py
ranks them with the agent's choices).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from eywa.core.extract.claude_words import sentences
from eywa.core.extract.marks import LEAD_INTO, balanced, clause_end, typed
from eywa.core.extract.said_left import YES_WORDS
from eywa.core.session import WRITE_TOOLS, Event, Session

PLAN_PROMPT = "Implement the following plan:"  # a session started to carry out a plan approved in another
# "thinking again: let's completely remove the start command", "let's use true/false and not on/off", "I like Option
# C", "remote it completely, no need to deprecate it": a prompt that corrects or redirects the work, or picks an option
_DIRECTION_RE = re.compile(r"\b(?:instead|rather than|not correct|wrong|no need|thinking again|"
                           r"i like|i prefer|go with|let's (?:do|go with|use|keep|remove|completely|first|just|not)|"
                           r"let's (?:adjust|change|make|switch|rename|replace) (?:this|it|that|them|both)(?: \S+){3}|"
                           r"(?:,|\band|\bbut) not|the \w+ (?:is|was|are) (?:right\b(?! now)|correct))\b",
                           re.IGNORECASE)
# "we should update ... to also have a check mark in front", "the test should check ...", "I'd like all those
# assertions replaced ...", "let's only add replace then for now", "first commit ..., then proceed ...": what the work
# should be, or in what order ("let's also add ..." is a follow-up); a sentence that corrects the work says it first
# (each "first" read up to the next, possessively: linear on a long line, the same sentences match)
_WANTED_RE = re.compile(r"\b(?:we should|the \w+ should|i'?d (?:also )?like|i would like|let's only|"
                        r"first\b(?:(?!\bfirst\b|, then\b)[^.?])*+, then)\b", re.IGNORECASE)
# "can we import the id packages as checkpointID in trailers.go?": a change asked for as a question; not a check, an
# explanation or tests asked for ("can you double check ...", "can we add a test?")
# ("oh, I didn't find those links helpful, can you please replace them ...?": the clause before it its reason)
_ASKING = r"(?:can|could) (?:we|you) (?:also |please |just )?"  # "can you please ", "could we also "
_ASKED_RE = re.compile(rf"^(?:[^?]{{0,120}}?, )?(?:and |also |ok(?:ay)?,? )?{_ASKING}"
                       r"(?!(?:double |)check|verify|explain|look|help|run|show|tell|see|find|figure|try|investigate|"
                       r"understand|(?:add|write) (?:\w+ ){0,2}tests?\b)(?P<asked>[a-z]+\b[^?]*)\??$",
                       re.IGNORECASE)  # its mark may be left off: "can you make the agent a free form field"
# "can we import the id packages ...": a change asked as its first words, said by its verb ("import the id packages")
_ASKING_LEAD_RE = re.compile(rf"^{_ASKING}", re.IGNORECASE)
# "can you fix it?", "can you please proceed?", "can you commit and push?": a go-ahead that names no change
_GO_AHEAD_WORDS = frozenset("it this that these those them the a an and or to for of please now again all ahead go "
                            "proceed continue commit push do make apply implement update fix finish change changes "
                            "better have be also just we you".split())
ASKED_WORDS = 2  # words a change asked as a question names besides a go-ahead's
# "yep let's do it", "Let's implement this": an approval of what the agent proposed, no direction of its own
_APPROVAL_RE = re.compile(r"\b(?:do|implement|go with|try) (?:it|this|that)\b", re.IGNORECASE)
# ("no" only with its mark: "no need to ..." is the direction itself)
_LEAD_WORDS_RE = re.compile(r"^(?:(?:ok(?:ay)?|oh|hmm+|yes|yep|yeah|please|no(?=\s*[,:.!-])|fine|alright|actually|"
                            r"thinking again|so|and|but|also)\s*[,:.!-]?\s+)+", re.IGNORECASE)
MAX_DIRECTION = 160
# "1", "option 2", "let's go with b", "the second one": an option of the agent's list picked, nothing else said
_NTH = ("first", "second", "third", "fourth")
_PICK_RE = re.compile(r"^(?:(?:let's |we'll |i'll )?(?:go with|do|take|pick) )?(?:option |number |#)?"
                      r"(?:(?P<mark>[1-9a-e])|the (?P<nth>first|second|third|fourth)(?: one| option)?)(?: please)?\W*$",
                      re.IGNORECASE)
# "@/src/setup.go:694-698": a file the prompt points at
_MENTION_LINE_RE = re.compile(r"^[ \t]*@\S+[ \t]*$", re.MULTILINE)
_OPTION_RE = re.compile(r"\boption\s+([a-z]|\d+)\b", re.IGNORECASE)
_YES_RE = re.compile(rf"^{YES_WORDS}\W*$", re.IGNORECASE)  # a bare yes, nothing of its own
PROMPT_SENTENCE_RE = re.compile(r"(?<=[.!])\s+")
# "In func [REDACTED], i'd like ...": a redaction mark (the scrubber's `[REDACTED:kind]`, or a bare one from transcripts
# redacted upstream) standing for a word, not a value (`key=[REDACTED]`): the direction reads alone as nothing
_HIDDEN_NAME_RE = re.compile(r"(?:^|\s)\[REDACTED[\]:]")
# "could we also do "Git hooks verified"?": a change asked that names nothing outside its quote reads alone as nothing
_QUOTED_RE = re.compile(r"\"[^\"]*\"|'[^']*'|`[^`]*`")
# "Can we have a generic Fallback like "Agent" does that make sense with the setences?": the second question is asked
# of the agent, not a change
_SECOND_QUESTION_RE = re.compile(r"\s+(?:does|is|would|will) (?:that|this|it) (?:make sense|work|sound)\b.*$",
                                 re.IGNORECASE)


def cut_at_clause(text: str, limit: int, marks: tuple[str, ...] = ("; ", ", "), least: int = 40) -> str:
    """At most `limit` characters of what the user typed: up to the last of `marks` in them past `least` characters
    outside a code span or quotation, else between words; no mark left open (`balanced`)."""
    if len(text) <= limit:
        return balanced(text, cut=False)
    cut = clause_end(text, start=least + 1, stop=limit, ends=_before_marks(marks))
    return balanced(text[:cut] if cut >= 0 else text[:limit].rsplit(" ", 1)[0].rstrip(LEAD_INTO))


@functools.cache  # a few fixed tuples of marks, each compiled once
def _before_marks(marks: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(f"(?=(?:{'|'.join(map(re.escape, marks))}))")


def _picked(text: str, last: str) -> str | None:
    """The item of the agent's last message a bare pick names ("1", "option 2", "the second one"), in the message's
    words, its emphasis marks left out; None when the prompt is no pick or the message lists no such item."""
    pick = _PICK_RE.match(text)
    if pick is None:
        return None
    mark = pick["mark"] or str(_NTH.index(pick["nth"].lower()) + 1)
    # the last list of the message holds the options its closing question asks about
    items = re.findall(rf"^\s*(?:[-*]\s+)?(?:\*\*)?(?:option\s+)?{re.escape(mark)}(?:[.):]|\*\*)\s*(.+)$", last,
                       re.IGNORECASE | re.MULTILINE)
    return items[-1].replace("**", "").strip().rstrip(" .:") if items else None


def with_replies(events: list[Event]) -> Iterator[tuple[int, Event, int]]:
    """Each event with its index and the number of agent messages up to it: its place in the session."""
    said = 0
    for index, event in enumerate(events):
        if event.kind == "assistant" and event.text:
            said += 1
        yield index, event, said


def carried_out(events: list[Event], index: int) -> bool:
    """Whether an edit follows the prompt at `index` before the next prompt (a bare "yes" to the agent's question
    about it passed over)."""
    later = (events[at] for at in range(index + 1, len(events)))  # no copy of the rest: it runs once per prompt
    return next((e.tool is not None and e.tool.name in WRITE_TOOLS for e in later
                 if e.kind == "user" and e.text and not _YES_RE.match(e.text.strip())
                 or e.tool is not None and e.tool.name in WRITE_TOOLS), False)


# "Can you please change the default command behaviour ... to look up the PR for the current branch? You can do
# something like:\n\n$ gh pr view ...": a change asked first, then an example or output pasted after it
_FIRST_ASKED_RE = re.compile(r"^[^?\n]{20,200}\?(?=\s)")


def _asked_first(shown: str) -> re.Match[str] | None:
    """The change a prompt that goes on to paste an example or output asks for first, as one question on its first
    line (its `_ASKED_RE` match); None when the prompt is one line or opens with no such question."""
    first = _FIRST_ASKED_RE.match(shown) if "\n" in shown else None
    return _ASKED_RE.match(first[0]) if first else None


def directions(session: Session) -> list[tuple[int, str]]:
    """The prompts after the first that correct or redirect the work ("let's first fix the bug with CWD", "Instead
    of 'Strategy initialized' we should do ...") and that an edit then carried out, in the user's words, with the
    number of agent messages before each (its place in the session). Not a question (but a change asked for as one:
    "can we import the id packages as checkpointID in trailers.go?"), not output pasted, not an approval of what the
    agent proposed."""
    result: list[tuple[int, str]] = []
    prompts = 0
    last = ""
    events = session.events
    for index, event, said in with_replies(events):
        if event.kind == "assistant" and event.text:
            last = event.text
        if event.kind != "user" or not event.text or event.text.startswith(PLAN_PROMPT):
            continue
        prompts += 1
        shown = _MENTION_LINE_RE.sub("", typed(event.text)).strip()
        first = _asked_first(shown)
        text = first[0] if first else " ".join(shown.split())
        chosen = _picked(text, last) if prompts > 1 else None
        if chosen is not None:
            if carried_out(events, index):
                result.append((said, chosen))
            continue
        asked = (match := first or _ASKED_RE.match(text)) is not None
        if match:
            text = _SECOND_QUESTION_RE.sub("?", text)
            named = _QUOTED_RE.sub(" ", _SECOND_QUESTION_RE.sub("", match["asked"])).lower()
            asked = len(set(re.findall(r"[\w`.-]+", named)) - _GO_AHEAD_WORDS) >= ASKED_WORDS
        if prompts == 1 or len(text) > 300 or "?" in text and not asked or "\n" in shown and not first or \
                not (asked or _DIRECTION_RE.search(text) or _WANTED_RE.search(text)) or _APPROVAL_RE.search(text):
            continue
        if not carried_out(events, index) or _HIDDEN_NAME_RE.search(text):
            continue
        parts = PROMPT_SENTENCE_RE.split(text)
        text = text if asked else next((part for part in parts if _DIRECTION_RE.search(part)), None) \
            or next(part for part in parts if _WANTED_RE.search(part))
        text = _LEAD_WORDS_RE.sub("", text)
        text = _ASKING_LEAD_RE.sub("", text) if asked else text
        text = cut_at_clause(text, MAX_DIRECTION).rstrip(" .,;:?")
        picked = _OPTION_RE.search(text)
        if picked:  # "I like Option C": the option as the agent's last message put it
            text = next((item.text.rstrip(" .:") for item in sentences(last) if re.match(
                rf"(?:option\s+)?{re.escape(picked.group(1))}\b\W", item.text, re.IGNORECASE)), text)
        result.append((said, text))
    return result
