"""What the agent said is left, in its own words, for any agent: a labelled next-step line ("Next: add
backoff(attempt)", "TODO: ...", "Remaining: ..."), options it offered with no choice made ("Decide: remove
`t.Parallel()` or pass the path"), and caveats it named in passing, mid-session too ("not yet tested",
"expect conflicts with PR #12", "deferred as too complex", a temporary file to clean up) that nothing later
resolved. Each is one short clause: a thread is read on a phone.
"""

from __future__ import annotations

import re

from eywa.core.extract import commands
from eywa.core.extract.claude_words import Sentence, sentences
from eywa.core.session import Event, ToolCall

THREAD_WORDS = 24  # one clause of a thread: more reads as a run-on
MAX_CAVEATS = 2

# "Next: add backoff(attempt) to the retry loop", "TODO - wire the flag", "Still to do: ..."
NEXT_LINE_RE = re.compile(r"^(?:next(?: steps?)?|to-?dos?|remaining(?: work)?|still to do|left to do|follow-?ups?|"
                          r"open questions?|not done|pending)\s*(?::|—|–| - )\s*(\S.{4,})$", re.IGNORECASE)
# "Option 1: Remove `t.Parallel()` (simplest fix)", "Approach B - ..."
_OPTION_RE = re.compile(r"^(?:option|approach|alternative|choice)\s+(?:\w{1,2}|one|two|three)\s*(?::|\.|\)|—|–| - )\s*"
                        r"(\S.+)$", re.IGNORECASE)
_WHICH_RE = re.compile(r"\b(?:which|what) (?:approach|option|one|way|fix|direction|alternative)s?\b|"
                       r"\bprefer\b|\bwhich (?:do|would|should)\b|\bor (?:should|would) (?:i|we|you)\b", re.IGNORECASE)
_DANGLING = frozenset("a an and the of to in on for with by from or as at into that which so but".split())
_NUMBERED_RE = re.compile(r"^(?:or\s+)?(.+)$", re.IGNORECASE)
# Caveats and deferrals said in passing: what is known left, not a step taken.
CAVEAT_RE = re.compile(
    r"\b(?:not (?:yet )?(?:been )?(?:tested|verified)|untested|(?:haven't|have not|didn't|did not|couldn't|could not) "
    r"(?:yet )?(?:test|verify|run|check)(?:ed)?\b(?! (?:any|anything|the existing))|only documented (?:in|by)|"
    r"expect (?:some |a few )?(?:merge )?conflicts?|will (?:likely |probably )?conflict with|"
    r"defer(?:red|ring)? (?:as (?:too|out of|a follow)|(?:it |this |that )?(?:to|for|until) (?:a |the )?(?:later|"
    r"follow|future|next|separate|another))|left (?:it |this |that )?(?:for|as) (?:a )?"
    r"(?:follow-?up|later|future)|in a (?:later |separate |future )?follow-?up\b|"
    r"out of scope for (?:this|now)|too complex (?:for|to) |known limitation|"
    r"temporary (?:file|script|branch|directory|folder|workaround)s?\b.*\b(?:remove|delete|clean|revert)|"
    r"(?:remove|delete|clean up|revert) (?:the |this )?(?:temporary|temp|debug)\b|"
    # "If Windows support becomes important later, you could ...": a follow-up left for later
    r"^(?:if|when)\b[^.]{0,80}\b(?:later|in the future|becomes? (?:important|necessary|a problem))\b[^.]*\b"
    r"(?:you|we) (?:could|can|would|might)\b)", re.IGNORECASE)
# A piece of every caveat above: substring tests rule out most messages before any regex runs.
_CAVEAT_PIECES = ("tested", "verified", "haven't", "have not", "didn't", "did not", "couldn't", "could not",
                  "documented", "conflict", "follow", "defer", "left ", "scope", "complex", "limitation", "temp",
                  "debug", "later", "future", "becomes")
# "Let me clean up the debug code": a step announced, and taken next
_ANNOUNCED_RE = re.compile(r"^(?:(?:now|next|first|ok(?:ay)?)[,.]?\s+)?(?:let me|let's|i'll|i will|i'm going to)\b",
                           re.IGNORECASE)
# "Would you like me to commit these changes?", "Want me to open a PR?": an offer of a step the record can show done
_OFFER_RE = re.compile(r"^(?:would you like me to|do you want me to|want me to|shall i|should i)\s+"
                       r"((?:also |now |go ahead and )?(?:commit|push|(?:open|create|submit|raise)\b.{0,40}?"
                       r"\b(?:pr|pull request))\b.*\?)$", re.IGNORECASE)
_YES_RE = re.compile(r"^(?:y|yes|yep|yeah|sure|ok(?:ay)?|go ahead|do it|please|lgtm|sounds good)\b", re.IGNORECASE)
# "The most impactful refactoring would be:", "I'd recommend:", "Next steps:": a list of steps the agent proposes
_PROPOSED_RE = re.compile(r"\b(?:recommend(?:ed|ations?)?|suggest(?:ed|ions?)?|would be|next steps?|most impactful|"
                          r"improvements?|could (?:also )?(?:do|add|refactor))\b[^.]*:$", re.IGNORECASE)
# "let's first fix the bug with CWD", "just do 2", "start with the docs": the user took a part of them
_PICKED_RE = re.compile(r"^(?:ok(?:ay)?[,.]?\s+)?(?:(?:let'?s|lets|please|can you|go ahead and)\s+)?"
                        r"(?:first|start with|just|only)\b", re.IGNORECASE)
MAX_STEPS_LEFT = 4
_TEMP_RE = re.compile(r"\btemp(?:orary)?\b|\bdebug\b")
_UNCHECKED_RE = re.compile(r"\b(?:test|verif|run|check)")
# A later report that says the caveat no longer holds.
_PASSED_RE = re.compile(r"\b(?:all (?:\w+ )?tests? pass|tests? (?:now )?pass(?:es|ed)?|verified|confirmed)\b",
                        re.IGNORECASE)
_CLEANED_RE = re.compile(r"\b(?:cleaned up|removed|deleted)\b", re.IGNORECASE)
# What the agent posted on GitHub in its own words: a review reply (`gh api .../replies -f body="..."`), a PR comment.
_POSTED_RE = re.compile(r"\bgh\s+(?:api\b[^\n]*?\s(?:-f|-F|--field|--raw-field)\s+body=|"
                        r"pr\s+(?:comment|review)\b[^\n]*?\s(?:--body|-b)\s+)([\"'])(.+?)(?<!\\)\1", re.DOTALL)
_CLAUSE_END_RE = re.compile(r"[,;:](?=\s)|\s[—–-](?=\s)|\s(?=\()|\.(?=\s|$)")


def clause(text: str, words: int = THREAD_WORDS) -> str:
    """At most `words` words, ending at the last clause end inside them when one keeps half of them."""
    text = " ".join(text.split()).rstrip()
    parts = text.split(" ")
    if len(parts) <= words:
        return text
    cut = " ".join(parts[:words])
    ends = [m.start() for m in _CLAUSE_END_RE.finditer(cut)
            if len(cut[:m.start()].split()) >= words // 2 and not cut.count("`", 0, m.start()) % 2]
    return (cut[:ends[-1]] if ends else cut).rstrip(" ,;:-") + "…"


def labelled_step(text: str) -> str | None:
    """"Next: add backoff(attempt) ..." -> "Next: add backoff(attempt) ..."; None for any other sentence."""
    match = NEXT_LINE_RE.match(text.strip(" *_"))
    return f"Next: {clause(match.group(1))}" if match else None


def _option_name(text: str) -> str:
    """An option's name: its first clause, at most 8 words, never ending on a dangling word or, when cut, on a
    purpose cut short ("a sentinel value like -1 to mean")."""
    cut = clause(text, 8)
    name = re.split(r"\s\(|[—–:]\s| - ", cut.rstrip(".…"), maxsplit=1)[0].strip()
    words = name.split()
    if cut.endswith("…") and len(words) > 3 and words[-2].lower() == "to" and "`" not in words[-1]:
        words = words[:-2]
    while len(words) > 2 and (words[-1].lower() in _DANGLING or words[-1].count('"') % 2):
        words.pop()
    return " ".join(words)


def open_choice(found: tuple[Sentence, ...], index: int) -> str | None:
    """"Decide: A or B" when the question at `index` asks which of the options the message offered (labelled
    "Option 1: ...", or a list right before the question)."""
    if not _WHICH_RE.search(found[index].text):
        return None
    options = [m.group(1) for s in found[:index] if (m := _OPTION_RE.match(s.text))]
    if len(options) < 2:  # the list the question follows: its items are the options
        before = list(found[:index])
        while before and not before[-1].listed:
            before.pop()
        items: list[str] = []
        while before and before[-1].listed:
            items.insert(0, before.pop().text)
        options = [m.group(1) for item in items if (m := _NUMBERED_RE.match(item))]
    names = [name for option in options[:3] if (name := _option_name(option))]
    if len(names) < 2:
        return None
    names = [_lowered(name) for name in names]
    return f"Decide: {', '.join(names[:-1])} or {names[-1]}"


def _lowered(name: str) -> str:
    """"Remove `x`" -> "remove `x`" inside a sentence; a name ("GitHub App", "PAT") keeps its capitals."""
    first = name.split(" ", 1)[0]
    return name[:1].lower() + name[1:] if first[1:].islower() else name


def _checked_after(calls: list[tuple[int, ToolCall]], at: int) -> bool:
    """A check (tests, lint, build, type check) ran and passed after event `at`."""
    return any(i > at and not call.is_error and call.name == "Bash"
               and commands.checks(str(call.input.get("command", ""))) for i, call in calls)


def _resolved(said: str, later: str, calls: list[tuple[int, ToolCall]], at: int) -> bool:
    """A check left undone that a passing check or a later report did; a temporary file later removed."""
    lowered = said.lower()
    if _TEMP_RE.search(lowered):
        return bool(_CLEANED_RE.search(later)) or any(
            i > at and re.search(r"\brm\b", str(call.input.get("command", ""))) for i, call in calls)
    if _UNCHECKED_RE.search(lowered):
        return _checked_after(calls, at) or bool(_PASSED_RE.search(later))
    return False


def offers_not_taken(events: list[Event], before: int) -> list[str]:
    """Offers to commit, push or open a PR ("Would you like me to commit these changes?") made before event
    `before` (the last message's own questions are read with it) that the user's next prompt did not take up
    and no later command carried out."""
    found: list[str] = []
    for index, event in enumerate(events[:before]):
        if event.kind != "assistant" or "?" not in event.text:
            continue
        reply = next((e for e in events[index + 1:] if e.kind in ("user", "assistant")), None)
        if reply is None or reply.kind != "user" or _YES_RE.match(reply.text.strip()):
            continue
        offers = [(s.text, m) for s in sentences(event.text) if (m := _OFFER_RE.match(s.text))]
        if not offers:
            continue
        done = {verb for e in events[index + 1:] if e.tool is not None and e.tool.name == "Bash"
                and not e.tool.is_error for verb in _actions(str(e.tool.input.get("command", "")))}
        for text, offer in offers:
            wanted = {verb for verb in ("commit", "push") if verb in text.lower()} or {"pr"}
            if wanted - done:
                found.append("Offered, not taken: " + clause(offer.group(1).rstrip("?"), 14))
    return list(dict.fromkeys(found))


def _actions(command: str) -> set[str]:
    verbs = {step.verb for step in commands.git_steps(command)}
    return (verbs & {"commit", "push"}) | ({"pr"} if commands.opens_pr(command) else set())


def caveats(events: list[Event], before: int) -> list[str]:
    """The caveats the agent named before event `before` (the last turn reads its own), in its messages or in
    what it posted on GitHub, that no later message or passing check resolved: the last `MAX_CAVEATS` of them."""
    calls = [(i, e.tool) for i, e in enumerate(events) if e.tool is not None]
    messages = [(i, e.text) for i, e in enumerate(events) if e.kind == "assistant" and e.text]
    found: list[tuple[int, str]] = []
    for position, (index, text) in enumerate(messages):
        lowered = text.lower()
        if index >= before or not any(piece in lowered for piece in _CAVEAT_PIECES):
            continue
        for sentence in sentences(text):
            said = sentence.text
            if said.endswith("?") or _ANNOUNCED_RE.match(said) or not CAVEAT_RE.search(said):
                continue
            if _resolved(said, " ".join(t for _, t in messages[position + 1:]), calls, index):
                continue
            found.append((index, "Caveat: " + clause(said)))
    for index, call in calls:
        posted = _POSTED_RE.search(str(call.input.get("command", ""))) if call.name == "Bash" else None
        if posted is None or index >= before or call.is_error:
            continue
        later = " ".join(t for i, t in messages if i > index)
        found += [(index, "Caveat (PR reply): " + clause(s.text)) for s in sentences(posted.group(2))
                  if CAVEAT_RE.search(s.text) and not _resolved(s.text, later, calls, index)]
    return list(dict.fromkeys(text for _, text in sorted(found, key=lambda f: f[0])))[-MAX_CAVEATS:]

def _steps_listed(text: str) -> list[str]:
    """The steps of the list that ends the message, when the sentence before it proposes them (at least two)."""
    found = sentences(text)
    items: list[str] = []
    index = len(found) - 1
    while index >= 0 and found[index].listed:
        items.insert(0, found[index].text)
        index -= 1
    return items if len(items) >= 2 and index >= 0 and _PROPOSED_RE.search(found[index].text) else []


def steps_not_taken(events: list[Event]) -> list[str]:
    """Steps the agent proposed in a list that closes a message, when the user's reply took only a part ("let's
    first fix the bug with CWD"): the steps whose code names no later edit touched and whose words the reply
    does not share."""
    found: list[str] = []
    for index, event in enumerate(events):
        if event.kind != "assistant" or not event.text:
            continue
        reply = next((e for e in events[index + 1:] if e.kind in ("user", "assistant")), None)
        if reply is None or reply.kind != "user" or not _PICKED_RE.match(reply.text.strip()):
            continue
        steps = _steps_listed(event.text)
        if not steps:
            continue
        edited = " ".join(str(e.tool.input.get(key, "")) for e in events[index + 1:] if e.tool is not None
                          for key in ("old_string", "new_string", "content"))
        asked = _content(reply.text)
        for step in steps:
            names = re.findall(r"`([^`]+)`", step)
            if any(name.strip("()") in edited for name in names) or len(_content(step) & asked) >= 2:
                continue
            found.append("Not taken: " + clause(step, 14))
    return list(dict.fromkeys(found))[:MAX_STEPS_LEFT]


def _content(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2 and w not in _DANGLING}
