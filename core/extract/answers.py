"""What a session that changed nothing found out: for each question asked, the first sentence(s) of the agent's last
reply to it, as a reader on a phone asks for it ("what did we find out about X"). A yes or no said outright is the
answer wherever the reply puts it; else its first sentence of prose that is no greeting, lead-in or step announced.
"""

from __future__ import annotations

import re
from collections import Counter

from eywa.core.extract.claude_words import Sentence, outcome, sentences
from eywa.core.handoffs.fixed_words import ANSWER, ASKED_AGAIN, ASKED_FIRST, UNCHECKED
from eywa.core.session import Session

# "**Yes**, `claude -p` can use ...", "No, the hook ...": the answer to a yes-or-no question said outright
_VERDICT_RE = re.compile(r"^(?:yes|no)\b[,.!:;—–-]?\s+\S", re.IGNORECASE)
# "Got it.", "Sure, let's discuss.", "Let me check ...", "I'll look ...", "Here's an overview of ...:", "I think I
# understand the issue now.", "Ready to merge when you are.": a reply's opening or closing offer that answers nothing
_OPENING_RE = re.compile(r"^(?:(?:got it|sure|great|perfect|good|ok|okay|thanks|thank you|understood|alright|"
                         r"good question|excellent|interesting)\b[^.!]{0,30}[.!]$|(?:let me|let's|i'll|i will|"
                         r"i'm going to|i need to|now i|i think i (?:understand|see|have)|here(?:'s| is| are)|ready to|"
                         r"want me to|would you like|shall i|should i)\b)", re.IGNORECASE)
_MIN_WORDS = 5
_VERDICT_LEAD_WORDS = 8  # "Yes, there are alternative approaches:": a shorter verdict leading into a list names it only
# "Based on my own context ...", "I couldn't verify ...": the session says the answer rests on nothing it checked
_OWN_KNOWLEDGE_RE = re.compile(r"\bbased on my own\b|\bfrom (?:my own |my )?(?:memory|training)\b|"
                               r"\b(?:could not|couldn't|can't|cannot|unable to|wasn't able to|was not able to) "
                               r"(?:verify|confirm|check|test|access)\b|\bunverified\b", re.IGNORECASE)
_VERDICTS = 2  # yes-or-no sentences read as one answer ("Yes, WebSearch ...", "Yes, Task supports Haiku ...")
# "Yes, Task supports Haiku via `model` - explicitly recommended for ...": a second verdict's aside, left out for room
_DASH_ASIDE_RE = re.compile(r"\s[—–-]\s")


def _prose(found: tuple[Sentence, ...]) -> str | None:
    """The reply's first sentence of prose that answers: no list item, lead-in, question back, greeting or step."""
    return next((s.text for s in found if not s.listed and s.text.endswith((".", "!"))  # "**Option 1: ...**": a label
                 and len(s.text.split()) >= _MIN_WORDS and not _OPENING_RE.match(s.text)), None)


def answer_of(reply: str, chars: int) -> str | None:
    """A reply's answer: its yes-or-no sentences (a second only when it fits in `chars`, its aside left out), else its
    first sentence of prose that answers."""
    found = sentences(reply)
    verdicts = [s.text.rstrip(":") for s in found if _VERDICT_RE.match(s.text)
                and not (s.text.endswith(":") and len(s.text.split()) < _VERDICT_LEAD_WORDS)][:_VERDICTS]
    if not verdicts:
        return _prose(found)
    said = verdicts[0].rstrip(".!") + "."
    second = _DASH_ASIDE_RE.split(verdicts[1])[0].rstrip(".!") + "." if len(verdicts) > 1 else ""
    return f"{said} {second}" if second and len(said) + len(second) < chars else said


def answers(session: Session, chars: int) -> list[tuple[int, str]]:
    """(event index of the reply, line) of each prompt's answer, for a session that changed no file: its last reply
    before the next prompt that `answer_of` reads one in (in `chars`; an earlier one when the last only offers more);
    none where that sentence reports work done (an outcome); a question asked twice says so on both answers, and an
    answer the reply says rests on nothing checked says that."""
    found: list[tuple[str, int, str]] = []  # (the prompt's words, reply, answer)
    prompt, replies = "", list[int]()

    def close() -> None:
        said = next(((i, text) for i in reversed(replies) if (text := answer_of(session.events[i].text, chars))), None)
        if prompt and said and not outcome(said[1]):  # "Moved it; the signature passes": a report, What Happened's own
            found.append((prompt, *said))

    for index, event in enumerate(session.events):
        if event.kind == "user" and event.text:
            close()
            prompt, replies = " ".join(event.text.lower().split()), []
        elif event.kind == "assistant" and event.text:
            replies.append(index)
    close()
    times = Counter(asked for asked, _, _ in found if len(asked.split()) >= _MIN_WORDS)  # not "ok", "continue"
    seen: set[str] = set()
    lines: list[tuple[int, str]] = []
    for asked, reply, said in found:
        label = ANSWER if times[asked] < 2 else ASKED_AGAIN if asked in seen else ASKED_FIRST
        hedge = f" {UNCHECKED}" if _OWN_KNOWLEDGE_RE.search(session.events[reply].text) else ""
        lines.append((reply, f"{label}{hedge}: {said}"))
        seen.add(asked)
    return lines
