"""Candidate routing terms of a session, weighted by where they appear, for IDF-aware keywords.

A term is a lowercase word or a hyphen-joined run of two or three adjacent words. Where a word comes from sets
its weight: what the user asked, commit subjects and branch names say what the session was about;
assistant prose says it less reliably.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from operator import itemgetter

from eywa.core.extract.commands import HEREDOC_RE
from eywa.core.session import Session

_PART_RE = re.compile(r"[a-z][a-z0-9]{2,29}(?![a-z0-9])")
_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_HEXISH_RE = re.compile(r"(?=.*\d)[0-9a-f]{4,}")
# A word, or one character that ends a clause (pairs never span a clause): one scan finds both.
_TOKEN_RE = re.compile(_PART_RE.pattern + r"|[\n.!?;:,()\[\]{}]")
# A UUID's groups are often letters only ("beff"): the whole id goes before words are cut, with the date a session
# id opens with ("2026-01-22-0bdbfa06-..." left as "2026-01-22" reads as a date)
_UUID_RE = re.compile(r"\b(?:\d{4}-\d{2}-\d{2}-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
                      re.IGNORECASE)
# `t20` of a timestamp, `v12`, `x86`, and ids that alternate digits and letters twice (`xp8ai9`): fragments
_LETTER_DIGITS_RE = re.compile(r"[a-z]\d+|[a-z0-9]*\d[a-z]+\d[a-z0-9]*")
_URL_RE = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
# "/Users/dain/", "/home/cboos/", "~/": a home folder's path, which names a person
HOME_RE = re.compile(r"(?:/Users|/home)/[^/\s]+/|~/")
_COMMIT_RE = re.compile(
    r"""git\s+(?:-C\s+\S+\s+)?commit\b[^\n]*?\s-[a-zA-Z]*m\s*(?:"\$\(cat\s+<<-?\s*['"]?\w+['"]?\s*\n\s*([^\n]+)|"([^"]+)"|'([^']+)')""")
_PR_TITLE_RE = re.compile(r"""\bgh\s+pr\s+create\b[^\n]*?\s(?:--title|-t)[\s=]+(?:"([^"]+)"|'([^']+)')""")
MAX_SESSION_TERMS = 400  # distinct terms a session contributes to the document frequencies

# Words that never make a useful routing keyword, whatever their IDF: English function words and the
# everyday vocabulary of any coding session.
GENERIC = frozenset("""
a about above after again against all also am an and any are as at be because been before being below
between both but by can cannot could did do does doing done down during each else ever few for from
further get gets got had has have having he her here hers him his how i if in into is it its itself just
let like ll me more most my no nor not now of off on once only or other our ours out over own per please
re same she should so some such than that the their them then there these they this those through to
too under until up us use used using ve very via was we were what when where which while who whom why
will with would yes yet you your yours ok okay sure thanks thank hi hello great good nice right well
python code fix fixed fixes fixing file files function functions test tests testing tested error errors
update updated updates add added adding remove removed change changes changed run running make made new
old work working works need needs want wants look looking check checking see try trying now first last
next also still already thing things way one two three time lot bit something anything everything
new line lines issue issues problem problems implement implementation implemented method methods value
values data type types name names string strings list return returns true false null none nil default
let's i'll i'm it's don't doesn't isn't that's we're you're can't won't there's here's what's
doesn isn wasn didn aren couldn shouldn wouldn haven hasn weren don won hadn mustn needn
msg err ctx str args arg func var val tmp obj impl component components content field fields struct param
params text message messages
claude assistant user users session sessions tool tools command commands output input result results
help step steps plan task tasks note notes question questions answer example examples case cases
should must might may go going done sure see seems seem look looks find found show shows read write
create created creating call called calls set sets get getting got back full part parts point both
build builds run runs test pass passes passed failing fails failed fail bash go todo todos summary
currently current instead actually really already simply just also better best good well able
super maybe perhaps probably definitely totally pretty quite rather fair enough much many little big small
huge tiny bad nice fine awesome cool weird strange odd yeah yep nope think thought believe guess hope wonder
feel seem seems seemed wait hmm
""".split())
# Adverbs (`ideally`, `genuinely`) say how, never what: every -ly word but these nouns and adjectives.
_ADVERB_RE = re.compile(r"[a-z]{3,}ly")
_LY_WORDS = frozenset("""
apply reply supply assembly anomaly readonly nightly daily weekly monthly hourly yearly family poly italy july
early friendly belly jelly bully ally holy ugly rally
""".split())




def without_links(text: str) -> str:
    """Text without URLs and UUIDs: neither names what a session was about."""
    if "://" in text:  # the URL pattern is slow to rule out, and most texts hold no URL
        text = _URL_RE.sub(" ", text)
    if text.count("-") >= 4:  # as above: a UUID has four hyphens
        text = _UUID_RE.sub(" ", text)
    return text


def strip_noise(text: str) -> str:
    """Text without URLs, UUIDs and home-folder prefixes: none names what a session was about (and the home folder
    names a person; a line a person reads shows it as `~/`: marks.typed)."""
    return HOME_RE.sub("/", without_links(text))


def words_of(text: str) -> set[str]:
    """The words terms are made of (a term is one, or two or three joined by '-'), as `_terms` cuts them."""
    return set(_PART_RE.findall(_CAMEL_RE.sub(" ", text).lower()))


def _terms(text: str) -> Counter[str]:
    """Words, adjacent pairs (`gemini-rewind`) and triples (`max-chunk-size`) of a text without noise,
    with their counts.

    A word is lowercase, 3-30 characters, with camelCase and snake_case split into their parts;
    pairs and triples join distinct words of one clause.
    """
    lowered = _CAMEL_RE.sub(" ", text).lower()
    # Words and clause ends (the one-character tokens) in order; generic and hex-like words dropped
    # (a word without a digit is never hex-like: `isalpha` spares most words the regex), adverbs too.
    sequence = [t for t in _TOKEN_RE.findall(lowered)
                if len(t) == 1 or (t not in GENERIC and (
                    not (_HEXISH_RE.fullmatch(t) or _LETTER_DIGITS_RE.fullmatch(t)) if not t.isalpha()
                    else t[-2:] != "ly" or t in _LY_WORDS or not _ADVERB_RE.fullmatch(t)))]
    counts = Counter(t for t in sequence if len(t) > 1)
    counts.update(f"{a}-{b}" for a, b in zip(sequence, sequence[1:], strict=False)
                  if a != b and len(a) > 1 and len(b) > 1)
    counts.update(f"{a}-{b}-{c}" for a, b, c in zip(sequence, sequence[1:], sequence[2:], strict=False)
                  if len(a) > 1 and len(b) > 1 and len(c) > 1 and len({a, b, c}) == 3)
    return counts


def commits_in(command: str) -> list[str]:
    """Subjects of the `git commit -m` commands in one shell command line."""
    return [subject for match in _COMMIT_RE.finditer(command)
            if (subject := next((g for g in match.groups() if g), "").strip().splitlines()[0].strip())]


_COMMIT_START_RE = re.compile(r"\bgit\s+(?:-C\s+\S+\s+)?commit\b")
# Its end may be missing: a long command is stored cut.
_MESSAGE_RE = re.compile(r"""\s-[a-zA-Z]*m\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)')""")


def commit_bodies_in(command: str) -> list[str]:
    """The bodies (the lines after the subject) of the `git commit` messages in one shell command line: a heredoc's
    lines, or the `-m` paragraphs after the first."""
    found: list[str] = []
    starts = [m.start() for m in _COMMIT_START_RE.finditer(command)]
    for start, end in zip(starts, [*starts[1:], len(command)], strict=False):
        part = command[start:end]
        heredoc = HEREDOC_RE.search(part)
        if heredoc:
            body = heredoc.group("body").strip().split("\n", 1)[1:]
        else:
            messages = [next(g for g in m.groups() if g is not None) for m in _MESSAGE_RE.finditer(part)]
            body = [*messages[0].split("\n", 1)[1:], *messages[1:]] if messages else []
        text = "\n".join(body).strip()
        if text:
            found.append(text)
    return found


def pr_titles_in(command: str) -> list[str]:
    """Titles of the pull requests one shell command line opens (`gh pr create --title ...`)."""
    if "gh" not in command:
        return []
    return [title for match in _PR_TITLE_RE.finditer(command)
            if (title := next(g for g in match.groups() if g).strip())]


def _from_commands(session: Session, read: Callable[[str], list[str]]) -> list[str]:
    found: list[str] = []
    for call in session.tool_calls:
        command = call.input.get("command") if call.name == "Bash" else None
        if isinstance(command, str) and not call.is_error:
            found += [item for item in read(command) if item not in found]
    return found


def commit_subjects(session: Session) -> list[str]:
    """Subjects of the `git commit -m` commands the session ran."""
    return _from_commands(session, commits_in)


def commit_bodies(session: Session) -> list[str]:
    """Bodies of the `git commit` messages the session wrote (what the subject leaves out: often why)."""
    return _from_commands(session, commit_bodies_in)


def pr_titles(session: Session) -> list[str]:
    """Titles of the pull requests the session opened."""
    return _from_commands(session, pr_titles_in)


# `gh pr view 191`, `gh pr diff 181 --name-only`, `gh api repos/o/r/pulls/158/comments`: a pull request a command reads
_PR_READ_RE = re.compile(r"\bgh\s+pr\s+(?:view|diff|checkout|checks|review|comment)\s+(?:\S*/pull/)?#?(\d+)\b|"
                         r"\bgh\s+api\s+\S*/pulls/(\d+)\b")
MIN_PR_READS = 2  # one look at a pull request is a glance, not the session's work


def pr_worked_on(session: Session) -> str:
    """The number of the pull request the session read most (its review, its comments), "" for none."""
    reads = Counter(match.group(1) or match.group(2) for call in session.tool_calls if call.name == "Bash"
                    and not call.is_error and isinstance(command := call.input.get("command"), str) and "gh" in command
                    for match in _PR_READ_RE.finditer(command))
    number, count = next(iter(reads.most_common(1)), ("", 0))
    return number if count >= MIN_PR_READS else ""


def branch_words(branch: str) -> str:
    """`alex/fix-gemini-checkpointing` -> `fix gemini checkpointing` (the prefix names a person)."""
    name = branch.split("/", 1)[1] if "/" in branch else branch
    return name.replace("-", " ").replace("_", " ")


# The frame an agent puts around a compaction summary (Claude Code's preamble, reminders, section headings):
# the same words in every compacted session, never what one was about.
_SUMMARY_FRAME_RE = re.compile(
    r"This session is being continued from a previous conversation[^.]*\.|The summary below covers the earlier "
    r"portion of the conversation\.|<system-reminder>.*?</system-reminder>|^\s*(?:Summary|Analysis):|"
    r"^\s*\d+\.\s*(?:Primary Request(?: and Intent)?|Key Technical Concepts|Files and Code Sections|Errors and "
    r"[Ff]ixes|Problem Solving|All [Uu]ser [Mm]essages|Pending(?: Tasks)?|Current Work|Optional Next Step):",
    re.MULTILINE | re.DOTALL)


def summary_text(text: str) -> str:
    """A compaction summary without its frame."""
    return _SUMMARY_FRAME_RE.sub(" ", text)


def weighted_terms(session: Session) -> Counter[str]:
    """Term -> weight, summed over the places the term appears."""
    texts: dict[float, list[str]] = {}

    def add(text: str, weight: float) -> None:
        texts.setdefault(weight, []).append(text)

    for text in session.user_texts:
        add(text[:4000], 3.0)
    for subject in (*commit_subjects(session), *pr_titles(session)):
        add(subject, 48.0)  # what the session did, in its own words: outweighs a word said many times
    for branch in session.git_branches:
        if branch not in ("main", "master", "develop"):
            add(branch_words(branch), 4.0)
    for text in (*session.titles, *session.summaries):
        add(text, 4.0)
    for call in session.tool_calls:
        path = call.input.get("file_path")
        if isinstance(path, str) and call.name in ("Edit", "Write", "MultiEdit"):
            # The file's name: its folders (`cmd/entire/cli`) are shared by every session of a project.
            # Each edit adds it again, so a light weight keeps a file edited 30 times from crowding out the rest.
            add(path.rsplit("/", 1)[-1].rsplit(".", 1)[0].replace("_", " "), 1.0)
    for run in session.subagents:
        add(run.description or run.prompt[:300], 1.5)
    for event in session.events:
        if event.kind == "assistant":
            add(event.text[:3000], 0.5)
        elif event.kind == "compaction" and event.text:
            add(summary_text(event.text)[:3000], 1.0)
    weights: dict[str, float] = {}  # a Counter's += calls Python code for every new term
    get = weights.get
    for weight, group in texts.items():
        # One scan per weight: a newline ends a clause, a URL and a home folder, so joined texts give
        # the terms of each. Weights are multiples of 0.5, so count * weight equals the repeated sum.
        for term, count in _terms("\n".join(map(strip_noise, group))).items():
            weights[term] = get(term, 0) + count * weight
    return Counter(weights)


def top_terms(weights: Counter[str], limit: int = MAX_SESSION_TERMS) -> list[str]:
    """The heaviest terms, ties by name: sorted by name, then stably by weight (C-level keys only)."""
    ranked = sorted(weights.items())
    ranked.sort(key=itemgetter(1), reverse=True)  # reverse keeps equal weights in name order
    return [term for term, _ in ranked[:limit]]
