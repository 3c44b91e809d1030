"""Choices the user made in words other than a direction (core/extract/directions.py reads those): the fix a
review comment the user pasted suggested, carried out by an edit ("Consider using `context.WithTimeout` ... so the
command is guaranteed to terminate"); of the options such a comment offers ("either (a) validate ... or (b) update
..."), the one the agent's next words take up; an offer of the agent the user declined ("Want me to also set
`gc.auto 0`?" "no don't set it, let's see if it keeps happening"); and the options the user picked when the agent
asked with Claude Code's AskUserQuestion tool. Read from what the user typed or picked.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from eywa.core.extract.directions import PLAN_PROMPT, PROMPT_SENTENCE_RE, carried_out, cut_at_clause, with_replies
from eywa.core.extract.marks import typed
from eywa.core.extract.plan_steps import about_tests
from eywa.core.extract.said_left import ASK_PREFIX, refusal_words
from eywa.core.handoffs.fixed_words import NOT_DONE
from eywa.core.session import WRITE_TOOLS, Session, ToolCall
from eywa.core.sources.comments import written

_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'`])|\n\s*\n|\n\s*(?:[-*]|\d+[.)])\s+")
# "consider removing these fields", "Consider using context.WithTimeout", "please either (a) ...": a reviewer's fix
_SUGGESTED_RE = re.compile(r"\b(?:consider|please)\s+(?:either\s+)?(?:[a-z]+ing\b|\(a\))|\b(?:should|must) either\b",
                           re.IGNORECASE)
_LEAD_RE = re.compile(r"^.*?\b(?:consider|please)\s+(?:either\s+)?", re.IGNORECASE)
_OPTION_SPLIT_RE = re.compile(r"\s*(?:,\s*)?(?:\bor\s+)?\(([a-d])\)\s*")
_ASIDE_RE = re.compile(r"\s*\((?:see|or,? alternatively)\b[^()]*\)|,? or (?:document|leave|keep|explain)\b.*$",
                       re.IGNORECASE)  # a pointer or the alternative of leaving it as it is
_WORD_RE = re.compile(r"[a-z][a-z0-9_]{3,}")
_PLAIN_WORD_RE = re.compile(r"^[A-Z][a-z]+\b(?![(.])")  # a word, not code named ("Adding", not "TrackCommand()")
REVIEW_WORDS = 25  # a pasted review comment states a problem before its fix: a prompt of this many words at least
MAX_CHOICE = 200  # characters: a line a phone shows whole


def _cut(text: str) -> str:
    """At a clause, under `MAX_CHOICE` characters, without its pointers or alternatives (`_ASIDE_RE`) or trailing
    marks."""
    text = cut_at_clause(_ASIDE_RE.sub("", text).strip(), MAX_CHOICE, ("; ", ", ", " (", " so ", " to "), 60)
    return text.rstrip(" .,;:?\"'")


def _taken_up(options: list[str], answer: str) -> str:
    """The option whose words the agent's answer repeats most (the first on a tie)."""
    said = set(_WORD_RE.findall(answer.lower()))
    return max(options, key=lambda option: len(set(_WORD_RE.findall(option.lower())) & said))


def review_fixes(session: Session) -> list[tuple[int, str]]:
    """The fix each review comment the user pasted suggested, when an edit carried it out, with the number of agent
    messages before it: the suggestion in the comment's words ("Using `context.WithTimeout` ... so the command is
    guaranteed to terminate"), or of the options it offers the one the agent's next message takes up. Not a test
    asked for, not a short prompt (a direction, read by `directions`)."""
    result: list[tuple[int, str]] = []
    events = session.events
    for index, event, said in with_replies(events):
        if event.kind != "user" or not event.text or event.text.startswith(PLAN_PROMPT) or \
                len(event.text.split()) < REVIEW_WORDS or not carried_out(events, index):
            continue
        suggestion = next((part for part in _SENTENCE_RE.split(event.text.strip())
                           if _SUGGESTED_RE.search(" ".join(part.split()))), None)
        if suggestion is None:
            continue
        suggestion = _LEAD_RE.sub("", " ".join(suggestion.split()))
        options = [part for part in _OPTION_SPLIT_RE.split(suggestion)[2::2] if part]
        if options:
            answer = next((e.text for e in events[index + 1:] if e.kind == "assistant" and e.text), "")
            suggestion = _taken_up(options, answer)
        # a test asked for is a chore, not a choice ("Consider adding test cases for ...")
        if about_tests(suggestion) or suggestion.rstrip().endswith((":", "either")):
            continue
        # "Adding \r to ...": the suggestion goes on from the words before it ("Per the review: adding ...")
        result.append((said, _cut(suggestion[:1].lower() + suggestion[1:] if _PLAIN_WORD_RE.match(suggestion)
                                  else suggestion)))
    return result


# "Want me to also set `gc.auto 0` on your repo now?": the agent's offer, its action in the group
_OFFER_RE = re.compile(rf"(?:^|[.!:]\s+){ASK_PREFIX}\s+(?:also\s+|go ahead and\s+)?(?P<action>[^?]{{8,160}})\?\s*$",
                       re.IGNORECASE)
# "no don't set it, let's see if it keeps happening": the offer declined, the rest the user's reason ("no need to
# deprecate it, remove it" is a direction: core/extract/directions.py)
_DECLINED_RE = re.compile(r"^(?:no(?! need\b)|nope|nah|not now|not yet)\b[\s,.!:-]*", re.IGNORECASE)


def declined_offers(session: Session) -> list[tuple[int, str]]:
    """Each offer that closed an agent's message ("Want me to also set `gc.auto 0` on your repo now?") that the
    user's next prompt declined ("no don't set it, let's see if it keeps happening"): a step not taken by the user's
    choice, with the user's words after the "no" as its reason, and the number of agent messages before it."""
    result: list[tuple[int, str]] = []
    said = 0
    offer = None
    for event in session.events:
        if event.kind == "assistant" and event.text:
            said += 1
            offer = _OFFER_RE.search(" ".join(event.text.split()))
        elif event.kind == "user" and event.text:
            declined = _DECLINED_RE.match(event.text.strip())
            if offer is not None and declined is not None and len(event.text) <= MAX_CHOICE:
                reason = _cut(typed(event.text.strip()[declined.end():]))
                result.append((said, f"{NOT_DONE} {offer['action'].rstrip(' .')}"
                                     + (f" ({reason})" if reason else "")))
            offer = None
    return result


# "What would you like to do next?": the next step of the work picked, not a choice of how it is done
_NEXT_STEP_RE = re.compile(r"\bwhat (?:would you like|do you want|should i|should we)(?: me)? to do\b", re.IGNORECASE)
_RECOMMENDED_MARK_RE = re.compile(r"(?<!\s)\s*\(recommended\)", re.IGNORECASE)  # the agent's mark on an option's label


def answered_questions(session: Session) -> list[tuple[int, str]]:
    """The options the user picked when the agent asked with AskUserQuestion ("Where should the generated Mermaid
    diagram go?" "docs/generated/"), each as the question, the answer and the option's description, its reason ("The
    user chose docs/generated/: clear that contents are machine-generated artifacts"), with the number of agent messages
    before it. Not the next step picked ("What would you like to do next?")."""
    result: list[tuple[int, str]] = []
    for _, event, said in with_replies(session.events):
        call = event.tool
        if call is None or call.name != "AskUserQuestion" or not call.result:
            continue
        questions = call.input.get("questions")
        for asked in questions if isinstance(questions, list) else []:
            question = str(asked.get("question", "")).strip() if isinstance(asked, dict) else ""
            line = next((line for line in call.result.splitlines() if question and line.startswith(f"{question} ")),
                        None)
            if line is None or _NEXT_STEP_RE.search(question):
                continue
            answer = line[len(question):].strip()
            options = asked.get("options")
            reason = next((str(option.get("description", "")).strip() for option in
                           (options if isinstance(options, list) else [])
                           if isinstance(option, dict) and str(option.get("label", "")).strip() == answer), "")
            picked = f"The user chose {_RECOMMENDED_MARK_RE.sub('', answer)}"
            text = f"{question} {picked}"
            if len(text) > MAX_CHOICE:  # a long question: its header ("Output dir") names what was asked
                header = str(asked.get("header", "")).strip()
                text = f"{header}: {picked[:1].lower()}{picked[1:]}" if header else text
            if reason:  # the option's description, cut first: the question and the answer stay whole
                lowered = reason[:1].lower() + reason[1:] if reason[1:2].islower() else reason
                text = cut_at_clause(f"{text}: {lowered}", MAX_CHOICE, (". ", "; ", ", "), len(text))
            result.append((said, text.rstrip(" .,;:-–—") if len(text) <= MAX_CHOICE else _cut(text)))
    return result


# "i'll take it from here", "I tried to run gc from the main worktree", "OH I think the test is failing due to ...":
# the user takes over or reports what they did; "main is clean": a fact, no direction (one `\W*` in each gap between
# the interjections: two would split each gap both ways, exponential on "- oh, oh, oh, ... x")
_NOT_DIRECTED_RE = re.compile(r"^(?:(?:\W*(?:oh|huh|hmm+|ok(?:ay)?|wait)\b)+\W*)?(?:i|i'll|i'm|i've)\b|"
                              r"^\w+ (?:is|are|was|were)\b|^(?:that|it|this)'s\b", re.IGNORECASE)
# "is there other way than using HOMEBREW_TAP_GITHUB_TOKEN, something like ...": a question without its mark
_ASKING_RE = re.compile(r"^(?:is|are|do(?! not\b)|does|can|could|should|would|will|why|what|how|where|which)\b",
                        re.IGNORECASE)
_LEAD_WORDS_RE = re.compile(r"^(?:(?:ok(?:ay)?|oh|hmm+|huh|no|nope|please|actually|wait)\W+)+", re.IGNORECASE)
MAX_NAMED = 60  # characters of a refused command named


def _refused(call: ToolCall) -> str:
    """What the refused call would have done, in a few words: the command, the file it would have written, the plan."""
    if call.name == "ExitPlanMode":
        return "the plan as proposed"
    if call.name in WRITE_TOOLS:
        return f"the edit to `{str(call.input.get('file_path', '')).rsplit('/', 1)[-1]}`"
    command = " ".join(str(call.input.get("command", "")).split())
    return f"`{cut_at_clause(command, MAX_NAMED, (' && ', '; ', ' | '), 10)}`" if command else call.name


def refusals(session: Session) -> list[tuple[int, str]]:
    """The tool calls the user refused with a word of what to do instead ("the user said: merge from origin
    alex/ent-221-better-state-tracking-for-sessions", "Entire Inc." for a license's holder) that the session then went
    on from (its next tool call went through before any prompt): a correction of the work in the user's words (a value
    the redone edit took, as the line it changed: `_value_taken`), with the number of agent messages before it. Not a
    question, not the user taking over ("i'll take it from here") or stating a fact ("main is clean")."""
    result: list[tuple[int, str]] = []
    events = session.events
    for index, event, said in with_replies(events):
        call = event.tool
        if call is None or not (typed := refusal_words(call)):
            continue
        words = _LEAD_WORDS_RE.sub("", typed)
        if not words or "?" in words or _ASKING_RE.match(words) or _NOT_DIRECTED_RE.match(words):
            continue
        after = next((e for e in events[index + 1:] if e.tool is not None or e.kind == "user" and e.text), None)
        if after is None or after.tool is None or after.tool.rejected:
            continue
        first = PROMPT_SENTENCE_RE.split(words, maxsplit=1)[0]  # its first sentence: what to do instead
        changed = _value_taken(call, after.tool, first.rstrip(" ."))
        result.append((said, changed or f"At the user's word, instead of {_refused(call)}: {_cut(first)}"))
    return result


def _value_taken(refused: ToolCall, redone: ToolCall, words: str) -> str:
    """When the user's words are a value the edit redone next to the same file took and the refused one did not
    ("Entire Inc." for a license's holder), the line it changed, as it reads after and before: "At the user's word,
    `LICENSE` has "Copyright (c) 2026 Entire Inc." instead of "Copyright (c) 2026 Entire"". "" otherwise."""
    path = refused.input.get("file_path")
    if refused.name not in WRITE_TOOLS or redone.name not in WRITE_TOOLS or redone.input.get("file_path") != path:
        return ""
    before, after = ("\n".join(new for _, new in written(call.input)).splitlines() for call in (refused, redone))
    if words in "\n".join(before):
        return ""
    for tag, old_from, old_to, new_from, new_to in SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        new = next((line.strip() for line in after[new_from:new_to] if words in line), None)
        if tag == "replace" and new is not None and old_to - old_from == 1 and len(new) <= MAX_NAMED:
            return (f"At the user's word, `{str(path).rsplit('/', 1)[-1]}` has \"{new}\" instead of "
                    f"\"{before[old_from].strip()}\"")
    return ""
