"""Checks the agent's closing says it did not run, in the words Codex and Gemini close a report with ("Tests not
run.", "**Testing:** not run (pytest is not installed here)", "I didn't run the tests.", a "**Testing**" section
whose item is "- Not run (not requested)"), and checks it hands to the person ("To verify, run `pytest`."). Each
is one clause on a "Not run:" line; which kinds of check it speaks of, so that a run of that kind after the last
edit makes it a note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from eywa.core.extract import commands
from eywa.core.extract.claude_words import Sentence
from eywa.core.extract.said_left import ASIDE_LEAD, CHECK_HANDED_RE, clause
from eywa.core.handoffs.fixed_words import KIND_WORDS, NOT_RUN

_WHY_WORDS = 14  # of the reason given: the thread is one clause
# What the sentence says was not run: tests of a kind ("unit tests", "the test suite"), or checks of any kind
_CHECK_NOUN = r"(?:the |any )?(?:[\w-]+ )?(?:test suite|tests?|testing|verification|checks?)\b"
# "Tests not run.", "Tests were not run yet", "Testing: not run (pytest is not installed here)", "Note: I didn't run the
# test suite", "I did not run any tests": the check, then what follows it (why); each alternative anchored at the start
_NOT_RUN_RE = re.compile(rf"^(?:(?:{ASIDE_LEAD}|caveat)\s*:\s*)?(?:(?P<said>{_CHECK_NOUN})"
                         r"(?:\s*[:—–]\s*|\s+-\s+|\s+)(?:(?:were|was|have|has) )?"
                         r"(?:not|(?:weren|wasn|haven|hasn)['’]t) (?:yet )?(?:been )?(?:run|executed)|"
                         rf"i (?:did not|didn't|didn’t) (?:yet )?run (?P<ran>{_CHECK_NOUN}))"
                         r"(?: yet)?\b(?P<why>.*)$", re.IGNORECASE)
# An item under a "Testing" or "Verification" lead ("**Testing**", "### Testing", "Tests:"): "- Not run (not requested)"
_SECTION_RE = re.compile(r"^(?:tests?|testing|verification|validation|checks)\s*:?$", re.IGNORECASE)
_ITEM_RE = re.compile(r"^not (?:yet )?run\b(?!\s*+[:—–-]?\s*+(?:none|nothing|n/a)\b)(?P<why>.*)$", re.IGNORECASE)
# "To verify, run `pytest tests/test_retry.py`.": a check handed to the person, the purpose first
_TO_VERIFY_RE = re.compile(r"^to (?P<purpose>verify|test|check|confirm)(?: (?:it|this|that|the (?:change|fix)))?,\s*"
                           r"(?P<step>(?:run|try|open) \S.*?)[.!]?$", re.IGNORECASE)
_RUN_CODE_RE = re.compile(r"^run\s+(?=`)", re.IGNORECASE)  # "run `pytest`": the line's "Not run:" says the verb
_TESTS_RE = re.compile(r"\btest", re.IGNORECASE)  # tests of a kind; "checks", "verification": of any kind
_CODE_SPAN_RE = re.compile(r"`([^`]+)`")
_TESTS_WORD_RE = re.compile(r"\btests?\b", re.IGNORECASE)
_PLAIN_NOUN = frozenset("the any test tests suite testing verification check checks".split())


@dataclass(frozen=True)
class NotRun:
    thread: str  # "Not run: tests (pytest is not installed here)"
    kinds: frozenset[str]  # the kinds of check it speaks of
    qualified: bool  # it names which ("integration tests", "the full test suite"): a run of its kind may be another


def not_run(found: tuple[Sentence, ...], index: int) -> NotRun | None:
    """The check the sentence at `index` says was not run, on a line of its own or as the item of a Testing section;
    None for any other sentence."""
    text = found[index].text.rstrip(".")
    said = _NOT_RUN_RE.match(text)
    if said is not None:
        noun, why = said.group("said") or said.group("ran"), said.group("why")
    elif (item := _ITEM_RE.match(text) if found[index].listed else None) is not None:
        lead = next((s for s in reversed(found[:index]) if not s.listed), None)  # "**Testing**", else its heading
        section = found[index].heading if lead is None or lead.heading != found[index].heading else lead.text
        noun = section.strip(" *#:")
        why = item.group("why")
        if not _SECTION_RE.match(noun):
            return None
    else:
        return None
    kinds = frozenset({"tests"} if _TESTS_RE.search(noun) else KIND_WORDS)
    return NotRun(_thread(noun, why), kinds, bool(set(noun.lower().split()) - _PLAIN_NOUN))


def _thread(noun: str, why: str) -> str:
    """"Not run: tests (not requested)": the check by its noun ("testing" is the tests), and the reason as given."""
    noun = re.sub(r"\btesting\b", "tests", noun, flags=re.IGNORECASE)
    noun = noun[:1].lower() + noun[1:]
    why = why.strip(" .;,:—–-")
    if why and not why.startswith("("):
        why = f"({why})"
    return clause(f"{NOT_RUN} {noun} {why}".rstrip(), _WHY_WORDS + 4)


def handed_check(text: str) -> str | None:
    """"Run `pytest` to confirm everything passes", "To verify, run `pytest x.py`" -> the step handed to the person, as
    "`pytest x.py` to verify" (the line says "Not run:"); None for any other sentence."""
    first = _TO_VERIFY_RE.match(text)
    handed = CHECK_HANDED_RE.search(text) if first is None else None
    if first is not None:
        step = f"{first.group('step')} to {first.group('purpose').lower()}"
    elif handed is not None and handed.group(2):  # "You can run ...": a step the closing's "Next:" line says
        step = handed.group(2)
    else:
        return None
    return _RUN_CODE_RE.sub("", step)


def handed_kinds(step: str) -> frozenset[str]:
    """The kinds of check a step handed to the person runs (`pytest` in "run `pytest` to confirm"), by its code, else
    by its words ("run the tests"): none for a manual check ("open the app to verify")."""
    code = _CODE_SPAN_RE.findall(step)
    if code:
        return frozenset(check.kind for command in code for check in commands.checks(command))
    return frozenset({"tests"}) if _TESTS_WORD_RE.search(step) else frozenset()
