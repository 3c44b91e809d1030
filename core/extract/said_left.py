"""What the agent said is left, in its own words, for any agent: a labelled next-step line ("Next: add
backoff(attempt)", "TODO: ...", "Remaining: ..."), options it offered with no choice made ("Decide: remove
`t.Parallel()` or pass the path"), offers passed over, proposed steps not taken, a review's findings not taken
up (the caveats it named in passing: core/extract/caveats.py). Each is one short clause: a thread is read on a
phone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from eywa.core.extract import commands
from eywa.core.extract.claude_words import Sentence, sentences
from eywa.core.extract.marks import DANGLING, balanced, clause_end, typed
from eywa.core.handoffs.fixed_words import (
    DECIDE,
    DEFERRED,
    LATER,
    MERGE_LEFT,
    NEXT,
    NOT_FIXED,
    NOT_RUN,
    NOT_TAKEN,
    OFFER_NOT_TAKEN,
    REVIEW_FILE_LEFT,
)
from eywa.core.retrieval.query_tokens import content_words
from eywa.core.session import SUBAGENT_TOOLS, WRITE_TOOLS, Event, ToolCall

THREAD_WORDS = 24  # one clause of a thread: more reads as a run-on
# "Note:", "Important:", "Heads up:" before a closing line: a lead its thread's kind ("Caveat:", "Next:") says better
ASIDE_LEAD = r"(?:note|important|heads[- ]up)"
# "Next steps: none", "Known issues: n/a": a label followed by these says nothing is left
NOTHING = r"(?:none|nothing|n/a)\b"

# "Next: add backoff(attempt) to the retry loop", "TODO - wire the flag", "Still to do: ..."
NEXT_LINE_RE = re.compile(r"^(?:next(?: steps?| up)?|to-?dos?|remaining(?: work)?|still to do|left to do|follow-?ups?|"
                          r"what(?:'s|’s| is) left|open questions?|open items?|outstanding|(?:one |a )?leftovers?|"
                          r"not (?:yet )?done(?: yet)?|pending)"
                          r"\s*(?::|—|–| - )\s*"
                          rf"(?!{NOTHING})(\S.{{4,}})$", re.IGNORECASE)
# "Option 1: Remove `t.Parallel()` (simplest fix)", "Approach B - ..."
_OPTION_RE = re.compile(r"^(?:option|approach|alternative|choice)\s+(?:\w{1,2}|one|two|three)\s*(?::|\.|\)|—|–| - )\s*"
                        r"(\S.+)$", re.IGNORECASE)
_OWN_OPTIONS = r"\bor (?:should|would) (?:i|we|you)\b"  # "should X stay, or would you like me to ...?": both options
_WHICH_RE = re.compile(r"\b(?:which|what) (?:approach|option|one|way|fix|direction|alternative)s?\b|"
                       rf"\bprefer\b|\bwhich (?:do|would|should)\b|{_OWN_OPTIONS}", re.IGNORECASE)
_OWN_OPTIONS_RE = re.compile(_OWN_OPTIONS, re.IGNORECASE)
_NUMBERED_RE = re.compile(r"^(?:or\s+)?(.+)$", re.IGNORECASE)
# "Would you like me to", "Want me to", "Shall I": how the agent puts a step to the user
ASK_PREFIX = r"(?:(?:would|do) you (?:like|want) me to|want me to|shall i|should i)"
# "Would you like me to commit these changes?", "Want me to open a PR?": an offer of a step the record can show done
_OFFER_RE = re.compile(rf"^{ASK_PREFIX}\s+((?:also |now |go ahead and )?(?:commit|push|(?:open|create|submit|raise)\b"
                       r".{0,40}?\b(?:pr|pull request))\b.*\?)$", re.IGNORECASE)
# The words a reply says yes with ("yep do it", "sounds good"), for each reader of a reply
YES_WORDS = r"(?:y|yes|yep|yeah|sure|ok(?:ay)?|go ahead|do it|please(?: do)?|lgtm|sounds good|proceed)"
YES_RE = re.compile(rf"^{YES_WORDS}\b", re.IGNORECASE)
# "no, leave it uncommitted, I'll review the diff tomorrow": an offer the person turned down, not one passed over
NO_WORDS = r"(?:no|nope|nah|not (?:now|yet)|don't|do not|leave it)"
_NO_RE = re.compile(rf"^{NO_WORDS}\b", re.IGNORECASE)
# "The most impactful refactoring would be:", "I'd recommend:", "Next steps:": a list of steps the agent proposes
_PROPOSED_RE = re.compile(r"\b(?:recommend(?:ed|ations?)?|suggest(?:ed|ions?)?|would be|next steps?|most impactful|"
                          r"improvements?|could (?:also )?(?:do|add|refactor))\b[^.]*:$", re.IGNORECASE)
# "let's first fix the bug with CWD", "just do 2", "start with the docs": the user took a part of them; "first" and
# "start with" put the rest off (group 1), "just" and "only" leave it out
_PICKED_RE = re.compile(r"^(?:ok(?:ay)?[,.]?\s+)?(?:(?:let'?s|lets|please|can you|go ahead and)\s+)?"
                        r"(?:(first|start with)|just|only)\b", re.IGNORECASE)
MAX_STEPS_LEFT = 4


def clause(text: str, words: int = THREAD_WORDS) -> str:
    """At most `words` words, ending at the last clause end inside them (outside a code span or quotation) when one
    keeps half of them; no mark left open (`balanced`)."""
    text = " ".join(text.split()).rstrip()
    parts = text.split(" ")
    if len(parts) <= words:
        return text
    cut = " ".join(parts[:words])
    end = clause_end(cut, words // 2)
    return balanced((cut[:end] if end >= 0 else cut).rstrip(" ,;:-")) + "…"


# "Next, I would add backoff(attempt) ...", "Next I'd suggest adding ...": the step the agent would take next (Codex's
# and Gemini's closing), not one it took ("Next, I added ...") nor one it announces ("Next, I'll ...")
_WOULD_NEXT_RE = re.compile(r"^next,?\s+(?:i(?:'d|’d| would)|we(?:'d|’d| would| should)|i (?:suggest|recommend))\s+"
                            r"(?:(?:suggest|recommend)(?:ing)?\s+(?:that\s+)?(?:we\s+|you\s+)?)?(\S.{4,})$",
                            re.IGNORECASE)
# "The next step is to add backoff(attempt) ...", "The remaining step would be wiring ...": not one done ("The last step
# is done") nor one the agent takes ("The next step is what I'll do now")
_STEP_IS_RE = re.compile(r"^(?:the |one )?(?:next|remaining|only remaining|last|final) steps? "
                         r"(?:is|would be|will be)\s+(?!(?:done|complete|completed|finished|in place|what)\b)"
                         r"(?:to\s+)?(\S.{4,})$", re.IGNORECASE)

# "Suggested next step: ...", "Possible next steps: ...": what may follow, not what is owed
_SUGGESTED_NEXT_RE = re.compile(r"^(?:suggested|recommended|possible|proposed|optional)\s+next\s+steps?\s*(?::|—|–| - )"
                                rf"\s*(?!{NOTHING})(\S.{{4,}})$", re.IGNORECASE)


def labelled_step(text: str) -> str | None:
    """"Next: add backoff(attempt) ...", "Next, I would add backoff(attempt) ..." and "The next step is to add
    backoff(attempt) ..." -> "Next: add backoff(attempt) ..."; "Suggested next step: ..." -> "Later: ..."; None for
    any other sentence."""
    text = text.strip(" *_")
    if suggested := _SUGGESTED_NEXT_RE.match(text):
        return f"{LATER}: {clause(suggested.group(1))}"
    match = NEXT_LINE_RE.match(text) or _WOULD_NEXT_RE.match(text) or _STEP_IS_RE.match(text)
    return f"{NEXT}: {clause(match.group(1))}" if match else None


# "from these specific fields", "for this case": a tail pointing back at what the message named, naming nothing; after
# the last code span only, each run of spaces tried from its start: linear on a long name
_POINTING_TAIL_RE = re.compile(r"(?<!\s)\s++(?:from|for|in|on|of|to|with)\s++(?:these|this|those|that|them|it)\b",
                               re.IGNORECASE)


def _option_name(text: str) -> str:
    """An option's name: its first clause, at most 8 words, never ending on a dangling word or, when cut, on a
    purpose cut short ("a sentinel value like -1 to mean")."""
    cut = clause(text, 8)
    name = re.split(r"\s\(|[—–:]\s| - ", cut.rstrip(".…"), maxsplit=1)[0].strip()
    tail = _POINTING_TAIL_RE.search(name, name.rfind("`") + 1)  # "remove `omitempty` from these specific fields"
    name = name[:tail.start()] if tail else name  # what is removed
    words = name.split()
    if cut.endswith("…") and len(words) > 3 and words[-2].lower() == "to" and "`" not in words[-1]:
        words = words[:-2]
    while len(words) > 2 and (words[-1].lower() in DANGLING or words[-1].count('"') % 2):
        words.pop()
    return " ".join(words)


def open_choice(found: tuple[Sentence, ...], index: int, prompt: str = "") -> str | None:
    """"Decide <what>: A or B" when the question at `index` asks which of the options the message offered (labelled
    "Option 1: ...", or a list right before the question); what is decided where the message, or the question it
    answers (`prompt`: "how would we get that PAT?"), names it."""
    if not _WHICH_RE.search(found[index].text):
        return None
    labelled = [(i, m.group(1)) for i in range(index) if (m := _OPTION_RE.match(found[i].text))]
    first = labelled[0][0] if labelled else index
    options = [option for _, option in labelled]
    if len(options) < 2 and _OWN_OPTIONS_RE.search(found[index].text):
        return None  # "should `legacySelection` stay, or would you like me to remove it ...?": its own two
    if len(options) < 2:  # the list the question follows: its items are the options
        end = index
        while end and not found[end - 1].listed:
            end -= 1
        first = end
        while first and found[first - 1].listed:
            first -= 1
        options = [m.group(1) for s in found[first:end] if (m := _NUMBERED_RE.match(s.text))]
    names = [name for option in options[:3] if (name := _option_name(option))]
    if len(names) < 2:
        return None
    names = [_lowered(name) for name in names]
    subject = _choice_subject(found, index, first, prompt)
    return f"{DECIDE}{f' {subject}' if subject else ''}: {', '.join(names[:-1])} or {names[-1]}"


# "Which wording do you prefer for the multi-session warning?" -> "the wording for the multi-session warning"
_WHICH_SUBJECT_RE = re.compile(r"^(?:so,?\s+|and\s+)?(?:which|what)\s+(?!(?:do|would|should|shall|will|could|can)\b)"
                               r"([\w-]+(?: [\w-]+)?)\s+(?:do|would|should|shall|will|could|can)\s+(?:you|we|i)\b"
                               r"(?=[^?]*\?$)", re.IGNORECASE)
# what follows it: "... for the multi-session warning?" (searched apart: one lazy pattern backtracks on a long line)
_FOR_WHAT_RE = re.compile(r"\s(for|of|on|in|to|with)\s([^?]+)", re.IGNORECASE)
# "How should we store the token?", "how would we get that PAT?" -> "how to store the token"
_HOW_SUBJECT_RE = re.compile(r"^(?:so,?\s+)?how\s+(?:do|would|should|shall|can|could)\s+(?:you|we|i)\s+"
                             r"(?:(?:like|want)\s+(?:me\s+|us\s+)?)?(?:to\s+)?([^?]*[^?\s]|[^?])\s*\?$", re.IGNORECASE)
# "Two ways to fix the flaky test:", "## Options for the retry policy", "For the warning, three options:": what the
# options are for
_LEAD_SUBJECT_RE = re.compile(r"\b(?:options?|ways?|approach(?:es)?|choices?|alternatives?|paths?)\s+(?:(to)|for|on)\s+"
                              r"(?!(?:this|that|it|these|those|them|you|me)\b)([^:?]{2,}\w|[^:?]{3})\W*$|"
                              r"^(?:for|on|about|regarding|as for)\s+(?!(?:this|that|it|these|those|now)\b)"
                              r"([^,:?]{3,}?),\s",
                              re.IGNORECASE)
# the words of a choice's subject that name nothing ("the approach to take", "how to proceed", "## Recommendation")
_CHOICE_WORDS = frozenset("approach approaches option options one way ways fix direction alternative alternatives "
                          "path choice choices take use proceed pick choose prefer like want start begin move forward "
                          "implement would should here now next best better summary recommendation recommendations "
                          "proposal proposals analysis plan steps solution solutions".split())
SUBJECT_WORDS = 10  # a subject is a few words: the options are the thread
_ASKED_WORDS = 20  # a question the options answer, not a request of many parts


def _asked_subject(question: str) -> str:
    """"Which wording do you prefer for the multi-session warning?" -> "the wording for the multi-session warning",
    "How should we store the token?" -> "how to store the token"; "" for another sentence."""
    if (which := _WHICH_SUBJECT_RE.match(question)) is not None:
        noun = which.group(1)
        rest = _FOR_WHAT_RE.search(question, which.end())
        return f"the {noun} {rest.group(1)} {rest.group(2)}" if rest is not None else f"the {noun}"
    how = _HOW_SUBJECT_RE.match(question)
    return f"how to {how.group(1)}" if how is not None else ""


def _choice_subject(found: tuple[Sentence, ...], index: int, first: int, prompt: str) -> str:
    """What a choice decides, where it is named: the question ("Which wording do you prefer for the multi-session
    warning?"), else the lead or heading the options (from `first`) sit under ("Two ways to fix the flaky test:"),
    else the user's question they answer ("how would we get that PAT?"); "" when none names anything ("Which
    approach would you prefer?")."""
    question = found[index].text
    said = _asked_subject(question)
    for lead in [found[first - 1].text if first else "", found[first].heading, question]:
        if not _names(said) and (matched := _LEAD_SUBJECT_RE.search(lead)) is not None:
            said = f"how to {matched.group(2)}" if matched.group(1) else f"on {matched.group(2) or matched.group(3)}"
    if not _names(said) and len(prompt.split()) <= _ASKED_WORDS:
        said = _asked_subject(" ".join(prompt.split()))
    heading = found[first].heading.strip(" :")
    if not _names(said) and heading and not heading.endswith("?"):  # a heading is a name
        said = f"on {_lowered(heading)}"
    if not _names(said):
        return ""
    words = clause(said, SUBJECT_WORDS).rstrip(".…").split()
    while words and words[-1].lower() in DANGLING:
        words.pop()
    return " ".join(words)


def _names(subject: str) -> bool:
    return bool(content_words(subject) - _CHOICE_WORDS)


def _lowered(name: str) -> str:
    """"Remove `x`" -> "remove `x`" inside a sentence; a name ("GitHub App", "PAT") keeps its capitals."""
    first = name.split(" ", 1)[0]
    return name[:1].lower() + name[1:] if first[1:].islower() else name




def offers_not_taken(events: list[Event], before: int) -> list[str]:
    """Offers to commit, push or open a PR ("Would you like me to commit these changes?") made before event
    `before` (the last message's own questions are read with it) that the user's next prompt passed over (neither
    took up nor turned down) and no later command carried out."""
    found: list[str] = []
    for index, event in enumerate(events[:before]):
        if event.kind != "assistant" or "?" not in event.text:
            continue
        reply = _answer(events, index)
        if reply is None or YES_RE.match(reply.text.strip()) or _NO_RE.match(reply.text.strip()):
            continue
        offers = [(s.text, m) for s in sentences(event.text) if (m := _OFFER_RE.match(s.text))]
        if not offers:
            continue
        done = {verb for e in events[index + 1:] if e.tool is not None and e.tool.name == "Bash"
                and not e.tool.is_error for verb in _actions(str(e.tool.input.get("command", "")))}
        for text, offer in offers:
            wanted = {verb for verb in ("commit", "push") if verb in text.lower()} or {"pr"}
            if wanted - done:
                found.append(f"{OFFER_NOT_TAKEN} {clause(offer.group(1).rstrip('?'), 14)}")
    return list(dict.fromkeys(found))


# "The changes are ready to be committed whenever you'd like.", "Ready to commit?", "Want me to commit and push
# these?", "If you want, I can commit this": the agent put the commit to the person
_COMMIT_PUT_RE = re.compile(rf"\bready (?:to (?:be )?commit(?:ted)?|for (?:a )?`?(?:git )?commit)\b|"
                            rf"^{ASK_PREFIX}\s+(?:also |now |go ahead and )?commit\b|"
                            r"^commit (?:these|the|this|them|it|now)\b[^.]*\?$|"
                            r"\b(?:if you(?:'d| would)? (?:want|like)|let me know if you(?:'d| would)? (?:want|like))"
                            r"(?: me to|,? i can) commit\b", re.IGNORECASE)


def commit_put_forward(events: list[Event]) -> bool:
    """Whether, after its last edit, the agent said the work is ready to commit or offered to commit it, and no
    commit followed: the edits are left uncommitted by its own word."""
    last_edit = _last_edit(events, -1)
    if last_edit < 0:
        return False
    after = events[last_edit + 1:]
    if any(e.tool is not None and e.tool.name == "Bash" and not e.tool.is_error
           and "commit" in _actions(str(e.tool.input.get("command", ""))) for e in after):
        return False
    return any(_COMMIT_PUT_RE.search(s.text) for e in after if e.kind == "assistant" and e.text
               for s in sentences(e.text))


def _actions(command: str) -> set[str]:
    verbs = {step.verb for step in commands.git_steps(command)}
    return (verbs & {"commit", "push"}) | ({"pr"} if commands.opens_pr(command) else set())


# A tool call the user refused with a word ("the user said:\ndon't run CI, too slow"): a bare refusal is a new request.
_STOPPED_RE = re.compile(r"the user said:\s*(\S.*)", re.DOTALL)


def refusal_words(call: ToolCall) -> str:
    """What the user typed when refusing the call ("the user said: ..."), its spaces made one; "" for none."""
    said = _STOPPED_RE.search(call.error) if call.rejected else None
    return " ".join(typed(said.group(1)).split()) if said else ""


def last_prompt_index(events: list[Event]) -> int:
    """Index of the last thing the user typed (-1 when none): the last turn starts after it."""
    return next((i for i in range(len(events) - 1, -1, -1) if events[i].kind == "user"), -1)


def _next_prompt(events: list[Event], at: int) -> Event | None:
    """The user's next prompt after event `at`, None when the session ended before one."""
    return next((e for e in events[at + 1:] if e.kind == "user"), None)


def _answer(events: list[Event], at: int) -> Event | None:
    """The user's prompt right after the agent's message at `at`; None when the agent spoke again first or the
    session ended."""
    reply = next((e for e in events[at + 1:] if e.kind in ("user", "assistant")), None)
    return reply if reply is not None and reply.kind == "user" else None


def _last_edit(events: list[Event], at: int) -> int:
    """Index of the last edit that went through after event `at`; `at` when none did."""
    return max((i for i in range(at + 1, len(events)) if (call := events[i].tool) is not None
                and call.name in WRITE_TOOLS and not call.is_error), default=at)


def commands_after(events: list[Event], at: int) -> list[str]:
    """The shell commands run after event `at`, failed ones too."""
    return [str(e.tool.input.get("command", "")) for e in events[at + 1:] if e.tool is not None
            and e.tool.name == "Bash"]


def failure_rerun(events: list[Event], at: int) -> bool:
    """Whether the command whose failure the agent wrote of at event `at` (the last of its turn that failed before
    it) later ran through: "I couldn't do a server-side dry run ..." before `kubectl --context kind-staging apply
    --dry-run=server ...` passed."""
    failed: list[str] = []
    for event in reversed(events[:at]):
        if event.kind == "user":
            break
        if event.tool is not None and event.tool.name == "Bash" and event.tool.is_error:
            failed = commands.programs(str(event.tool.input.get("command", "")))
            break
    # its last step, the one that failed, as `_failed_left` reads a command run through
    return bool(failed) and any(
        e.tool is not None and e.tool.name == "Bash" and not e.tool.is_error and not e.tool.rejected
        and commands.named(failed[-1]) in map(commands.named, commands.programs(str(e.tool.input.get("command", ""))))
        for e in events[at + 1:])


def edited_after(events: list[Event], at: int, paths: bool = True) -> str:
    """What the edits after event `at` touched: their paths (unless not `paths`) and the text they replaced and
    wrote."""
    keys = ("file_path", "old_string", "new_string", "content", "edits")[0 if paths else 1:]
    return " ".join(str(e.tool.input.get(key, "")) for e in events[at + 1:] if e.tool is not None
                    and e.tool.name in WRITE_TOOLS and not e.tool.is_error for key in keys)


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
    first fix the bug with CWD": the others put off, not declined; "just do 2"): the steps whose code names no later
    edit touched and whose words the reply does not share."""
    found: list[str] = []
    for index, event in enumerate(events):
        if event.kind != "assistant" or not event.text:
            continue
        reply = _answer(events, index)
        picked = _PICKED_RE.match(reply.text.strip()) if reply is not None else None
        if reply is None or picked is None:
            continue
        steps = _steps_listed(event.text)
        if not steps:
            continue
        edited = edited_after(events, index)
        asked = content_words(reply.text)
        for step in steps:
            names = re.findall(r"`([^`]+)`", step)
            if any(name.strip("()") in edited for name in names) or len(content_words(step) & asked) >= 2:
                continue
            found.append(f"{DEFERRED if picked.group(1) else NOT_TAKEN} {clause(step, 14)}")
    return list(dict.fromkeys(found))[:MAX_STEPS_LEFT]


# A review's list of what it found ("### Issues", "## P3 Findings (Optional Improvements)", "### Recommendations"),
# not a report of what was fixed ("## Issues Fixed"); "findings" only with a severity: "Key Findings" are answers.
_FINDINGS_HEADING_RE = re.compile(r"^(?:#{2,6})\s+(.*\b(?:issues?|concerns?|suggestions?|recommendations|nits?|"
                                  r"(?:suggested|possible|potential|optional|further) improvements?)\b.*|"
                                  r".*\b(?:p\d|critical|important|major|minor|high|medium|low|nice-to-have|optional)\b"
                                  r".*\bfindings?\b.*|.*\bfindings?\b.*\b(?:p\d|critical|important|optional)\b.*)$",
                                  re.IGNORECASE)
_SETTLED_RE = re.compile(r"\b(?:fixed|resolved|addressed|done|applied|completed|summary|synthesis)\b", re.IGNORECASE)
_HEADING_LINE_RE = re.compile(r"^#{1,6}\s+(.+)$", re.MULTILINE)
# each "issues" read up to the next or to a "fixed", possessively: linear on a long heading, the same headings match
_SETTLED_FINDINGS_RE = re.compile(r"\b(?:issues?|findings?|concerns?|feedback)\b(?:(?!\b(?:issues?|findings?|concerns?|"
                                  r"feedback|fixed|resolved|addressed)\b).)*+\b(?:fixed|resolved|addressed)\b",
                                  re.IGNORECASE)
_HEADING_LEVEL_RE = re.compile(r"^(#{1,6})\s+(.*)$")
# One finding: a numbered heading under the section ("#### 1. `x` is never reset"), a bold line ("**2. Commit message
# could be more descriptive**"), a list item of the section's own level ("1. Fix the panic in `id.Generate()`").
_FINDING_ITEM_RE = re.compile(r"^(?:\d+[.)]|[-*])\s+(.+)$")
_BOLD_ITEM_RE = re.compile(r"^\*\*(?:\d+[.)]\s+)?([^*]{6,}?)\*\*(.*)$")
_NO_ISSUE_RE = re.compile(r"✅|\b(?:non-issue|not an issue|no action|no change needed|just noting|good|cleaner|useful|"
                          r"strengths?)\b", re.IGNORECASE)
# Code, not a word: camelCase, snake_case, a call, a path ("Agent" is a word the fix's code may hold for any reason)
_CODE_LIKE_RE = re.compile(r"[a-z][A-Z]|[_./()]|\w\d")
_BARE_NAME_RE = re.compile(r"\b[A-Za-z]\w*(?:[a-z][A-Z]|_)\w*\b")
_NUMBER_RE = re.compile(r"^(\d+)[.)]\s+")
_SHORT_REPLY = 20  # words of a reply that picks findings by number
_PICK_RE = re.compile(r"\b(\d{1,2})(?:\s*(?:-|to)\s*(\d{1,2}))?\b")
_FILE_NAME_RE = re.compile(r"\.\w{1,5}(?::[\d-]+)?$")
# "yes", "fix them all": the user took every finding up
_ALL_RE = re.compile(r"\b(?:all|them|these|everything)\b", re.IGNORECASE)
_CODE_NAME_RE = re.compile(r"`([^`\s]{3,80})`")
_LOCATION_RE = re.compile(r"^`?[\w./-]+\.\w{1,5}(?::[\d-]+)?`?\s*(?:—|–|-|:)\s*")
MAX_FINDINGS = 6


def _findings(text: str) -> list[tuple[str, str]]:
    """(title, body) of each finding a review message lists under a heading of issues, findings or suggestions: the
    items of one kind under it or under each of its subheadings (bold lines, numbered items or bullets: the first
    item's kind), else each subheading with what follows it ("#### 1. `x` is never reset")."""
    groups: list[tuple[str, list[tuple[str, str, str]]]] = []  # (subheading, [(kind, title, body)])
    level = 0  # the findings heading's level; 0: not under one
    header: list[str] = []  # the cells of the last table's header row, lowercased
    lines = _CODE_FENCE_RE.sub("\n", text).splitlines()
    for number, line in enumerate(lines):
        stripped = line.strip()
        heading = _HEADING_LEVEL_RE.match(stripped)
        depth = len(heading.group(1)) if heading else 0
        if heading and level and depth > level:
            groups.append((heading.group(2), []))
            continue
        if heading:
            level = depth if _FINDINGS_HEADING_RE.match(stripped) and not _SETTLED_RE.search(stripped) else 0
            if level:
                groups.append(("", []))
            continue
        if level and stripped.startswith("|"):  # a table of findings ("| Issue | Location | Description |")
            cells = [cell.strip() for cell in stripped.strip("|").split("|")]
            below = lines[number + 1].strip() if number + 1 < len(lines) else ""
            if _TABLE_RULE_RE.match(below) and "-" in below:
                header = [cell.lower() for cell in cells]
            elif not _TABLE_RULE_RE.match(stripped) and (row := _table_row(cells, header)) is not None and \
                    (not groups[-1][1] or groups[-1][1][0][0] == "row"):  # items are all of the first one's kind
                groups[-1][1].append(("row", *row))
            continue
        if not level or not stripped or set(stripped) <= set("-=*_ "):
            continue
        bold = _BOLD_ITEM_RE.match(stripped)
        listed = _FINDING_ITEM_RE.match(line)
        kind, title = ("bold", bold.group(1)) if bold else \
            ("numbered" if line[:1].isdigit() else "bullet", listed.group(1)) if listed else ("", stripped)
        items = groups[-1][1]
        if kind and (not items or items[0][0] == kind):
            items.append((kind, title, ""))
        elif items:
            items[-1] = (*items[-1][:2], f"{items[-1][2]} {stripped}".strip())
        else:
            items.append(("", "", stripped))
    found = []
    for subheading, items in groups:
        if items and items[0][0]:
            found += [(title, body) for _, title, body in items]
        elif subheading:
            found.append((subheading, " ".join(body for _, _, body in items)))
    return [(title.replace("**", "").strip(" :"), body) for title, body in found]


_TABLE_RULE_RE = re.compile(r"^[\s:|-]+$")
_CELL_NUMBER_RE = re.compile(r"^(?:#?\d+|p\d|critical|high|medium|low|minor|major)$", re.IGNORECASE)
_WORDS_OF_BODY = 4  # a cell that describes, not a location or a severity
_TITLE_COLUMN_RE = re.compile(r"\b(?:issues?|findings?|problems?|concerns?|bugs?|risks?|suggestions?|title)\b")
_BODY_COLUMN_RE = re.compile(r"\b(?:description|details?|why|impact|explanation|notes?|problem|fix|recommendation)\b")
_STATUS_COLUMN_RE = re.compile(r"\b(?:status|state|resolution|fixed)\b")
_FIXED_CELL_RE = re.compile(r"✅|^\W*(?:already )?(?:fixed|resolved|done|addressed|applied)\b", re.IGNORECASE)


def _table_row(cells: list[str], header: list[str]) -> tuple[str, str] | None:
    """(title, body) of a table's row: the cells under the header's issue and description columns ("| Issue | Location
    | Description |"), else its first cell that names something and its last that describes (4 words or more); None
    for a row its status column marks fixed ("| ... | Already fixed |", "✅")."""
    named = dict(zip(header, cells, strict=False)) if len(header) == len(cells) else {}
    title = next((cell for column, cell in named.items() if _TITLE_COLUMN_RE.search(column)), "")
    body = next((cell for column, cell in named.items() if _BODY_COLUMN_RE.search(column) and cell != title), "")
    if any(_STATUS_COLUMN_RE.search(column) and _FIXED_CELL_RE.search(cell) for column, cell in named.items()):
        return None
    if title:
        return title, body
    kept = [cell for cell in cells if cell and not _CELL_NUMBER_RE.match(cell.strip("*"))]
    if not kept:
        return None
    return kept[0], kept[-1] if len(kept) > 1 and len(kept[-1].split()) >= _WORDS_OF_BODY else ""


def _numbers(text: str) -> set[int]:
    """The numbers a reply picks: "3", "fix issue 1", "1-4", "6,7,8,10"."""
    found: set[int] = set()
    for first, last in _PICK_RE.findall(text):
        found |= set(range(int(first), int(last or first) + 1)) if int(last or first) - int(first) < 20 else set()
    return found


def _settled(text: str) -> bool:
    """A report of findings fixed ("## ✅ All Critical Issues Fixed"), not a review."""
    return "#" in text and any(_SETTLED_FINDINGS_RE.search(h) for h in _HEADING_LINE_RE.findall(text))


def _code_names(text: str) -> set[str]:
    return {name.strip("()").removesuffix("()") for name in _CODE_NAME_RE.findall(text) + _BARE_NAME_RE.findall(text)
            if _CODE_LIKE_RE.search(name)}


def named_code(text: str) -> set[str]:
    """The code a sentence is about: the names it gives (`findSessionIndex`), else the files (`common.go`), by their
    base name: a file edited for another reason touches no other name in it."""
    names = _code_names(text)
    return {n for n in names if not _FILE_NAME_RE.search(n)} or \
        {_FILE_NAME_RE.sub(lambda m: m.group(0).split(":")[0], n).rsplit("/", 1)[-1] for n in names}


def _finding_thread(title: str, body: str) -> str:
    """"Not fixed (review): <its title>", with the first sentence of its body when the title names little, and the
    review's own verdict on it ("(review: low; not blocking, worth thinking about)"): a reader weighs it by that."""
    plain = _plain_title(title)
    said = plain
    if len(plain.split()) < 8 and body:
        # a question after the review ("Would you like me to ...?") is put to the user, not the finding's body
        first = [s for s in sentences(_LOCATION_RE.sub("", body.lstrip("-* "))) if not s.text.endswith("?")]
        if first:
            said = f"{plain}: {first[0].text}"
    return f"{NOT_FIXED} {clause(said, 20)}{_verdict(title, body)}"


_SEVERITY_RE = re.compile(r"\s*\((high|medium|low|minor|major|critical|p\d)[^)]*\)\s*$", re.IGNORECASE)
# What a reviewer says a finding weighs, in its body: "Not blocking", "This is an acceptable tradeoff, but worth a
# comment", "Minor inefficiency"; in its words, a blocking verdict in the words a reader knows it by
_NOT_BLOCKING_RE = re.compile(r"\b(?:not (?:a )?block(?:er|ing)|non-blocking|(?:do(?:es)?n't|do(?:es)? not) block)\b",
                              re.IGNORECASE)
_VERDICT_RE = re.compile(r"\b(?<!not )acceptable(?: trade-?offs?)?\b|\bworth (?:documenting|a comment|thinking about|"
                         r"considering|keeping an eye on|watching)\b|(?:^|[.;]\s)\s*+(minor)\b", re.IGNORECASE)


def _verdict(title: str, body: str) -> str:
    """" (review: low; not blocking, worth thinking about)": the severity the finding's title gives (else "minor" its
    body opens a sentence with) and the verdicts its body says, one "worth ..." each; "" for none (a finding the
    review only lists is weighed by the reader)."""
    severity = _SEVERITY_RE.search(title.replace("**", "").strip(" :"))
    level = severity.group(1).lower() if severity else ""
    words = ["not blocking"] if _NOT_BLOCKING_RE.search(body) else []
    for match in _VERDICT_RE.finditer(body):
        word = (match.group(1) or match.group(0)).lower()
        if word == "minor":
            level = level or word
        elif not any(said.split()[0] == word.split()[0] for said in words):
            words.append(word)
    said = "; ".join(filter(None, [level, ", ".join(words)]))
    return f" (review: {said})" if said else ""


def _plain_title(title: str) -> str:
    return _SEVERITY_RE.sub("", title.replace("**", "")).strip(" :")


def findings_left(events: list[Event]) -> list[str]:
    """The findings of the agent's last review (a message listing issues, findings or suggestions under a heading)
    that the user did not take up and no later edit touched: none of the code names it gives (`findSessionIndex`,
    `common.go`) is in a later edit. Findings it calls no issue, and those about code its own turn edited before it
    (a report of issues met and fixed), are left out."""
    at, listed, settled = -1, [], -1
    for index, event in enumerate(events):
        if event.kind != "assistant" or "#" not in event.text:
            continue
        if _settled(event.text):
            settled = index
        elif found := _findings(event.text):
            at, listed = index, found
    if at < 0 or settled > at:  # a later report says the findings were fixed
        return []
    reply = _next_prompt(events, at)
    if reply is not None and (YES_RE.match(reply.text.strip()) or _ALL_RE.search(reply.text)):
        return []
    # with no edit after the review, nothing was said before one: the slice below is empty
    last_edit = _last_edit(events, at)
    # what the edits changed, and what the agent said before one of them (a whole file rewritten is cut short)
    edited = " ".join([edited_after(events, at), *(e.text for e in events[at + 1:last_edit] if e.kind == "assistant")])
    asked = [e.text for e in events[at + 1:] if e.kind == "user"]
    taken = {n for text in asked if len(text.split()) <= _SHORT_REPLY for n in _numbers(text)}
    prompt = last_prompt_index(events[:at])
    before = " ".join(str(e.tool.input.get(key, "")) for e in events[prompt + 1:at] if e.tool is not None
                      and e.tool.name in WRITE_TOOLS and not e.tool.is_error for key in ("old_string", "new_string"))
    issues, took, left = 0, 0, []  # findings that are issues, how many the user took up, those left untouched
    for position, (numbered, body) in enumerate(listed, 1):
        number = _NUMBER_RE.match(numbered)
        title = _NUMBER_RE.sub("", numbered)
        if _NO_ISSUE_RE.search(f"{title} {body}"):
            continue
        issues += 1
        # the user took it up: by its number ("fix issue 1", "6,7,8,10") or in words ("add warnings for the agent
        # resolution" for "... silently skips sessions on agent resolution failure")
        if (int(number.group(1)) if number else position) in taken or any(
                len(content_words(title) & content_words(text)) >= 2 for text in asked):
            took += 1
            continue
        named = named_code(title) or named_code(body)  # what the title names is what the finding is about
        if any(name in edited or name in before for name in named) or (not named and last_edit > at):
            continue
        left.append((title, body))
    # how many findings the user took up that an edit followed: what "most" leaves out
    fixed = took if last_edit > at else 0
    return _findings_threads(events[at].text, left, issues, issues - took, fixed)


_PRIORITY_RE = re.compile(r"\b(p\d)\b", re.IGNORECASE)
_TITLE_END_RE = re.compile(r"\s(?:-|—|–)\s|: ")
_MANY_FINDINGS = 3  # more findings left of one priority than this read as one thread


def _findings_threads(review: str, left: list[tuple[str, str]], issues: int, not_taken: int,
                      fixed: int) -> list[str]:
    """One thread per finding left; one line for many of one priority, as a reader says it ("Not fixed (review):
    most P2 findings (2 of 12 fixed), e.g. Large Repo DoS, ..."): "most" when the user took up fewer than half of
    its issues; `fixed`: how many of them the user took up and an edit followed, so that "most" is counted."""
    threads = list(dict.fromkeys(_finding_thread(title, body) for title, body in left))
    priority = {p.upper() for h in _HEADING_LINE_RE.findall(review) if _FINDINGS_HEADING_RE.match(f"## {h}")
                for p in _PRIORITY_RE.findall(h)}
    if len(threads) <= _MANY_FINDINGS or len(priority) != 1:
        return threads[:MAX_FINDINGS]
    share = "most" if not_taken * 2 > issues else f"{len(left)} of {issues}"
    titles = ", ".join(_TITLE_END_RE.split(_plain_title(title), 1)[0] for title, _ in left[:3])
    done = f" ({fixed} of {issues} fixed)" if fixed else ""
    return [f"{NOT_FIXED} {share} {priority.pop()} findings{done}, e.g. {titles}"]



_CODE_FENCE_RE = re.compile(r"```.*?(?:```|$)", re.DOTALL)


# "PR#68 looks good to merge.", "No blocking issues found - PR is safe to merge.", "Ready to merge when you are."
MERGE_VERDICT_RE = re.compile(r"\b((?:good|safe|ready|fine|clear|ok(?:ay)?) to merge|ready for merg(?:e|ing))\b",
                               re.IGNORECASE)
# "not ready to merge", "once CI passes it is safe to merge": a verdict held back, no step handed over
_MERGE_VERDICT_HELD_RE = re.compile(r"\b(?:not|n't|once|before|after|until|unless|if|when(?! you))\b", re.IGNORECASE)
# the spaces around a "#" read once (possessive): linear on a long run, the same numbers
_PR_NUMBER_RE = re.compile(r"\b(?:PR|pull request)\s*+(?:#\s*+)?(\d+)\b|/pull/(\d+)\b|\bgh pr \w+ (\d+)\b",
                           re.IGNORECASE)
# each "git" read up to the next or to a "merge" on its line, possessively: linear on a long command, the same commands
_MERGE_RAN_RE = re.compile(r"\bgh\s+pr\s+merge\b|\bgit\b(?:(?!\b(?:git|merge)\b).)*+\bmerge\b")
_SWITCHED_RE = re.compile(r"Switched to (?:a new )?branch '([^']+)'")


def pr_number(texts: Iterable[str]) -> str | None:
    """The number of the first pull request the texts name ("PR #68", ".../pull/68", `gh pr view 68`); None for none."""
    return next((next(g for g in m.groups() if g) for text in texts if (m := _PR_NUMBER_RE.search(text))), None)


def merge_left(events: list[Event]) -> list[str]:
    """A pull request the agent called good to merge ("PR#68 looks good to merge.") that the session did not merge:
    no merge ran, the user did not say it was merged, and no edit came after the verdict (it holds for the work
    left). The PR is the one the verdict's message names, else the last one a command or prompt before it named."""
    for index in range(len(events) - 1, -1, -1):
        event = events[index]
        if event.kind != "assistant" or not event.text:
            continue
        verdict = next((m for s in sentences(event.text) if (m := MERGE_VERDICT_RE.search(s.text))
                        and not _MERGE_VERDICT_HELD_RE.search(s.text[:m.start()])), None)
        if verdict is None:
            continue
        later = events[index + 1:]
        if any(e.tool is not None and not e.tool.is_error and (e.tool.name in WRITE_TOOLS or (
                e.tool.name == "Bash" and _MERGE_RAN_RE.search(str(e.tool.input.get("command", ""))))) for e in later) \
                or any(e.kind == "user" and re.search(r"\bmerged\b", e.text, re.IGNORECASE) for e in later):
            return []
        said = [event.text] + [str(e.tool.input.get("command", "")) if e.tool is not None else e.text
                               for e in reversed(events[:index]) if e.kind == "user" or (
                                   e.tool is not None and e.tool.name == "Bash")]
        number = pr_number(said)
        if number is None:
            return []
        # the PR's branch the session checked out: the repository is left on it
        branch = next((m.group(1) for e in events[:index] if e.tool is not None and e.tool.name == "Bash"
                       and re.search(rf"\bgh pr checkout {number}\b", str(e.tool.input.get("command", "")))
                       and (m := _SWITCHED_RE.search(e.tool.output))), "")
        where = f", checked out as `{branch}`" if branch else ""
        return [f"{MERGE_LEFT} PR #{number}{where} ({verdict.group(1).lower()}); merging is left to the user"]
    return []


# "You can rebuild and test with the Gemini test repo now.", "Run `./entire status` to test it sends events": a check
# the agent hands to the person (a closing "now" tried from its run of spaces' start only: linear on a long run)
CHECK_HANDED_RE = re.compile(r"^(?:(?:now|then|so|next),?\s+)?you (?:can|could|may want to|might want to|should)"
                             r"(?: now| also| then)? "
                             r"((?:re-?build|test|try|run|restart|reload|open|deploy|re-?install)\b.*?)"
                             r"(?:(?<!\s)\s++now)?[.!]?$|"
                             r"^((?:open|run|restart|reload|rebuild|try|test|push) (?:`[^`]*`|[^.`]){0,80}\bto "
                             r"(?:test|verify|check|see|confirm)\b.*?)[.!]?$", re.IGNORECASE)
# A reply that reports what the person saw, or hands the check back to the agent ("run it", "yes")
_CHECK_REPORTED_RE = re.compile(r"\b(?:works?|worked|working|it does|i see|i saw|i get|i got|errors?|fails?|failed|"
                                r"still|broken|tested|tried|run it|do it|go ahead|ok(?:ay)?)\b|^" + YES_WORDS + r"\b",
                                re.IGNORECASE)


def checks_left_to_user(events: list[Event]) -> list[str]:
    """Checks the agent handed to the person in a report before the last one ("You can rebuild and test with the
    Gemini test repo now.") that the reply passed over: it neither reports what the person saw, nor asks the agent to
    run it, nor takes up the check's subject ("Run `./entire status` to test it sends events to PostHog." -> "the
    command string sent to posthog only ..."), and no later command ran what the check names. The closing's own are
    read with it."""
    found: list[str] = []
    for index, event in enumerate(events):
        if event.kind != "assistant" or not event.text:
            continue
        reply = _next_prompt(events, index)
        if reply is None or _CHECK_REPORTED_RE.search(reply.text):
            continue
        ran = " ".join(commands_after(events, index))
        for said in sentences(event.text):
            handed = CHECK_HANDED_RE.search(said.text)
            step = next((group for group in handed.groups() if group), None) if handed is not None else None
            if step is None or any(name in ran for name in re.findall(r"`([^`]+)`", step)) or \
                    len(content_words(said.text) & content_words(reply.text)) >= 2:
                continue
            found.append(f"{NOT_RUN} {clause(step, 14)} (left to the user)")
    return list(dict.fromkeys(found))


# "The review has been written to `/repo/docs/requirements/x/review-01.md`.": what a reviewer subagent leaves behind
_REVIEW_FILE_RE = re.compile(r"\breview (?:has been |was )?(?:written|saved) to:?\**\s*`([^`\s]+)`", re.IGNORECASE)
_ADD_ALL_RE = re.compile(r"\bgit\s+add\s+(?:-A\b|--all\b|\.(?:\s|$))")


def review_files_left(events: list[Event], cwd: str) -> list[str]:
    """"Review file left in the repo: `review-01.md`, written by the reviewer subagent": the file a subagent's answer
    says its review was written to, inside the session's folder, when no later command names it (committed, moved,
    removed) or adds every file."""
    root = cwd.rstrip("/") + "/"
    found = []
    for index, event in enumerate(events):
        call = event.tool
        if call is None or call.name not in SUBAGENT_TOOLS or call.is_error:
            continue
        later = commands_after(events, index)
        for path in _REVIEW_FILE_RE.findall(call.result):
            name = path.rsplit("/", 1)[-1]
            if cwd and path.startswith(root) and not any(name in c or _ADD_ALL_RE.search(c) for c in later):
                found.append(f"{REVIEW_FILE_LEFT} `{path.removeprefix(root)}`, written by the reviewer "
                             "subagent")
    return list(dict.fromkeys(found))

