"""The change lines of a session's reports: the list an edit turn's last message gives of what it changed ("`a.go`:
Added ..."), one line a file, said up to its reason; What Happened's main lines, the files edited most first."""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Collection

from eywa.core.extract.backed import Backing
from eywa.core.extract.claude_words import DONE_REASON_RE, LINE_NOTE_RE, OUTCOME_VERBS, Sentence, outcome, sentences
from eywa.core.extract.key_files import TEST_FILE_RE
from eywa.core.retrieval.query_tokens import content_words
from eywa.core.session import Session

# "Package renamed: `summarise` → `summarize`": a heading-like lead that says a change by its code, no verb opening it
_LABELLED_CHANGE_RE = re.compile(r"^[A-Z][\w-]*(?: [\w-]+){0,2} ([a-z]+):\s+(?=.*`)(.+)$")
# "... call to `EnsureSetup()` so both strategies create the branch at enable time": what the change brings about, left
# out with its reason (`DONE_REASON_RE`); Insights reads no reason in it: as often a consequence as a purpose
_SO_RE = re.compile(r"(?<=\S)\s+so (?:it|they|the|both|that|we)\b", re.IGNORECASE)
# "### Tests", "Verification", "Next Steps", "Remaining `[:7]` usages": what the tests check or what is left, no change
_NOT_CHANGES_RE = re.compile(r"\btests?\b|\btesting\b|\bverif|\bnext steps?\b|\bremaining\b|\bleft as-is\b|"
                             r"\byou(?:'ll)? need\b|\bmanual\b", re.IGNORECASE)
_STATUS_RE = re.compile(r"\b(?:committed|pushed|tests? pass|lint)", re.IGNORECASE)
# "Both locations have been updated", "Updated it to check for ...": what it was done to, only the session says
_VAGUE_RE = re.compile(r"^(?:(?:both|all|it|this|that|these|they|everything)\b|[a-z]+ (?:it|them|this|that|both)\b)",
                       re.IGNORECASE)
_PATH_RE = re.compile(r"[\w.-]+(?:/[\w.-]+)*\.\w+")
# "`a.sh` and `b.sh` - Fixed ...", "detached.go:146 - Added ...", "Copilot on `state.go:35` — Added ...": a list
# line's lead before its dash, longer than the label `outcome` reads; "`x.js` - Now uses ...": the lead is the subject
_LEAD_RE = re.compile(r"^(?P<lead>[^\n]{1,120}?)\s[-—–]\s+(?P<rest>\S.*)$")
_NOW_RE = re.compile(r"^now\s+(?:also\s+)?[a-z]+s\b", re.IGNORECASE)
# "Sidechain messages lacked their CSS class - Fixed by changing the attribute access": the lead is the fault, the
# rest a change only when it names the code
_HOW_RE = re.compile(r"^[a-z]+ed (?:by|to)\b", re.IGNORECASE)
# "Fixed by adding a check for ...": how, with no word of what it fixed (a reader needs the fault it follows)
_HOW_ONLY_RE = re.compile(r"^[A-Z][a-z]+ed by [a-z]+ing\b")
MIN_WORDS = 3  # of a change: "Added symlink check"
CUT_WORDS = 5  # left before a reason to cut it at, of them CUT_CONTENT not common words: "The tests have been updated"
CUT_CONTENT = 3  # says less than the whole line


def _led(led: re.Match[str]) -> str | None:
    """A list line's change after a lead (`led`: its `_LEAD_RE` match) `outcome`'s label does not take, None when it
    says none."""
    rest = led.group("rest")
    if _HOW_RE.match(rest) and "`" not in rest:
        return None
    return f"{led.group('lead')} {rest[0].lower()}{rest[1:]}" if _NOW_RE.match(rest) else outcome(rest)


def _changed(text: str, led: re.Match[str] | None) -> str | None:
    """The line as a change, up to its reason (`led`: a list line's lead, when it has one); None when it says no
    change."""
    said = outcome(text) or (_led(led) if led else None)
    if said is None:
        labelled = _LABELLED_CHANGE_RE.match(text)
        said = text if labelled and labelled.group(1) in OUTCOME_VERBS else None
    if said is None or _STATUS_RE.search(said) or _VAGUE_RE.match(said) or _HOW_ONLY_RE.match(said):
        return None
    said = LINE_NOTE_RE.sub("", said)
    reason = min((m.start() for m in (DONE_REASON_RE.search(said), _SO_RE.search(said)) if m), default=None)
    cut = said[:reason].rstrip(" ,;:-—–(") if reason is not None else said
    cut = (cut if len(cut.split()) >= CUT_WORDS and len(content_words(cut)) >= CUT_CONTENT else said).rstrip(".")
    return cut if len(cut.split()) >= MIN_WORDS else None


def _file_of(texts: Collection[str], edited: dict[str, str]) -> str:
    """The edited file the first of `texts` naming one names ("`strategy/common.go`: Added ..."), else ""."""
    for text in texts:
        for name in _PATH_RE.findall(text):
            path = edited.get(name) or edited.get(name.rsplit("/", 1)[-1])
            if path and path.endswith(name):
                return path
    return ""


def _lines(found: tuple[Sentence, ...], edited: dict[str, str], unbacked: Callable[[list[str]], bool]) -> \
        list[tuple[bool, str, str]]:
    """(listed, file, change) of each change line of one report, in its order; not a list item whose lead names
    files the session had not changed by then (`unbacked`: `Backing.unbacked_files` of the report)."""
    lines: list[tuple[bool, str, str]] = []
    lead = ""  # the last line leading into a list ("`geminicli/hooks.go` - Three functions fixed:")
    for sentence in found:
        text = sentence.text
        if not sentence.listed or text.endswith(":"):
            lead = text
        if _NOT_CHANGES_RE.search(f"{sentence.heading} {lead if sentence.listed else ''}"):
            continue
        led = _LEAD_RE.match(text) if sentence.listed else None
        change = _changed(text, led)
        if change and led and unbacked(_PATH_RE.findall(led.group("lead"))):
            continue
        if change:
            lines.append((sentence.listed, _file_of((text, lead if sentence.listed else "", sentence.heading), edited),
                          change))
    return lines


def _said_by_another(order: int, lowered: list[str]) -> bool:
    """Whether another line of the report (`lowered`: its lines lower-cased) says line `order` again (an earlier one)
    or says it and more: "Updated ldflags path" of two files, "Updated ldflags path to `cli/buildinfo.Version`" of a
    third: one line for them."""
    said = lowered[order]
    return any(other == said and at < order or other.startswith(said + " ")
               for at, other in enumerate(lowered) if at != order)


def report_changes(session: Session, reports: Collection[int], changes: Collection[tuple[str, bool]],
                   backing: Backing) -> list[list[tuple[int, str]]]:
    """The change lines of each report (`reports`: event indexes, in order) that says a change: one line a file (the
    first said; a line naming none is its own): a line outside the list first, then the files with the most edits,
    test files last."""
    volume = Counter(path for path, _ in changes)
    edited = {name: path for path in volume for name in (path, path.rsplit("/", 1)[-1])}
    seen: set[str] = set()
    result: list[list[tuple[int, str]]] = []
    for index in reports:
        lines = _lines(sentences(session.events[index].text), edited,
                       functools.partial(backing.unbacked_files, index, changed=volume))
        kept: list[tuple[bool, int, str, str]] = []
        lowered = [text.lower() for _, _, text in lines]
        for order, (listed, path, text) in enumerate(lines):
            if _said_by_another(order, lowered):
                continue
            if path not in seen or not path:
                seen.add(path)
                kept.append((listed, order, path, text))
        # a line outside the list sums it up ("Implemented the Phase 2B hooks"): first; tests: the tests' line says them
        kept.sort(key=lambda k: (k[0], bool(TEST_FILE_RE.search(k[2])), -volume[k[2]], k[1]))
        if kept:
            result.append([(index, text) for _, _, _, text in kept])
    return result
