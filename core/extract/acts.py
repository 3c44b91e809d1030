"""Choices the session made by acting rather than by saying, each with the reason the agent gave right before the act:
the files it staged for a commit apart from other changes it left out (the session facts' `Facts.parted`: "Staged
only `hooks.go` for the commit, left `settings.json` out: ..."), and the files it put back as committed (`git
checkout -- <files>`, `git restore <files>`: "Reverted `strategy/`: ..."), and the review agents it ran side by side
("Ran six review agents in parallel: architecture strategist, security sentinel, ..."). A reader of the whole session
sees these in the commands; a reader of the agent's prose alone does not. A staging or a revert with no reason said
beside it is left out: the line names a choice, not a step; how a review was split is the choice itself.
"""

from __future__ import annotations

import re

from eywa.core.extract.claude_words import sentences
from eywa.core.extract.commands import GitStep, git_steps, paths_in, restored
from eywa.core.extract.facts import Facts, not_in, session_facts
from eywa.core.extract.marks import counted
from eywa.core.extract.said_left import clause
from eywa.core.session import SUBAGENT_TOOLS, Session

# "unrelated changes", "relevant to this change", "local dev state", "pre-existing ... I shouldn't have touched", "a
# separate commit": why some changes stay out of a commit, or go back
_APART_RE = re.compile(r"\b(?:unrelated|relevant|irrelevant|separate(?:ly)?|local|pre-existing|shouldn't|should not|"
                       r"accidental(?:ly)?|unintended|inadvertent(?:ly)?|by mistake|stray|intentional(?:ly)?|"
                       r"not (?:part of|related|needed|mine|meant|from (?:my|this|these)))\b", re.IGNORECASE)
# "Let me restore them:", "Let me commit.", "All tests pass.": the step announced or where the work stands, no reason
_NO_REASON_RE = re.compile(r"^(?:(?:now|ok(?:ay)?|good|great|perfect)[,.]?\s+)?(?:let me|let's|i'll|i will|now)\b"
                           r"(?!.*\b(?:since|because|which|not)\b)|\b(?:pass(?:es|ed)?|green|clean)\.?$", re.IGNORECASE)
# `strategy/`, `validators_test.go`: a checkout's argument that names files, not a branch (`fix/enable-agent-flag`)
_PATH_RE = re.compile(r"/$|\.[A-Za-z]\w{0,5}$")
REASON_WORDS = 30  # words of the reason kept: a line a phone shows on two or three lines
NAMES_SHOWN = 3  # files named on a line, the rest counted
# "Since this is a Go CLI project, I'll skip the Rails-specific reviewers": why the review agents are these
_WHY_RE = re.compile(r"\b(?:since|because)\b", re.IGNORECASE)
_PICKED_RE = re.compile(r"\b(?:skip|only|focus|instead|relevant)\b", re.IGNORECASE)
_COUNTS = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")  # as a reader writes them


def _reason(text: str) -> str:
    """What the message before an act says of why: its last prose sentences (two at most, not a list's lines, not
    the step announced), when one says why some changes stand apart; "" otherwise."""
    said = [s.text for s in sentences(text) if not s.listed and not _NO_REASON_RE.search(s.text)][-2:]
    if not any(_APART_RE.search(sentence) for sentence in said):
        return ""
    return clause(" ".join(said), REASON_WORDS)


def _names(paths: list[str]) -> str:
    """`a.go`, `b.go`, `c.go` and 2 more: each file by its name."""
    names = list(dict.fromkeys(f"`{path.rstrip('/').rsplit('/', 1)[-1]}{'/' if path.endswith('/') else ''}`"
                               for path in paths))
    return counted(names, NAMES_SHOWN)


def _restored(step: GitStep) -> list[str]:
    """The files a git step puts back as committed (`restored`), or that `checkout <files>` with no `--` does when each
    argument reads as a file, not a branch."""
    if named := restored(step):
        return named
    words = step.args.split()
    named = paths_in(step.args) if step.verb == "checkout" and not any(w.startswith("-") for w in words) else []
    return named if named and all(_PATH_RE.search(name) for name in named) else []


def _reviewers(calls: list[dict], before: str) -> str:
    """The review agents one message launched together, by kind ("entire-engineering:review:security-sentinel" ->
    "security sentinel"), with the reason said before them; "" for fewer than two, or for agents not reviewing."""
    kinds = [str(call.get("subagent_type") or "") for call in calls]
    if len(kinds) < 2 or not any("review" in kind for kind in kinds):
        return ""
    count = _COUNTS[len(kinds) - 2] if len(kinds) - 2 < len(_COUNTS) else str(len(kinds))
    names = list(dict.fromkeys(kind.rsplit(":", 1)[-1].replace("-", " ") for kind in kinds))
    named = ": " + ", ".join(names) if len(names) > 1 else ""
    why = next((s.text for s in sentences(before) if not s.listed and _WHY_RE.search(s.text)
                and _PICKED_RE.search(s.text)), "")
    return f"Ran {count} review agents in parallel{named}" + (f" ({clause(why, REASON_WORDS).rstrip(':.')})" if why
                                                              else "")


def acted_choices(session: Session, facts: Facts | None = None) -> list[tuple[int, str]]:
    """The files staged apart and the files reverted, each a line with the reason said before it, and the review
    agents launched side by side, each with the number of agent messages before it (its place in the session). What a
    commit left out is the session's `facts`' (worked out when not given); the files its Open Threads line names are
    not named again."""
    facts = facts if facts is not None else session_facts(session)
    found: list[tuple[int, str]] = []
    said = 0
    before = ""  # the agent's message since the last prompt, before the act
    staged: list[str] = []
    launched: list[dict] = []  # the subagents of the message being read, launched side by side
    for at, event in enumerate(session.events):
        call = event.tool
        if call is not None and call.name in SUBAGENT_TOOLS and not call.rejected:
            launched.append(call.input)
            continue
        if launched and (event.kind in ("assistant", "user") and event.text or call is not None):
            if line := _reviewers(launched, before):
                found.append((said, line))
            launched = []
        if event.kind == "assistant" and event.text:
            said, before = said + 1, event.text
            continue
        if event.kind == "user" and event.text:
            before = ""
            continue
        if call is None or call.name != "Bash" or call.is_error or call.rejected:
            continue
        for step in git_steps(str(call.input.get("command", ""))):
            if step.verb == "add":
                staged += paths_in(step.args)
            elif step.verb == "commit":
                if (left := facts.parted.get(at, [])) and (reason := _reason(before)):
                    named = not_in(left, facts.left_out)
                    found.append((said, f"Staged only {_names(staged)} for the commit, left "
                                        f"{_names(named) if named else 'the rest'} out: {reason}"))
                staged = []
            elif (put_back := _restored(step)) and (reason := _reason(before)):
                found.append((said, f"Reverted {_names(put_back)}: {reason}"))
    if line := _reviewers(launched, before):  # the session ended on them
        found.append((said, line))
    return found
