"""The gist of a session: of a few candidate headlines (the closing report's outcome, the leads of the last reports,
the first request), the one whose words recur most across the session's messages. The last report often names only
its last step ("Added `ValidateBranchName` ..."); the words the whole conversation keeps using name the work."""

from __future__ import annotations

import re
from collections import Counter

from eywa.core.archive.renderer import relative_path
from eywa.core.extract import commands
from eywa.core.extract.claude_words import OUTCOME_VERBS, heading_name, headings, outcome, sentences
from eywa.core.extract.marks import counted, stub_dropped
from eywa.core.session import WRITE_TOOLS, Session
from eywa.core.sources.comments import written

# Words that recur in any conversation (connectives, chat, generic verbs): no sign of what it is about.
_COMMON = frozenset("""
a an and the of to in on for with by from is are was be it its this that as at or into after before when so i you we
me my our your let now can could would should will do does did not no yes just also all any some if then there here
what which how why have has had been being were them they their these those than more most only one two sure ok okay
please thanks need want like see look check make use using used get got run
""".split())
_WORD_RE = re.compile(r"[a-z0-9]+")
LEADS_WEIGHED = 4  # the report leads weighed: the last ones, where the work is reported done
LENGTH_PRIOR = 4  # words added to a candidate's length: a longer headline needs more recurring words per word
MIN_WORDS = 3  # of a candidate after the first, words that are not common


def _words(text: str) -> set[str]:
    return {word for word in set(_WORD_RE.findall(text.lower())) - _COMMON if len(word) > 1}  # each word once


_LEAD_IN_WORDS = 6


# "The fix was updating `x_test.go` to match ...", "The fix adds `os.MkdirAll(...)` before ...": a report naming the fix
# it made ("The fix is to remove ..." proposes one; "The fix applies to ..." says where it holds)
_FIX_RE = re.compile(r"^the fix (?:was (?:to )?)?(?P<verb>[a-z]+) (?!(?:to|for|in|on|at|with|only)\b)(?P<rest>.{8,})$",
                     re.IGNORECASE)


def lead_in(text: str) -> str | None:
    """The sentence as an outcome, a report's lead-in to its list too ("The parser has been fixed to
    handle both formats:"): long enough to say what was done, its colon dropped, and a clause only its list ended
    ("... at `plan.md` that incorporates:"); a report naming its fix says what was done ("The fix was updating `x` to
    ..." -> "Update `x` to ...")."""
    if text.endswith(":") and len(text.split()) >= _LEAD_IN_WORDS:
        return outcome(stub_dropped(text.rstrip(":"), _LEAD_IN_WORDS))
    fix = _FIX_RE.match(text)
    if fix and (base := _base(_past(fix.group("verb")))):
        return f"{base.capitalize()} {fix.group('rest')}"
    return outcome(text)


def _past(verb: str) -> str:
    """The past tense a report would use for a verb said as "updating", "adds" or "remove" (for `_base`)."""
    verb = verb.lower()
    stem = verb[:-3] if verb.endswith("ing") else verb[:-1] if verb.endswith("s") else verb
    return next((past for past in (stem + "ed", stem + "d") if past in OUTCOME_VERBS), "")


# "Code Review Complete", "Findings Summary": a heading naming the kind of report, not what it was about; "Research
# Summary", "P2 Findings": a short one ending in it names a section or the document, not the work ("Address review"
# opens with the work it did)
REPORT_KIND_RE = re.compile(r"^(?:(?:code|pr|final|security|multi-agent|review|findings?|summary|synthesis|analysis|"
                            r"audit|investigation|report|results?|complete|completed|done)\b\s*)+[.!]?$|"
                            r"^(?!(?:address|fix|respond|reply|update|add|apply|handle|resolve|implement|run|write|"
                            r"create|prepare|perform|conduct|complete|finish|request|start)(?:e?s|e?d|ing)?\s)"
                            r"(?:\S+\s+){0,3}?(?:review|findings|summary|synthesis|analysis|audit|investigation|"
                            r"report)[.!]?$", re.IGNORECASE)


# "why can't we not just real booleans?", "No, keep ...", "Actually, ...": the person turns down what was just reported
_PUSHBACK_RE = re.compile(r"^(?:why (?:can't|cant|cannot|not|don't|dont|didn't|wouldn't|shouldn't)|no\b[,.!]?|nope|"
                          r"actually|instead|that's (?:not|wrong)|this is (?:not|wrong))\b", re.IGNORECASE)


def turned_down(session: Session) -> set[int]:
    """The indices of the last reports the person's next prompt turned down: what they said was done was replaced by
    what followed, so it names no work of the session. A "no" to a report's closing offer ("Want me to set ...?") turns
    down the offer, not what was done."""
    found: set[int] = set()
    last: int | None = None
    for at, event in enumerate(session.events):
        if event.kind == "assistant" and event.text.strip():
            last = None if event.text.rstrip().endswith("?") else at
        elif event.kind == "user" and event.text.strip():
            if last is not None and _PUSHBACK_RE.match(event.text.strip()):
                found.add(last)
            last = None
    return found


def report_leads(session: Session, declined: set[int]) -> list[str]:
    """Each report's lead, in order: a message's first outcome when it opens its prose (not a list's item), and its
    title when its first heading names work ("AudioWorklet Migration Complete"); none of a report turned down (the
    indices in `declined`: `turned_down`)."""
    found: list[str] = []
    for at, event in enumerate(session.events):
        if event.kind != "assistant" or not event.text or at in declined:
            continue
        first = next(((lead, s.listed) for s in sentences(event.text) if (lead := lead_in(s.text))), None)
        if first and not first[1]:
            found.append(first[0])
        title = next((name for heading in headings(event.text)[:1] if (name := heading_name(heading))), None)
        if title and not REPORT_KIND_RE.match(title):  # a report's title, not the name of one of its sections
            found.append(title)
    # "Found it - the comment is in ...", "What's Good in the Current README": a finding or an assessment, no work done
    return [lead for lead in found if lead and not lead.endswith("?") and asked(lead)
            and lead.split(None, 1)[0].lower() not in _FINDINGS]


# "What does `entire session show` do", "When I'm in a fork branch", "Check if the tests are duplicated": a question
# (asked outright or as a check) or a case, not the work asked for ("Update these tests?" asks for work: the request's
# "can you" is gone)
_NOT_ASKED_RE = re.compile(r"^(?:what|why|how|where|which|who|when|if|is|are|do|does|did|can|could|would|should|i "
                           r"(?:just|think|see|don't|noticed)|(?:check|see) (?:if|whether|what|how|why))\b",
                           re.IGNORECASE)


def asked(request: str) -> bool:
    """Whether a prompt's request asks for work (a candidate headline), not a question or a case."""
    return not _NOT_ASKED_RE.search(request)


# "I'm working on linear ENT-98", "Our git status has broken", "The comment on lines 212-213 is outdated": a prompt
# that states the case the work starts from; what the session made of it, its reports say
_STATEMENT_RE = re.compile(r"^(?:i'm|i am|i've|i have|we've|we have|we're|we are|our|my|there's|there is|there are|"
                           r"it's|it is|this is|the|these|that)\b", re.IGNORECASE)


def states(request: str) -> bool:
    """Whether a prompt's request states a case ("We've just done a big refactoring ...") rather than asks for work."""
    return _STATEMENT_RE.match(request) is not None


def gist(first: str, others: list[str], session: Session) -> str:
    """Of `first` (the closing outcome, "" for none) and `others`, the one whose words recur in most of the session's
    messages, per word; `first` among equals. Another needs `MIN_WORDS` words ("Fix these" says not what)."""
    texts = [event.text for event in session.events if event.kind in ("user", "assistant") and event.text]
    recurring = Counter(word for text in texts for word in _words(text))
    best, best_score = "", -1.0
    for rank, candidate in enumerate((first, *others)):
        words = _words(candidate)
        if not words or rank and len(words) < MIN_WORDS:
            continue
        score = sum(recurring[word] for word in words) / (len(words) + LENGTH_PRIOR)
        if score > best_score:
            best, best_score = candidate, score
    return best


# A report's past tense in the mood of a commit subject ("Removed the command" -> "Remove the command"): the base form
# of each verb a report opens with; a finding ("Found", "Identified", "Traced") is no change and keeps its words.
_FINDINGS = frozenset({"found", "identified", "traced", "tracked"})
_IRREGULAR = {"built": "build", "made": "make", "rewrote": "rewrite", "wrote": "write", "set": "set", "split": "split",
              "committed": "commit", "dropped": "drop", "skipped": "skip", "pinned": "pin", "rewritten": "rewrite"}
_E_VERBS = frozenset("""change configure consolidate create decrease deduplicate define delete disable downgrade enable
exclude expose generate handle ignore improve increase inline introduce merge migrate modernise modernize move populate
rebase reduce release remove rename replace resolve restore restructure scope update upgrade wire cache profile
reorganize reorganise streamline optimize optimise tune parallelize memoize normalize normalise validate
sanitize""".split())
_PASSIVE_RE = re.compile(r"^(?:(the|this|these|both|all) )?(?P<subject>(?:\S+ ){0,7}?\S+) (?:has|have) been "
                         r"(?:successfully )?(?P<verb>[a-z-]+)\b(?P<rest>.*)$", re.IGNORECASE)


def _base(verb: str) -> str | None:
    """The base form of a report's opening verb ("updated" -> "update"), None for any other word."""
    verb = verb.lower()
    if verb not in OUTCOME_VERBS or verb in _FINDINGS:
        return None
    if verb in _IRREGULAR:
        return _IRREGULAR[verb]
    if verb.endswith("ied"):
        return verb[:-3] + "y"
    return verb[:-1] if verb[:-1] in _E_VERBS else verb[:-2]


def commit_mood(headline: str) -> str:
    """The headline as a commit subject says it: "Added the retry" -> "Add the retry", "The docs have been updated to
    cover X" -> "Update the docs to cover X"; any other headline as it is."""
    first, _, rest = headline.partition(" ")
    if rest and (base := _base(first)):
        return f"{base.capitalize()} {rest}"
    passive = _PASSIVE_RE.match(headline)
    if passive and (base := _base(passive.group("verb"))):
        determiner = f"{passive.group(1).lower()} " if passive.group(1) else ""
        subject = passive.group("subject")
        if subject[:1].isupper() and subject.split(" ", 1)[0][1:].islower():  # "It", "Tests"; not "API", "`Foo`"
            subject = subject[0].lower() + subject[1:]
        return f"{base.capitalize()} {determiner}{subject}{passive.group('rest')}".rstrip(" !.")
    return headline


# "<<<<<<< HEAD", ">>>>>>> b6ff09d (Add ...)": a conflict's markers in the text an edit replaced
_CONFLICT_MARK_RE = re.compile(r"^(?:<{7}|>{7}) ", re.MULTILINE)
_CONFLICT_KINDS = ("rebase", "merge", "cherry-pick")  # the git step a conflict came from, when the session ran it
_FILES_NAMED = 2


def resolution(session: Session, changed: list[str]) -> str | None:
    """"Resolve rebase conflicts in `setup.go`": what a session did when each file it changed (`changed`, paths) had
    a conflict's markers edited out, whatever its prompt asked ("please take a look"); None for any other session."""
    resolved: list[str] = []  # the paths of the edits that took markers out, one per edit
    kind = ""
    for call in session.tool_calls:
        if call.is_error:
            continue
        if call.name == "Bash":
            kind = next((step.verb for step in commands.git_steps(str(call.input.get("command", "")))
                         if step.verb in _CONFLICT_KINDS), kind)
        elif call.name in WRITE_TOOLS and any(_CONFLICT_MARK_RE.search(old) for old, _ in written(call.input)):
            resolved.append(relative_path(call.path or "", session.cwd))
    if not changed or not set(changed) <= set(resolved):  # none changed: a scratch file's markers
        return None
    names = [f"`{path.rstrip('/').rsplit('/', 1)[-1]}`" for path in dict.fromkeys(changed)]
    plural = "s" if len(resolved) > 1 else ""
    return f"Resolve {kind + ' ' if kind else ''}conflict{plural} in {counted(names, _FILES_NAMED)}"
