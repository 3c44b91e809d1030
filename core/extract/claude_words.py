"""What Claude said it did, read from its own messages: the sentences of its prose (code blocks, tables
and markup left out) and the outcomes among them ("Added ...", "Fixed ...", "Found ..."); its decisions
and root causes are read in core/extract/insights.py. Plain regular expressions over a few messages:
the extractor runs on every ingest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from eywa.core.retrieval.query_tokens import STOPWORDS

_CODE_BLOCK_RE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_LIST_MARK_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_HEADING_RE = re.compile(r"^\s*#{1,6}\s+(.*)$")
# (not after "e.g.", "i.e.", "vs.", "cf.", which never end one: "(e.g. `Z`)")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])(?<![ (][eE]\.g\.)(?<![ (][iI]\.e\.)(?<![ (][vV]s\.)(?<![ (][cC]f\.)\s+"
                              r"(?=[A-Z`*\"'(\[])")
_SPACES_RE = re.compile(r"\s+")
_LINK_RE = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_EMOJI_RE = re.compile(r"[\u2600-\u27bf\U0001f300-\U0001faff\ufe0f]")
# "*Next:* add backoff": single-star emphasis, not a glob (`*.go`) nor a product (`a*b`)
_ITALIC_RE = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=\S)\*(?![\w*])")

# A past-tense verb opening a sentence: what was done. "Verified"/"Tested" say only that checks ran.
OUTCOME_VERBS = frozenset("""
added fixed changed updated created replaced removed renamed moved implemented refactored increased
decreased switched migrated converted extracted consolidated restored reverted wrote rewrote deleted
simplified merged committed pushed opened installed configured enabled disabled resolved addressed
documented clarified introduced split dropped bumped upgraded downgraded generated applied restructured
reduced improved exposed wired cleaned populated found identified traced tracked modernized modernised
defined built made set rebased squashed cherry-picked published released adjusted corrected unified
deduplicated skipped excluded ignored guarded handled inlined exported imported registered scoped
reworked patched rewritten cached profiled hardened tightened reorganized reorganised streamlined ported optimized
optimised pinned extended tuned parallelized memoized normalized normalised validated sanitized
""".split())
_OPENING_RE = re.compile(
    r"^(?:(?:done|fixed|perfect|great|excellent|all set|good|ok|okay)[.!:,]\s+)?"
    r"(?:(?:so|now|also|and)\s+)?(?:i(?:'ve| have)?\s+)?(?:also\s+|now\s+|successfully\s+|just\s+)?"
    r"([a-z-]+)\b", re.IGNORECASE)
_NOW_RE = re.compile(r"^(?:now\s+)?(?:`[^`]+`|the \w+|it|this|that|both|all \w+)(?:\s+\S+){0,4}\s+now\s+"
                     r"(?:uses?|returns?|shows?|honou?rs?|writes?|reads?|handles?|includes?|skips?|combines?|"
                     r"checks?|follows?|creates?|clarifies|documents?|supports?|respects?|keeps?)\b", re.IGNORECASE)
# "`phase_test.go` — Changed ...", "**Fix**: Added ...": a label before the outcome of a report's line.
_LABEL_RE = re.compile(r"^(?:`[^`]{1,80}`|[\w./()#-]{1,60}(?: [\w./()#-]{1,30}){0,3})\s*(?:—|–|-|:)\s+")
_SIGNATURE_RE = re.compile(r"^Generated with (?:Claude Code|Codex|Gemini)", re.IGNORECASE)
# "`replace` - Just added", "Removed (not in the docs)": a verb that names nothing it was done to
_NO_OBJECT_RE = re.compile(r"^\s*(?:\([^)]*\)\s*)?[.!,;:]*$")
_DONE_RE = re.compile(r"^(?:done|fixed|perfect|great)\s*[-—–:.!]\s*", re.IGNORECASE)
# "Added imports for `log/slog` and `logging` package", "Added `"strings"` import - Required for ...": a part of the
# change made, never the change; its words up to a reason's dash, code spans out
_IMPORT_OUTCOME_RE = re.compile(r"`[^`]*`|\s[-—–:(].*")
_IMPORT_WORDS = frozenset("the a an unused missing needed new required import imports statement statements for of and "
                          "package packages".split())
_PASSIVE_RE = re.compile(r"^(?:the |this |that |these |both |all )?(?:\S+\s+){0,5}?(?:has|have) been\s+([a-z-]+)\b",
                         re.IGNORECASE)
_GENERIC_HEADINGS = ("summary", "changes", "fix", "the fix", "files", "what ", "overview", "result", "details",
                     "verification", "test", "next", "key ", "benefits", "notes", "before", "after", "how ",
                     "why ", "root cause", "found", "task ", "step ", "phase ", "options", "problem", "issue",
                     "context", "approach", "status")

# "... with a 2-minute timeout matching `push_common.go`", "... since `CheckpointPath` expects ...": the reason a
# report gives for a change made (Insights says it; What Happened's change line stops before it). Not "so it ...",
# "so both ...": as often a consequence as a purpose (step 20 of bench/RESULTS.md)
DONE_REASON_RE = re.compile(r"\b(since|because|so that|to avoid|for consistency|matching|consistent with|similar to|"
                            r"in line with|mirroring|the same (?:way|pattern) as|separating|following|"
                            r"per (?:the|project|our|your|review|user|claude\.md|agents\.md)\b|"
                            r"for (?:better|improved|consistency|clarity|readability|simplicity|safety|"
                            r"(?:backwards? )?compatibility|performance|portability)|"
                            r"to (?:prevent|keep|match|satisfy|preserve|handle|support|ensure)|"
                            r"which (?:handles|means|lets|keeps|avoids|gives|prevents|ensures))\b", re.IGNORECASE)
# "(line 296)", "(lines 76, 144)", "(L38-39)", " at line 525": where the code stood when Claude said it; later edits
# move it, no use to a reader
LINE_NOTE_RE = re.compile(r" ?\((?:lines?|L) ?\d+(?: ?[-–,] ?\d+)*\)| at lines? \d+(?:[-–]\d+)?\b")


@dataclass(frozen=True)
class Sentence:
    text: str
    heading: str  # the markdown heading it sits under ("" when none)
    listed: bool = False  # an item of a list (a detail of a report, seldom its gist)
    nested: bool = False  # an item of a list inside another's item: a detail of that item


def _plain(text: str) -> str:
    if "](" in text:
        text = _LINK_RE.sub(r"\1", text)
    if not text.isascii():
        text = _EMOJI_RE.sub("", text)
    text = text.replace("**", "").replace("__", "")
    if "*" in text:
        text = _ITALIC_RE.sub(r"\1", text)
    return " ".join(text.split())


@lru_cache(maxsize=512)  # headline, outcomes, insights and threads read the same messages
def sentences(text: str) -> tuple[Sentence, ...]:
    """The prose sentences of one message in order: paragraphs and list items split into sentences,
    each with the heading above it; code blocks and tables left out."""
    if "```" in text:
        text = _CODE_BLOCK_RE.sub("\n", text)
    found: list[Sentence] = []
    heading = ""
    paragraph: list[str] = []

    def flush(listed: bool = False, nested: bool = False) -> None:
        if paragraph:
            for part in _SENTENCE_END_RE.split(_plain(" ".join(paragraph))):
                if part:
                    found.append(Sentence(part, heading, listed, nested))
            paragraph.clear()

    outer = -1  # the indent of the list's first item: an item indented further is nested in one above it
    for line in text.splitlines():
        stripped = line.strip()
        title = _HEADING_RE.match(stripped)
        if title:
            flush()
            heading, outer = _plain(title.group(1)).strip(" :"), -1
        elif not stripped or stripped.startswith(("|", ">")) or set(stripped) <= set("-=*_ "):
            flush()
        elif _LIST_MARK_RE.match(stripped):
            flush()
            indent = len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())
            outer = indent if outer < 0 else min(outer, indent)
            paragraph.append(_LIST_MARK_RE.sub("", stripped))
            flush(listed=True, nested=indent > outer)
        else:
            paragraph.append(stripped)
            outer = -1
    flush()
    return tuple(found)


# "The diagnostics now show only pre-existing lint suggestions": what the editor reports, not what was done
_EDITOR_RE = re.compile(r"^(?:the )?(?:lsp |ide )?diagnostics?\b", re.IGNORECASE)


@lru_cache(maxsize=4096)  # the gist, the headline, what happened and insights ask it of the same sentences
def outcome(sentence: str) -> str | None:
    """The sentence as an outcome ("Added the retry", "`Reset` now uses ...", "The parser has been
    fixed ..."), or None when it does not say what was done."""
    if sentence.endswith(("?", ":")) or len(sentence) < 12 or sentence.isupper() or (
            len(sentence) < 40 and FOUND_RE.search(sentence)) or _SIGNATURE_RE.match(sentence):
        return None  # "Found the issue": the cause comes next; "Generated with Claude Code": a PR body's signature
    # Substring tests first: each regex below needs its piece ("—" or ":", " now ", " been ").
    label = _LABEL_RE.match(sentence) if any(mark in sentence for mark in ("—", "–", " - ", ":")) else None
    for text in (sentence, sentence[label.end():]) if label else (sentence,):
        match = _OPENING_RE.match(text)
        if match and match.group(1).lower() in OUTCOME_VERBS and not _NO_OBJECT_RE.match(text[match.end(1):]) \
                and not _imports_only(text[match.end(1):]):
            rest = text[match.start(1):]
            return rest[:1].upper() + rest[1:]
    lowered = sentence.lower()
    if " now " not in lowered and " been " not in lowered:
        return None
    sentence = _DONE_RE.sub("", sentence)
    passive = _PASSIVE_RE.match(sentence) if " been " in lowered else None
    if (_NOW_RE.match(sentence) or (passive and passive.group(1).lower() in OUTCOME_VERBS)) \
            and not _EDITOR_RE.match(sentence):
        return sentence[:1].upper() + sentence[1:]
    return None


def _imports_only(done: str) -> bool:
    """Whether what an outcome's verb was `done` to is imports alone ("for `log/slog` and `logging` package")."""
    words = _IMPORT_OUTCOME_RE.sub(" ", done).lower().split()
    return bool({"import", "imports"} & set(words)) and set(words) <= _IMPORT_WORDS


# "For Gemini, the full transcript is now passed to the summarizer": a change said in the passive, its subject before
_NOW_PASSIVE_RE = re.compile(r"^(?:(?:for|in|on|with|when) [^,]{1,40},\s+)?(?P<subject>(?:\S+\s+){1,6}?)(?:is|are) now "
                             r"(?:being )?(?P<verb>[a-z]+(?:ed|en|wn))\b", re.IGNORECASE)
# "The `sessionid` import is now unused", "Both features are now committed": a state or a step, not the change made
_NOT_CHANGED = frozenset("unused used committed addressed resolved fixed done completed finished".split())
_SUBJECT_WORD_RE = re.compile(r"[A-Za-z_][\w.]{3,}")


def now_done(sentence: str, written: str) -> str | None:
    """A passive change ("X is now passed to Y") as an outcome, when a word of its subject ("transcript") or its
    opening ("For Gemini, ") names code the session wrote (`written`, lowercased)."""
    if " now " not in sentence or sentence.endswith(("?", ":")):
        return None
    said = _NOW_PASSIVE_RE.match(sentence)
    if not said or said.group("verb").lower() in _NOT_CHANGED:
        return None
    named = [w.lower() for w in _SUBJECT_WORD_RE.findall(sentence[:said.end("subject")])]
    return sentence[:1].upper() + sentence[1:] if any(w in written for w in named if w not in STOPWORDS) else None


def code_share(text: str) -> float:
    """The share of a text's characters inside backticks."""
    return sum(len(part) for part in text.split("`")[1::2]) / max(len(text), 1)


# "Summary: ...", "Done — ...": a label, then the heading's own words.
_LABELLED_RE = re.compile(r"^(\w+(?: \w+)?)\s*(?::|—|–| - )\s*(.+)$")
# "1. `setup.go` - Added ...", "Step 2: ...", "#3 ...": one part of a report, not its name.
_NUMBERED_RE = re.compile(r"^(?:#?\d+[.):]|(?:part|stage|item) \d+\b)", re.IGNORECASE)


def heading_name(heading: str) -> str | None:
    """The work a heading names: the heading itself ("AudioWorklet Migration Complete"), the words after
    a generic label ("Summary: Claude Code `-p` with WebSearch"); None for a generic heading ("Summary")
    or one part of a report ("1. `setup.go` - Added ...")."""
    label = _LABELLED_RE.match(heading)
    if label and label.group(1).lower().startswith(_GENERIC_HEADINGS):
        heading = label.group(2)
    if len(heading.split()) < 2 or heading.lower().startswith(_GENERIC_HEADINGS) or _NUMBERED_RE.match(heading):
        return None
    return heading


def headings(text: str) -> list[str]:
    """The markdown headings of one message, in order, as plain text."""
    if "#" not in text:
        return []
    if "```" in text:
        text = _CODE_BLOCK_RE.sub("\n", text)
    return [_plain(m.group(1)).strip(" :") for line in text.splitlines() if (m := _HEADING_RE.match(line.strip()))]


# "Now I understand the issue." / "Found it": the sentence after it states the cause.
FOUND_RE = re.compile(r"\b(?:found|see|understand|identified|spotted) (?:the|what the) (?:issues?|problems?|bugs?|"
                       r"root cause|culprit)\b|^(?:found it|there it is)\b", re.IGNORECASE)
